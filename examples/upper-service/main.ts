/**
 * The upper-case service as a process (the demo launches it as `demo/upper`):
 *
 *   PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=demo-service-token-0123 npx tsx examples/upper-service/main.ts
 */
import { serveModel } from '../../sdk/index.js';
import { upperHandlers } from './service.js';

const service = serveModel(upperHandlers, { descriptor: { name: 'upper' } });
await service.ready();
const stop = () => void service.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
