/**
 * `npm run bench -- --echo-instances N` (docs/benchmarks.md, "Waiting behind a large message on the
 * service's stream"): our bench gateway's echo service as two instances in one process, each its own
 * stream and instanceBootUuid, both routed to and answering. Only the shape is checked, never a figure.
 */
import { describe, expect, it } from 'vitest';
import { gatewayChatLoad, gatewayHeaders } from '../../bench/lib/config.js';
import { startEchoFor, startOurGateway } from '../../bench/lib/our-gateway.js';

describe('the bench echo service as several instances (--echo-instances)', () => {
  it('registers two instances of bench/echo from one process, and chat calls are answered', async () => {
    const gateway = await startOurGateway('gateway-echo-instances');
    try {
      const echo = await startEchoFor('echo-instances', gateway, { instances: 2 });
      try {
        const httpUrl = gateway.ready.httpUrl as string;
        const health = (await (await fetch(`${httpUrl}/health`, { headers: gatewayHeaders() })).json()) as {
          instances: Record<string, number>;
        };
        // Two, not one: the second stream is an instance of its own, not a reconnect replacing the first.
        expect(health.instances['bench/echo']).toBe(2);
        const { url, requests } = gatewayChatLoad(httpUrl);
        for (let i = 0; i < 4; i++) {
          const res = await fetch(url, requests[0]);
          expect(res.status).toBe(200);
          expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
        }
        expect(echo.process.exitCode).toBeNull();
      } finally {
        await echo.stop();
      }
    } finally {
      await gateway.stop();
    }
  }, 120_000);
});
