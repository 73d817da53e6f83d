import { afterEach, describe, expect, it } from 'vitest';
import { upperHandlers } from '../../examples/upper-service/service.js';
import { GateClient, ServiceError, serveModel, type ModelHandlers, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

/**
 * ext parameters, one definition (docs/platform-api.md, sdk/README.md): a caller's string reaches the
 * service as `PayloadProto{json: <string>}`, the SDK's handler gets the string, and the caller gets the
 * handler's answer as it returned it, over HTTP and over gRPC. Before, the handler of
 * docs/model-service.md answered `{"a":{"proto":{"json":"1","body":"json"},"what":"parameter 'a'"}}`.
 */
describe('ext parameters over HTTP and gRPC, with the SDK on both ends', () => {
  let gw: TestGateway | undefined;
  let service: ModelService | undefined;
  let client: GateClient | undefined;
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };

  afterEach(async () => {
    client?.close();
    await service?.stop().catch(() => undefined);
    await gw?.close();
    gw = service = client = undefined;
  });

  const start = async (handlers: ModelHandlers) => {
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['sync-predict'] } }));
    service = serveModel(handlers, {
      descriptor: { name: 'echo' },
      gateways: [gw.grpcAddress],
      connectionToken: ECHO_TOKEN,
      logger: quiet,
    });
    await service.ready();
    client = new GateClient({ address: gw.grpcAddress, authToken: TEST_KEY, account: 'demo', model: 'echo' });
    const overHttp = async (body: unknown) => {
      const res = await fetch(`${gw!.httpUrl}/api/platformgate/account/demo/model/echo/ext`, {
        method: 'POST',
        headers: { 'PLATFORM-API-KEY': TEST_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const overGrpc = async (methodName: string, params: Record<string, string>) =>
      JSON.parse((await client!.ext(methodName, params)).data?.json ?? 'null') as unknown;
    return { overHttp, overGrpc };
  };

  it("the docs' service answers the caller's params as sent, over both", async () => {
    const { overHttp, overGrpc } = await start({ ext: (methodName, params) => ({ methodName, params }) });
    const params = { a: '1', json: '{"n":2}', empty: '', unicode: 'ä ✓' };
    expect(await overHttp({ methodName: 'ping', params: { a: '1' } })).toEqual({
      status: 200,
      body: { methodName: 'ping', params: { a: '1' } },
    });
    expect(await overHttp({ methodName: 'ping', params })).toEqual({ status: 200, body: { methodName: 'ping', params } });
    expect(await overGrpc('ping', { a: '1' })).toEqual({ methodName: 'ping', params: { a: '1' } });
    expect(await overGrpc('ping', params)).toEqual({ methodName: 'ping', params });
  });

  it("the example upper service's info and count read the strings", async () => {
    const { overHttp, overGrpc } = await start(upperHandlers);
    expect(await overHttp({ methodName: 'count', params: { text: 'one two three' } })).toEqual({ status: 200, body: { words: 3 } });
    expect(await overGrpc('count', { text: 'one two' })).toEqual({ words: 2 });
    const info = { name: 'upper', methods: ['info', 'count'], params: { verbose: 'yes' } };
    expect(await overHttp({ methodName: 'info', params: { verbose: 'yes' } })).toEqual({ status: 200, body: info });
    expect(await overGrpc('info', { verbose: 'yes' })).toEqual(info);
  });

  it('a parameter sent as protobuf bytes over gRPC is a 400 naming it', async () => {
    await start({ ext: (_m, params) => params });
    const response = await client!
      .process({ ext: { methodName: 'm', params: { blob: { protobuf: Buffer.from([1, 2]) } } } })
      .catch((err: unknown) => err);
    expect(response).toMatchObject({
      code: 'platform-action.common.bad-request',
      statusCode: 400,
      message: expect.stringContaining("'blob'"),
      args: { param: 'blob' },
    });
  });

  it("a service's bad request naming a parameter reaches an HTTP caller as the error's param", async () => {
    // The SDKs name the field in args.param; the HTTP error rendered `param: null` before.
    const { overHttp } = await start({
      ext: (_m, params) => {
        if (params.n !== undefined && !/^\d+$/.test(params.n)) throw ServiceError.badRequest('n must be a whole number', { param: 'n' });
        return params;
      },
    });
    expect(await overHttp({ methodName: 'm', params: { n: 'x' } })).toEqual({
      status: 400,
      body: {
        error: {
          code: 'platform-action.common.bad-request',
          message: 'n must be a whole number',
          type: 'invalid_request_error',
          param: 'n',
          args: { param: 'n' },
        },
      },
    });
  });

  it("a gateway error's param reaches a gRPC caller in args.param", async () => {
    // ApiErrorProto has no param field: a gateway refusal naming the field (here the preflight's
    // HEADERS_TOO_LARGE for 5,000 headers) lost it over gRPC before.
    await start({ ext: (_m, params) => params });
    const headers = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`h${i}`, 'v']));
    const response = await client!.process({ predict: { data: { json: '{}' } } }, { headers }).catch((err: unknown) => err);
    expect(response).toMatchObject({ code: 'HEADERS_TOO_LARGE', args: { param: 'headers' } });
  });
});
