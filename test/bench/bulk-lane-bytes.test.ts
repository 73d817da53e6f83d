/**
 * `npm run bench -- --bulk-lane-bytes N` (docs/benchmarks.md, "One instance's bulk lane"): our bench
 * gateway's `gate.bulkLaneBytes`. The demo echo service opens the lane the gateway offers by default,
 * and none with `0` (the bench as it ran before lanes). Only the shape is checked, never a figure.
 */
import { describe, expect, it } from 'vitest';
import { startEchoFor, startOurGateway } from '../../bench/lib/our-gateway.js';

type Instances = { instances: { bulkLane?: boolean }[] };

async function lanesWith(bulkLaneBytes: number | undefined): Promise<(boolean | undefined)[]> {
  const gateway = await startOurGateway('gateway-bulk-lane', { bulkLaneBytes });
  try {
    const echo = await startEchoFor('echo-bulk-lane', gateway);
    try {
      // The lane opens just after the instance registered (on the gateway's serviceInfo): polled for
      // up to 5 s, or for 1 s where none may open.
      const tries = bulkLaneBytes === 0 ? 10 : 50;
      let lanes: (boolean | undefined)[] = [];
      for (let i = 0; i < tries && !lanes[0]; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        lanes = (await gateway.ask<Instances>('instances')).instances.map((instance) => instance.bulkLane);
      }
      return lanes;
    } finally {
      await echo.stop();
    }
  } finally {
    await gateway.stop();
  }
}

describe("the bench gateways' bulk lanes (--bulk-lane-bytes)", () => {
  it('the echo service opens its lane by default, and none with --bulk-lane-bytes 0', async () => {
    expect(await lanesWith(undefined)).toEqual([true]);
    expect(await lanesWith(0)).toEqual([undefined]);
  }, 120_000);
});
