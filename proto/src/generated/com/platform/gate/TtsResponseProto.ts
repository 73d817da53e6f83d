// Original file: gate.proto

import type { AudioChunk as _com_platform_gate_AudioChunk, AudioChunk__Output as _com_platform_gate_AudioChunk__Output } from '../../../com/platform/gate/AudioChunk.js';

export interface TtsResponseProto {
  'audio_chunk'?: (_com_platform_gate_AudioChunk | null);
  'first'?: (boolean);
  'last'?: (boolean);
  '_first'?: "first";
  '_last'?: "last";
}

export interface TtsResponseProto__Output {
  'audio_chunk'?: (_com_platform_gate_AudioChunk__Output);
  'first'?: (boolean);
  'last'?: (boolean);
  '_first'?: "first";
  '_last'?: "last";
}
