import type { Context } from 'koa';
import { compileRequestSchema, extParamsTooLarge, type PayloadProto, type PluginContext } from '../../core/plugins/index.js';
import extSchema from '../../schemas/sync-predict/ext.schema.json' with { type: 'json' };

interface ExtRequestData {
  methodName: string;
  params: Record<string, string>;
}

/** `limits.extMaxParams` and `limits.extMaxParamBytes`, as the gRPC preflight reads them too. */
export interface ExtLimits {
  maxExtParams: number;
  maxExtParamBytes: number;
}

/**
 * The objects, arrays and members of an ext body besides its params: the body, `methodName`,
 * `params` and the params object. A body with more than `maxExtParams` params has more members than
 * this plus the limit, so the JSON scan refuses it before JSON.parse builds any of it.
 */
const ENVELOPE_MEMBERS = 4;

/**
 * Reads the body of `…/ext` within the ext limits: the entry count is bounded before the body is
 * parsed (a 15 MB body of 1,000,000 entries held the event loop most of 9 s, #25 N1), the bytes of
 * the params (keys and values, UTF-8) once it is. Throws 413 EXT_PARAMS_TOO_LARGE beyond either.
 */
export function createExtReader(
  http: Pick<PluginContext['http'], 'readJson'>,
  limits: ExtLimits,
): (ctx: Context) => Promise<ExtRequestData> {
  const readExt = compileRequestSchema<ExtRequestData>(extSchema);
  return async (ctx) => {
    let value: unknown;
    try {
      value = await http.readJson(ctx, undefined, limits.maxExtParams + ENVELOPE_MEMBERS);
    } catch (err) {
      if ((err as { code?: string }).code === 'JSON_TOO_MANY_MEMBERS')
        throw extParamsTooLarge(limits, `more than ${limits.maxExtParams} entries`);
      throw err;
    }
    const body = readExt(value);
    let bytes = 0;
    for (const [name, text] of Object.entries(body.params)) bytes += Buffer.byteLength(name) + Buffer.byteLength(text);
    if (bytes > limits.maxExtParamBytes) throw extParamsTooLarge(limits, `${bytes} bytes`);
    return body;
  };
}

/** Over HTTP an ext parameter is text; the service gets it as `PayloadProto{json: <text>}`, and the SDK hands its handler that text. */
export function extParams(params: Record<string, string>): Record<string, PayloadProto> {
  return Object.fromEntries(Object.entries(params).map(([name, text]) => [name, { json: text }]));
}
