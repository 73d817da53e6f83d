import { describe, expect, it } from 'vitest';
import { GatewayError, gatewayError } from '../../core/errors.js';
import { BoundedQueue } from '../../core/speech/bounded-queue.js';
import {
  asrResponseFromJson,
  decodeAsrResponse,
  decodeRecognitionConfig,
  decodeTtsRequest,
  encodeAsrResponse,
  encodeRecognitionConfig,
  encodeTtsRequest,
} from '../../proto/src/index.js';
import { DEFAULT_SPEECH_LIMITS } from '../../core/speech/limits.js';
import { checkRecognitionConfig } from '../../core/speech/recognition.js';
import { checkSynthesisRequest } from '../../core/speech/synthesis.js';
import { readWav, wavHeader, WavFormatError } from '../../core/speech/wav.js';
import { parseWavHeader } from '../../examples/tts-espeak/espeak.js';
import { LinearResampler } from '../../sdk/index.js';

const pcmOf = (samples: number[]) => {
  const b = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => b.writeInt16LE(s, i * 2));
  return b;
};
const samplesOf = (b: Buffer) => Array.from({ length: b.length / 2 }, (_, i) => b.readInt16LE(i * 2));

describe('speech payload codec', () => {
  it('round-trips TtsRequestProto, RecognitionConfig and AsrResponseProto in the proto-loader shape', () => {
    const tts = {
      text: 'hello',
      voice: 'en-us',
      output_audio_spec: { audio_encoding: 'LINEAR16_PCM' as const, sample_rate_hertz: 16000, chunk_size_kb: 4 },
    };
    expect(decodeTtsRequest(encodeTtsRequest(tts))).toEqual(tts);
    const config = {
      audio_encoding: 'LINEAR16_PCM' as const,
      sample_rate_hertz: 8000,
      enable_partial_results: true,
      provider_specific: '{"phrases":["a"]}',
    };
    expect(decodeRecognitionConfig(encodeRecognitionConfig(config))).toEqual(config);
    const asr = {
      chunks: [
        {
          alternatives: [
            {
              text: 'hi there',
              confidence: 0.5,
              words: [{ word: 'hi', start_time: { seconds: 1, nanos: 500_000_000 }, end_time: { seconds: 2 } }],
            },
          ],
          final: true,
          end_of_utterance: true,
        },
      ],
      final: true,
    };
    expect(decodeAsrResponse(encodeAsrResponse(asr))).toEqual(asr);
    expect(asrResponseFromJson(JSON.stringify(asr))).toEqual(asr);
  });

  it('refuses bytes and JSON that are not the message', () => {
    expect(() => decodeAsrResponse(Buffer.from([0x0a, 0xff, 0xff]))).toThrow();
    expect(() => asrResponseFromJson('{"chunks": "nope"}')).toThrow(/chunks/);
  });
});

describe('WAV framing', () => {
  it('writes a streaming header (unknown length) and a sized one that readWav reads back', () => {
    const streaming = wavHeader(24000);
    expect(streaming.length).toBe(44);
    expect(streaming.readUInt32LE(40)).toBe(0xffffffff);
    expect(streaming.readUInt32LE(24)).toBe(24000);
    const pcm = pcmOf([1, -2, 3, -4]);
    const file = Buffer.concat([wavHeader(16000, 1, pcm.length), pcm]);
    expect(readWav(file)).toEqual({ sampleRate: 16000, channels: 1, pcm });
    // A streamed WAV (size 0xFFFFFFFF) reads to the end of the file.
    expect(readWav(Buffer.concat([streaming, pcm])).pcm).toEqual(pcm);
    expect(parseWavHeader(file)).toEqual({ format: { sampleRate: 16000, channels: 1 }, dataOffset: 44 });
  });

  it('skips unknown chunks and mixes stereo down to mono', () => {
    const stereo = pcmOf([100, 300, -100, -300]);
    const header = wavHeader(8000, 2, stereo.length);
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc\0')]);
    const file = Buffer.concat([header.subarray(0, 36), list, header.subarray(36), stereo]);
    const audio = readWav(file);
    expect(audio).toMatchObject({ sampleRate: 8000, channels: 2 });
    expect(samplesOf(audio.pcm)).toEqual([200, -200]);
  });

  it('names what is wrong with a file it cannot read', () => {
    expect(() => readWav(Buffer.from('ID3 not a wav at all'))).toThrow(WavFormatError);
    const eightBit = wavHeader(8000);
    eightBit.writeUInt16LE(8, 34);
    expect(() => readWav(eightBit)).toThrow(/8-bit/);
    const float = wavHeader(8000);
    float.writeUInt16LE(3, 20);
    expect(() => readWav(float)).toThrow(/not PCM/);
  });
});

