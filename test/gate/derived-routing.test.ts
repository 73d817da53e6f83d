/**
 * A derived (fitted) service in the Directory is served by its base service's instances, which are
 * told the fitted model's directory in headers that only the Gate may set.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceEntry } from '../../core/admission/directory.js';
import { DERIVED_ACCOUNT_ID_HEADER, DERIVED_SERVICE_ID_HEADER, FITTED_MODEL_DIR_HEADER } from '../../proto/src/index.js';
import { GateClient, serveModel, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, type TestGateway } from '../support/gateway.js';

describe('Gate routing of derived services', () => {
  let gw: TestGateway | undefined;
  let service: ModelService | undefined;
  let client: GateClient | undefined;
  afterEach(async () => {
    client?.close();
    await service?.stop().catch(() => undefined);
    await gw?.close();
  });

  const derived = (ready: boolean, modelDir = '/models/500/run-1'): ServiceEntry => {
    const base = gw!.gateway.directory.serviceById(10)!;
    return {
      ...base,
      id: 500,
      name: 'my-fitted',
      public: false,
      connectionTokenHashes: [],
      fittable: false,
      base: { serviceId: 10, modelDir, ready },
    };
  };

  const start = async () => {
    gw = await startTestGateway();
    service = serveModel(
      { predict: (_req, ctx) => ({ headers: ctx.headers }) },
      {
        descriptor: { name: 'echo' },
        gateways: [gw.grpcAddress],
        connectionToken: ECHO_TOKEN,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      },
    );
    await service.ready();
    client = new GateClient({ address: gw.grpcAddress, authToken: TEST_KEY, account: 'demo' });
  };

  it('sends requests for a fitted derived service to the base instances with the model headers', async () => {
    await start();
    gw!.gateway.directory.addService(derived(true));
    expect(gw!.gateway.gate.hasInstances(500)).toBe(true);
    const answer = await client!.predictJson<{ headers: Record<string, string> }>(
      {},
      { model: 'my-fitted', headers: { [FITTED_MODEL_DIR_HEADER]: '/etc', 'x-kept': 'yes' } },
    );
    expect(answer.headers).toMatchObject({
      [FITTED_MODEL_DIR_HEADER]: '/models/500/run-1',
      [DERIVED_SERVICE_ID_HEADER]: '500',
      [DERIVED_ACCOUNT_ID_HEADER]: '1',
      'x-kept': 'yes',
    });
  });

  it('refuses a derived service before its first fit, and strips the model headers a caller sends to a base service', async () => {
    await start();
    gw!.gateway.directory.addService(derived(false));
    const err = await client!.predictJson({}, { model: 'my-fitted' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SERVICE_NOT_FITTED', statusCode: 400 });
    const direct = await client!.predictJson<{ headers: Record<string, string> }>(
      {},
      {
        model: 'echo',
        headers: { 'platform-fitted-model-dir': '/other/account/model', [DERIVED_SERVICE_ID_HEADER]: '1' },
      },
    );
    expect(Object.keys(direct.headers).map((h) => h.toUpperCase())).not.toContain(FITTED_MODEL_DIR_HEADER);
    expect(Object.keys(direct.headers).map((h) => h.toUpperCase())).not.toContain(DERIVED_SERVICE_ID_HEADER);
  });

  it('names the base service when it has no instances', async () => {
    await start();
    gw!.gateway.directory.addService(derived(true));
    await service!.stop();
    expect(gw!.gateway.gate.hasInstances(500)).toBe(false);
    const err = await client!.predictJson({}, { model: 'my-fitted' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NO_ACTIVE_INSTANCES', statusCode: 400 });
    expect((err as Error).message).toContain("served by 'echo'");
  });
});
