// Original file: gate.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../../google/protobuf/Duration.js';

export interface WordInfo {
  'start_time'?: (_google_protobuf_Duration | null);
  'end_time'?: (_google_protobuf_Duration | null);
  'word'?: (string);
  'confidence'?: (number | string);
}

export interface WordInfo__Output {
  'start_time'?: (_google_protobuf_Duration__Output);
  'end_time'?: (_google_protobuf_Duration__Output);
  'word'?: (string);
  'confidence'?: (number);
}