describe('LinearResampler', () => {
  it('gives the same samples whatever the piece sizes, odd byte counts included', () => {
    const input = pcmOf(Array.from({ length: 2205 }, (_, i) => Math.round(10000 * Math.sin(i / 7))));
    const whole = new LinearResampler(22050, 16000).push(input);
    const streamed = new LinearResampler(22050, 16000);
    const parts: Buffer[] = [];
    for (let i = 0; i < input.length; i += 333) parts.push(streamed.push(input.subarray(i, i + 333)));
    expect(Buffer.concat(parts).equals(whole)).toBe(true);
    // 0.1 s in, about 0.1 s out.
    expect(Math.abs(whole.length / 2 - 1600)).toBeLessThanOrEqual(2);
  });

  it('interpolates between samples and passes audio through at equal rates', () => {
    expect(samplesOf(new LinearResampler(1, 2).push(pcmOf([0, 100, 200])))).toEqual([0, 50, 100, 150]);
    expect(samplesOf(new LinearResampler(2, 1).push(pcmOf([0, 100, 200, 300, 400])))).toEqual([0, 200]);
    const same = pcmOf([5, 6, 7]);
    expect(new LinearResampler(16000, 16000).push(same)).toEqual(same);
  });
});

describe('speech request checks', () => {
  const limits = DEFAULT_SPEECH_LIMITS;
  const param = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return { code: (err as GatewayError).code, param: (err as GatewayError).param };
    }
    return undefined;
  };

  it('fills in the synthesis defaults and checks text, rate and chunk size', () => {
    expect(checkSynthesisRequest({ text: 'hi' }, limits)).toEqual({
      text: 'hi',
      output_audio_spec: { audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 16000, chunk_size_kb: 4 },
    });
    expect(param(() => checkSynthesisRequest(undefined, limits))).toEqual({ code: 'VALIDATION_FAILED', param: 'tts' });
    expect(param(() => checkSynthesisRequest({ text: '  ' }, limits))).toEqual({ code: 'VALIDATION_FAILED', param: 'tts.text' });
    expect(param(() => checkSynthesisRequest({ text: 'x'.repeat(limits.maxTextChars + 1) }, limits))).toEqual({
      code: 'PARAMETER_OUT_OF_RANGE',
      param: 'tts.text',
    });
    expect(param(() => checkSynthesisRequest({ text: 'x', output_audio_spec: { sample_rate_hertz: 100 } }, limits))).toEqual({
      code: 'PARAMETER_OUT_OF_RANGE',
      param: 'tts.output_audio_spec.sample_rate_hertz',
    });
    expect(param(() => checkSynthesisRequest({ text: 'x', output_audio_spec: { chunk_size_kb: 5000 } }, limits))).toEqual({
      code: 'PARAMETER_OUT_OF_RANGE',
      param: 'tts.output_audio_spec.chunk_size_kb',
    });
  });

  it('takes LINEAR16_PCM (or unspecified) mono audio for recognition', () => {
    expect(checkRecognitionConfig({}, limits)).toEqual({ audio_encoding: 'LINEAR16_PCM', sample_rate_hertz: 16000 });
    expect(param(() => checkRecognitionConfig({ audio_encoding: 'OGG_OPUS' }, limits))).toEqual({
      code: 'AUDIO_FORMAT_UNSUPPORTED',
      param: 'asr.config.audio_encoding',
    });
    expect(param(() => checkRecognitionConfig({ sample_rate_hertz: 96000 }, limits))).toEqual({
      code: 'PARAMETER_OUT_OF_RANGE',
      param: 'asr.config.sample_rate_hertz',
    });
    expect(param(() => checkRecognitionConfig({ audio_channel_count: 2 }, limits))).toEqual({
      code: 'AUDIO_FORMAT_UNSUPPORTED',
      param: 'asr.config.audio_channel_count',
    });
  });
});

describe('BoundedQueue', () => {
  it('reports when it holds more than its bound, and frees what is read', async () => {
    const queue = new BoundedQueue<string>(10);
    expect(queue.push('a', 6)).toBe(true);
    expect(queue.push('b', 6)).toBe(false);
    const it = queue[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe('a');
    expect(queue.bufferedBytes).toBe(6);
    queue.close();
    expect((await it.next()).value).toBe('b');
    expect((await it.next()).done).toBe(true);
  });

  it('delivers queued items before an error, or drops them when told to', async () => {
    const keep = new BoundedQueue<number>(100);
    keep.push(1, 1);
    keep.fail(gatewayError('INTERNAL_ERROR'));
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const n of keep) got.push(n);
      })(),
    ).rejects.toBeInstanceOf(GatewayError);
    expect(got).toEqual([1]);

    const drop = new BoundedQueue<number>(100);
    drop.push(1, 1);
    drop.fail(gatewayError('SPEECH_CALLER_TOO_SLOW', { args: { limit: 100 } }), true);
    expect(drop.failedSignal.aborted).toBe(true);
    await expect(drop[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'SPEECH_CALLER_TOO_SLOW', status: 408 });
  });
});
