// Original file: gate.proto

import type { SpeechRecognitionChunk as _com_platform_gate_SpeechRecognitionChunk, SpeechRecognitionChunk__Output as _com_platform_gate_SpeechRecognitionChunk__Output } from '../../../com/platform/gate/SpeechRecognitionChunk.js';

export interface AsrResponseProto {
  'chunks'?: (_com_platform_gate_SpeechRecognitionChunk)[];
  'final'?: (boolean);
  'provider_specific'?: (string);
  '_final'?: "final";
}

export interface AsrResponseProto__Output {
  'chunks': (_com_platform_gate_SpeechRecognitionChunk__Output)[];
  'final'?: (boolean);
  'provider_specific'?: (string);
  '_final'?: "final";
}
