// Original file: gate.proto

import type { SpeechRecognitionAlternative as _com_platform_gate_SpeechRecognitionAlternative, SpeechRecognitionAlternative__Output as _com_platform_gate_SpeechRecognitionAlternative__Output } from '../../../com/platform/gate/SpeechRecognitionAlternative.js';

export interface SpeechRecognitionChunk {
  'alternatives'?: (_com_platform_gate_SpeechRecognitionAlternative)[];
  /**
   * The chunk's text will not change.
   */
  'final'?: (boolean);
  /**
   * The chunk ends an utterance.
   */
  'end_of_utterance'?: (boolean);
}

export interface SpeechRecognitionChunk__Output {
  'alternatives': (_com_platform_gate_SpeechRecognitionAlternative__Output)[];
  /**
   * The chunk's text will not change.
   */
  'final'?: (boolean);
  /**
   * The chunk ends an utterance.
   */
  'end_of_utterance'?: (boolean);
}
