/**
 * One gateway in its own process, for tests of several gateways on one database: the config comes as
 * JSON in GATEWAY_TEST_CONFIG, the HTTP URL goes to stdout as one JSON line, and the gateway closes
 * when stdin closes (a killed test run leaves no process behind). Each HTTP answer carries
 * `x-test-arrived-at`: when the request reached this gateway (epoch ms), which is within a moment of
 * its admission, so a test can count admissions per second without guessing across a second's edge.
 */
import { buildConfig } from '../../../core/config/load.js';
import { createGateway } from '../../../core/gateway.js';
import { silentLogger } from '../../../core/observe/logger.js';

const config = buildConfig(JSON.parse(process.env.GATEWAY_TEST_CONFIG ?? '{}'), { env: {} });
const gateway = await createGateway(config, { logger: silentLogger() });
gateway.app.middleware.unshift(async (ctx, next) => {
  const arrivedAt = Date.now();
  try {
    await next();
  } finally {
    ctx.set('x-test-arrived-at', String(arrivedAt));
  }
});
const { httpUrl } = await gateway.start();
process.stdout.write(`${JSON.stringify({ httpUrl })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void gateway.close().finally(() => process.exit(0));
});
