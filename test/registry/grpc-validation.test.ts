import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, startOkService, type RawClient } from '../support/raw-gate-client.js';
import { registryFixture } from '../support/registry-fixture.js';

/** The registry check is the pipeline's: gRPC client calls get it as well as the HTTP plugins. */
describe('registry validation on the gRPC client calls', () => {
  let gw: TestGateway;
  let client: RawClient;
  let service: RawServiceStream;

  beforeAll(async () => {
    const input = testConfigInput({ registry: registryFixture() });
    Object.assign(input.services[0], { provider: 'acme', defaultModel: 'acme-chat' });
    gw = await startTestGateway(input);
    client = rawClient(gw.grpcAddress);
    service = startOkService(client, ECHO_TOKEN, 'echo');
    await service.next((m) => m.body === 'serviceInfo');
  });
  afterAll(async () => {
    service.close();
    client.close();
    await gw.close();
  });

  const call = (config: unknown) =>
    processUnary(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({}), config: json(config) } });

  it('a config within the bounds reaches the service', async () => {
    expect((await call({ temperature: 1 })).body).toBe('predict');
  });

  it('a violation is an in-band 400 naming the parameter', async () => {
    const res = await call({ temperature: 9 });
    expect(res.error).toMatchObject({
      code: 'PARAMETER_OUT_OF_RANGE',
      statusCode: 400,
      args: { param: 'temperature', bound: 'max', limit: '2', value: '9' },
    });
    expect((await call({ model: 'acme-strict' })).error).toMatchObject({ code: 'PARAMETER_REQUIRED', statusCode: 400 });
  });
});
