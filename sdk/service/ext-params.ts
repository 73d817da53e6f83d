import type { PayloadProto } from '@model-gateway/protocol';
import { payloadKind } from '../payload.js';
import { ServiceError } from './errors.js';

/**
 * The handler's view of `ExtendedRequestProto.params`: each parameter's text, added to `texts`. A
 * caller's string (over HTTP, or `GateClient.ext`) arrives as `PayloadProto{json: <string>}`, and the
 * handler gets that string back as it was sent; an empty payload is the empty string. Parameters are
 * text by definition, so one sent as protobuf bytes is the caller's mistake: 400 naming it. The params
 * of a large ext come in slices (ext-in-slices.ts), each added in turn.
 */
export function addParamTexts(texts: Record<string, string>, params: Record<string, PayloadProto> | undefined): Record<string, string> {
  for (const [name, proto] of Object.entries(params ?? {})) {
    const kind = payloadKind(proto);
    if (kind === 'protobuf')
      throw ServiceError.badRequest(`ext parameter '${name}' is protobuf bytes; ext parameters are text (PayloadProto.json)`, {
        param: name,
      });
    texts[name] = kind === 'json' ? (proto.json ?? '') : '';
  }
  return texts;
}
