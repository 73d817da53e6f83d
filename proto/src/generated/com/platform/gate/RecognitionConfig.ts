// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

// Original file: gate.proto

export const _com_platform_gate_RecognitionConfig_AudioEncoding = {
  AUDIO_ENCODING_UNSPECIFIED: 'AUDIO_ENCODING_UNSPECIFIED',
  LINEAR16_PCM: 'LINEAR16_PCM',
  OGG_OPUS: 'OGG_OPUS',
  MP3: 'MP3',
  MULAW: 'MULAW',
  ALAW: 'ALAW',
  FLAC: 'FLAC',
} as const;

export type _com_platform_gate_RecognitionConfig_AudioEncoding =
  | 'AUDIO_ENCODING_UNSPECIFIED'
  | 0
  | 'LINEAR16_PCM'
  | 1
  | 'OGG_OPUS'
  | 2
  | 'MP3'
  | 3
  | 'MULAW'
  | 4
  | 'ALAW'
  | 5
  | 'FLAC'
  | 6

export type _com_platform_gate_RecognitionConfig_AudioEncoding__Output = typeof _com_platform_gate_RecognitionConfig_AudioEncoding[keyof typeof _com_platform_gate_RecognitionConfig_AudioEncoding]

export interface RecognitionConfig {
  'audio_encoding'?: (_com_platform_gate_RecognitionConfig_AudioEncoding);
  'sample_rate_hertz'?: (number | string | Long);
  /**
   * BCP-47 code.
   */
  'language_code'?: (string);
  'enable_profanity_filter'?: (boolean);
  'model'?: (string);
  /**
   * Tentative results (final=false) only when true; streaming recognition only.
   */
  'enable_partial_results'?: (boolean);
  'enable_single_utterance'?: (boolean);
  /**
   * Long-running recognition only.
   */
  'audio_channel_count'?: (number | string | Long);
  /**
   * Switches off text normalization.
   */
  'enable_raw_results'?: (boolean);
  'enable_literature_text'?: (boolean);
  'enable_automatic_punctuation'?: (boolean);
  'provider_specific'?: (string);
}

export interface RecognitionConfig__Output {
  'audio_encoding'?: (_com_platform_gate_RecognitionConfig_AudioEncoding__Output);
  'sample_rate_hertz'?: (number);
  /**
   * BCP-47 code.
   */
  'language_code'?: (string);
  'enable_profanity_filter'?: (boolean);
  'model'?: (string);
  /**
   * Tentative results (final=false) only when true; streaming recognition only.
   */
  'enable_partial_results'?: (boolean);
  'enable_single_utterance'?: (boolean);
  /**
   * Long-running recognition only.
   */
  'audio_channel_count'?: (number);
  /**
   * Switches off text normalization.
   */
  'enable_raw_results'?: (boolean);
  'enable_literature_text'?: (boolean);
  'enable_automatic_punctuation'?: (boolean);
  'provider_specific'?: (string);
}
