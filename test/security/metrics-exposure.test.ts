/**
 * Issue 25 N7: `/metrics` was open without a credential (the default, and the demo): an attacker with
 * no key read every account with its token counts and every private service, which `/health` and the
 * API hide. Now the metrics plugin does not boot without `bearerToken` unless the operator writes
 * `unauthenticated: true`, and a tenant's API key is no metrics credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { ECHO_TOKEN, OTHER_ACCOUNT_KEY, TEST_KEY, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';

const METRICS_TOKEN = 'metrics-scrape-token-0001';

const scrape = async (gw: TestGateway, authorization?: string) => {
  const res = await fetch(`${gw.httpUrl}/metrics`, { headers: authorization ? { authorization } : {} });
  return { status: res.status, text: await res.text() };
};

/** The gateway the options give, or the boot error; a gateway that booted is closed again. */
async function bootOutcome(metrics: Record<string, unknown> | undefined): Promise<{ booted: boolean; error?: any }> {
  const options = metrics ? { metrics } : {};
  try {
    const gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['metrics'], options } }));
    await gw.close();
    return { booted: true };
  } catch (error) {
    return { booted: false, error };
  }
}

describe('/metrics is never open by default (issue 25 N7)', () => {
  it('refuses to boot the metrics plugin without a bearer token, naming the setting', async () => {
    const outcome = await bootOutcome(undefined);
    expect(outcome.booted).toBe(false);
    expect(outcome.error).toMatchObject({ code: 'PLUGIN_OPTIONS_INVALID' });
    expect(outcome.error.problems).toContain("plugins.options.metrics/: must have required property 'bearerToken'");
    expect((await bootOutcome({ unauthenticated: false })).booted).toBe(false);
  });

  describe('with a token', () => {
    let gw: TestGateway;
    let echo: ModelService;
    beforeAll(async () => {
      gw = await startTestGateway(
        testConfigInput({ plugins: { enabled: ['sync-predict', 'metrics'], options: { metrics: { bearerToken: METRICS_TOKEN } } } }),
      );
      echo = startEchoService({ gateways: gw.grpcAddress, connectionToken: ECHO_TOKEN, logger: silentLogger });
      await echo.ready();
      // Traffic from both accounts, so that the metrics have their names to give away.
      for (const key of [TEST_KEY, OTHER_ACCOUNT_KEY]) {
        const res = await fetch(`${gw.httpUrl}/api/platformgateway/account/demo/model/echo/predict`, {
          method: 'POST',
          headers: { 'PLATFORM-API-KEY': key, 'content-type': 'application/json' },
          body: '{"prompt":"hi"}',
        });
        expect(res.status, await res.text()).toBe(200);
      }
    });
    afterAll(async () => {
      await echo?.stop();
      await gw?.close();
    });

    it('answers the attacker 401 without naming accounts or services: no credential, a wrong one, a tenant API key', async () => {
      for (const authorization of [undefined, 'Bearer wrong-token-000000000000', `Bearer ${TEST_KEY}`, `Bearer ${OTHER_ACCOUNT_KEY}`]) {
        const res = await scrape(gw, authorization);
        expect(res.status).toBe(401);
        expect(res.text).not.toMatch(/gateway_|demo\/echo|"other"|account=/);
      }
      const scraped = await scrape(gw, `Bearer ${METRICS_TOKEN}`);
      expect(scraped.status).toBe(200);
      expect(scraped.text).toContain('service="demo/echo"');
    });
  });

  it('serves without a token only when the operator writes unauthenticated: true', async () => {
    const gw = await startTestGateway(
      testConfigInput({ plugins: { enabled: ['metrics'], options: { metrics: { unauthenticated: true } } } }),
    );
    try {
      expect((await scrape(gw)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
