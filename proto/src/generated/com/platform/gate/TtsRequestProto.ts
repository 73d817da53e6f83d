// Original file: gate.proto

import type { AudioFormatOptions as _com_platform_gate_AudioFormatOptions, AudioFormatOptions__Output as _com_platform_gate_AudioFormatOptions__Output } from '../../../com/platform/gate/AudioFormatOptions.js';

export interface TtsRequestProto {
  'text'?: (string);
  'voice'?: (string);
  'output_audio_spec'?: (_com_platform_gate_AudioFormatOptions | null);
  '_voice'?: "voice";
}

export interface TtsRequestProto__Output {
  'text'?: (string);
  'voice'?: (string);
  'output_audio_spec'?: (_com_platform_gate_AudioFormatOptions__Output);
  '_voice'?: "voice";
}
