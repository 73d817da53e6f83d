/**
 * The text classifier as a process: connects to the gateway named by PLATFORM_GRPC_HOST(S) with the
 * token in PLATFORM_SERVICE_TOKEN (the demo launches it this way) and serves until SIGTERM.
 *
 *   PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=… npx tsx examples/text-classifier/main.ts
 */
import { serveModel } from '@model-gateway/sdk';
import { textClassifierHandlers } from './service.js';

const service = serveModel(textClassifierHandlers(), { descriptor: { name: 'text-classifier', fittable: true } });
await service.ready();
const stop = () => void service.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
