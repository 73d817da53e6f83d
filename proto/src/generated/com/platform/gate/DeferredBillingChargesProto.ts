// Original file: gate.proto

import type { DeferredBillingChargeProto as _com_platform_gate_DeferredBillingChargeProto, DeferredBillingChargeProto__Output as _com_platform_gate_DeferredBillingChargeProto__Output } from '../../../com/platform/gate/DeferredBillingChargeProto.js';
import type { DeferredBillingParamsProto as _com_platform_gate_DeferredBillingParamsProto, DeferredBillingParamsProto__Output as _com_platform_gate_DeferredBillingParamsProto__Output } from '../../../com/platform/gate/DeferredBillingParamsProto.js';

export interface DeferredBillingChargesProto {
  'charges'?: (_com_platform_gate_DeferredBillingChargeProto)[];
  'params'?: (_com_platform_gate_DeferredBillingParamsProto | null);
}

export interface DeferredBillingChargesProto__Output {
  'charges': (_com_platform_gate_DeferredBillingChargeProto__Output)[];
  'params'?: (_com_platform_gate_DeferredBillingParamsProto__Output);
}
