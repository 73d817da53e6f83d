// Original file: gate.proto

import type { RecognitionConfig as _com_platform_gate_RecognitionConfig, RecognitionConfig__Output as _com_platform_gate_RecognitionConfig__Output } from '../../../com/platform/gate/RecognitionConfig.js';

export interface AsrRequestProto {
  'config'?: (_com_platform_gate_RecognitionConfig | null);
  'audio_content'?: (Buffer | Uint8Array | string);
  'body'?: "config"|"audio_content";
}

export interface AsrRequestProto__Output {
  'config'?: (_com_platform_gate_RecognitionConfig__Output);
  'audio_content'?: (Buffer);
  'body'?: "config"|"audio_content";
}
