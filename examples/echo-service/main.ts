/**
 * Entry of the demo echo chat service: `PLATFORM_GRPC_HOST=127.0.0.1:9090 PLATFORM_SERVICE_TOKEN=…
 * npx tsx examples/echo-service/main.ts` (npm start launches it for the demo config).
 */
import { startEchoService } from './service.js';

const service = startEchoService();
await service.ready();
const stop = () => void service.stop('shutdown').then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
