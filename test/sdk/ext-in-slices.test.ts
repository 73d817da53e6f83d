import { describe, expect, it } from 'vitest';
import { RawExt, withRawExt } from '../../core/grpc/raw-ext.js';
import { fieldRecords, gateServiceDefinition, type GateToServiceProto } from '../../proto/src/index.js';
import { ServiceError } from '../../sdk/index.js';
import { extParamTexts, laneDeserializer } from '../../sdk/service/ext-in-slices.js';

const method = gateServiceDefinition().processAsync;
const decode = method.responseDeserialize;
const deserialize = laneDeserializer(decode);
/** The params of the hostile bench's largest ext call: 1024 of 4,000 bytes (4 MiB). */
const largest = () => Object.fromEntries(Array.from({ length: 1024 }, (_, i) => [`p${i}`, { json: `${i}:${'v'.repeat(3990)}` }]));
const request = (cancelled = false) => ({ cancelled, signal: AbortSignal.abort(new Error('cancelled by the gateway')) });

/** An ext's own bytes (an ExtendedRequestProto), as a caller sends them. */
function extBytes(ext: GateToServiceProto['ext']): Buffer {
  const message = method.responseSerialize({ ext });
  return message.subarray(fieldRecords(message)![0]!.valueStart);
}

/** The bytes the gateway writes for a large ext call: its other fields, then the caller's ext bytes as they came (core/grpc/raw-ext.ts). */
function asTheGatewayWritesIt(message: GateToServiceProto, raw = extBytes(message.ext)): Buffer {
  return withRawExt(method.responseSerialize)({ ...message, ext: new RawExt(raw, () => message.ext!) } as GateToServiceProto);
}

/** Counts the event loop's turns (setImmediate callbacks) while `work` runs. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = () => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

/**
 * Issue 25, the hostile bench's costliest attack: one account's largest ext call (1024 params, 4 MiB)
 * decoded whole stalled the SDK's event loop 8-27 ms at once, and another account's call on the same
 * service waited behind it. The bulk lane's deserializer keeps a large ext's params in their bytes and
 * the dispatcher decodes them a slice at a time (sdk/service/ext-in-slices.ts).
 */
describe("a large ext's params are decoded a slice at a time", () => {
  it('gives the handler what a whole decode gives, with the event loop turning between slices', async () => {
    const message: GateToServiceProto = { requestId: 7, headers: { 'Z-requestId': 'c-1' }, ext: { methodName: 'ping', params: largest() } };
    const bytes = asTheGatewayWritesIt(message);
    expect(bytes.length).toBeGreaterThan(4_000_000);

    const kept = deserialize(bytes);
    expect(kept).toMatchObject({ requestId: 7, headers: { 'Z-requestId': 'c-1' }, body: 'ext', ext: { methodName: 'ping' } });
    expect(kept.ext?.params).toEqual({}); // still in the bytes

    const { result: texts, turns } = await turnsDuring(() => extParamTexts(kept, request()));
    const whole = decode(bytes).ext!.params!;
    expect(Object.keys(texts)).toEqual(Object.keys(whole));
    for (const [name, value] of Object.entries(whole)) expect(texts[name], name).toBe(value.json);
    // 4 MiB in slices of at most 128 KiB: at least 31 turns between them (a whole decode: none).
    expect(turns).toBeGreaterThanOrEqual(31);
    // Decoded once: the message lets go of its bytes.
    expect(await extParamTexts(kept, request())).toEqual({});
  });

  it('stops at the request’s cancel, before the next slice', async () => {
    const kept = deserialize(asTheGatewayWritesIt({ requestId: 8, ext: { methodName: 'ping', params: largest() } }));
    await expect(extParamTexts(kept, request(true))).rejects.toThrow('cancelled by the gateway');
  });

  it('keeps protobuf’s rule for a repeated key (the last one wins) and refuses a protobuf param, as a whole decode does', async () => {
    // A second entry for p0 after all the others, in the same ext (a caller may send one).
    const ext = { methodName: 'm', params: largest() };
    const repeated = asTheGatewayWritesIt(
      { requestId: 9, ext },
      Buffer.concat([extBytes(ext), extBytes({ params: { p0: { json: 'last' } } })]),
    );
    expect(decode(repeated).ext!.params!.p0!.json).toBe('last');
    expect((await extParamTexts(deserialize(repeated), request())).p0).toBe('last');

    const bytes = asTheGatewayWritesIt({
      requestId: 10,
      ext: { methodName: 'm', params: { ...largest(), p1000: { protobuf: Buffer.from([1]) } } },
    });
    const error = await extParamTexts(deserialize(bytes), request()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 400, message: expect.stringContaining("'p1000'") });
  });

  it('decodes whole a small ext, any other request and any message shaped otherwise', async () => {
    const small = method.responseSerialize({ requestId: 1, ext: { methodName: 'm', params: { a: { json: '1' } } } });
    expect(deserialize(small)).toEqual(decode(small));
    const predict = method.responseSerialize({ requestId: 2, predict: { data: { json: JSON.stringify('x'.repeat(300_000)) } } });
    expect(deserialize(predict)).toEqual(decode(predict));
    // Another body field beside the ext (the last one wins in protobuf): the generated decoder decides.
    const odd = Buffer.concat([
      asTheGatewayWritesIt({ requestId: 3, ext: { methodName: 'm', params: largest() } }),
      method.responseSerialize({ cancel: { requestIdToCancel: 3 } }),
    ]);
    expect(deserialize(odd)).toEqual(decode(odd));
    expect(deserialize(odd).body).toBe('cancel');
    expect(await extParamTexts(deserialize(small), request())).toEqual({ a: '1' });
  });
});
