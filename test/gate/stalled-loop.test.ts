import { describe, expect, it } from 'vitest';
import { GateClient, serveModel } from '../../sdk/index.js';
import { ECHO_TOKEN, TEST_KEY, startTestGateway } from '../support/gateway.js';

/**
 * A stalled event loop (a long GC, a starved CPU in a busy CI runner, a paused VM) runs its overdue
 * heartbeat timers before it reads the sockets. Neither end may take that for the other's silence:
 * the gateway dropped its services and the SDK reconnected after any stall longer than the silence
 * limit (1.6 s at the 200 ms interval the test gateway uses).
 */
describe('a stalled event loop', () => {
  it('drops no service stream: the gateway and an in-process SDK service answer right after it', async () => {
    const gw = await startTestGateway();
    const sdkWarnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (_: unknown, msg: string) => void sdkWarnings.push(msg), error() {} };
    const service = serveModel(
      { predict: (req) => ({ got: req.data.json() }) },
      { descriptor: { name: 'stall' }, gateways: [gw.grpcAddress], connectionToken: ECHO_TOKEN, logger },
    );
    const client = new GateClient({ address: gw.grpcAddress, authToken: TEST_KEY, account: 'demo', model: 'echo' });
    try {
      await service.ready();
      expect(await client.predictJson({ n: 1 })).toEqual({ got: { n: 1 } });

      const stalledUntil = Date.now() + 2500;
      while (Date.now() < stalledUntil); // the stall: nothing runs, no timer, no socket read

      expect(await client.predictJson({ n: 2 })).toEqual({ got: { n: 2 } });
      expect(sdkWarnings).toEqual([]);
    } finally {
      client.close();
      await service.stop();
      await gw.close();
    }
  });
});
