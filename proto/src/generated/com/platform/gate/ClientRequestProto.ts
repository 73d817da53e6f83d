// Original file: gate.proto

import type { PredictRequestProto as _com_platform_gate_PredictRequestProto, PredictRequestProto__Output as _com_platform_gate_PredictRequestProto__Output } from '../../../com/platform/gate/PredictRequestProto.js';
import type { ExtendedRequestProto as _com_platform_gate_ExtendedRequestProto, ExtendedRequestProto__Output as _com_platform_gate_ExtendedRequestProto__Output } from '../../../com/platform/gate/ExtendedRequestProto.js';
import type { PartialPredictRequestProto as _com_platform_gate_PartialPredictRequestProto, PartialPredictRequestProto__Output as _com_platform_gate_PartialPredictRequestProto__Output } from '../../../com/platform/gate/PartialPredictRequestProto.js';

export interface ClientRequestProto {
  /**
   * An ID when made only of digits, otherwise a name.
   */
  'account'?: (string);
  'model'?: (string);
  /**
   * An API key of the caller's account.
   */
  'authToken'?: (string);
  /**
   * Seconds; the configured default applies when 0 or absent.
   */
  'timeoutSec'?: (number);
  'predict'?: (_com_platform_gate_PredictRequestProto | null);
  'ext'?: (_com_platform_gate_ExtendedRequestProto | null);
  'partialPredict'?: (_com_platform_gate_PartialPredictRequestProto | null);
  'headers'?: ({[key: string]: string});
  'body'?: "predict"|"ext"|"partialPredict";
}

export interface ClientRequestProto__Output {
  /**
   * An ID when made only of digits, otherwise a name.
   */
  'account'?: (string);
  'model'?: (string);
  /**
   * An API key of the caller's account.
   */
  'authToken'?: (string);
  /**
   * Seconds; the configured default applies when 0 or absent.
   */
  'timeoutSec'?: (number);
  'predict'?: (_com_platform_gate_PredictRequestProto__Output);
  'ext'?: (_com_platform_gate_ExtendedRequestProto__Output);
  'partialPredict'?: (_com_platform_gate_PartialPredictRequestProto__Output);
  'headers': ({[key: string]: string});
  'body'?: "predict"|"ext"|"partialPredict";
}
