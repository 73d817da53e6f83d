/** Bounds and defaults of the speech bridge; every field can be overridden per bridge. */
export interface SpeechLimits {
  /** Longest `text` of a synthesis request, in characters. */
  maxTextChars: number;
  /**
   * Bytes of answers (audio, recognition results) held for one caller that does not read them. The
   * service cannot be paused without stalling every other request of its instance (they share one
   * processAsync stream), so a call whose caller falls this far behind fails with SPEECH_CALLER_TOO_SLOW.
   */
  maxBufferedBytes: number;
  /** Synthesis output rate when `output_audio_spec.sample_rate_hertz` is absent or 0. */
  defaultSampleRateHertz: number;
  /** Synthesis chunk size when `output_audio_spec.chunk_size_kb` is absent or 0. */
  defaultChunkSizeKb: number;
  minSampleRateHertz: number;
  maxSampleRateHertz: number;
  maxChunkSizeKb: number;
  /** Rate assumed for recognition when the config's `sample_rate_hertz` is 0. */
  defaultRecognitionRateHertz: number;
}

export const DEFAULT_SPEECH_LIMITS: Readonly<SpeechLimits> = Object.freeze({
  maxTextChars: 10_000,
  // 16 MiB: about 8.7 minutes of 16 kHz audio, well beyond what a live player keeps ahead.
  maxBufferedBytes: 16 * 1024 * 1024,
  defaultSampleRateHertz: 16_000,
  defaultChunkSizeKb: 4,
  minSampleRateHertz: 8_000,
  maxSampleRateHertz: 48_000,
  maxChunkSizeKb: 1024,
  defaultRecognitionRateHertz: 16_000,
});
