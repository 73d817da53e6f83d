// Original file: gate.proto

import type { WordInfo as _com_platform_gate_WordInfo, WordInfo__Output as _com_platform_gate_WordInfo__Output } from '../../../com/platform/gate/WordInfo.js';

export interface SpeechRecognitionAlternative {
  'text'?: (string);
  'confidence'?: (number | string);
  'words'?: (_com_platform_gate_WordInfo)[];
}

export interface SpeechRecognitionAlternative__Output {
  'text'?: (string);
  'confidence'?: (number);
  'words': (_com_platform_gate_WordInfo__Output)[];
}
