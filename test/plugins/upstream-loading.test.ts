import { describe, expect, it } from 'vitest';
import { demoGatewayLoads } from '../support/demo-modules.js';

/** An upstream service: an engine at a port nothing listens on (nothing is called here). */
const ENGINE_SERVICE = {
  id: 90,
  name: 'engine',
  account: 'demo',
  family: 'openai',
  provider: 'demo',
  // A model of the demo's registry, which every service's must be.
  defaultModel: 'echo-1',
  upstream: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'engine-1' },
};

describe('the upstream connector loads its HTTP client when a service needs it', () => {
  it('the demo (the upstream plugin on, no upstream service) loads no undici; a config with an upstream service does', async () => {
    expect(await demoGatewayLoads({}, ['undici'])).toBe(0);
    expect(await demoGatewayLoads({ services: [ENGINE_SERVICE] }, ['undici'])).toBeGreaterThan(0);
  }, 60_000);
});
