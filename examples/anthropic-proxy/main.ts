/**
 * Entry of the Anthropic-style proxy service:
 * `ANTHROPIC_BASE_URL=https://api.anthropic.com ANTHROPIC_API_KEY=… PLATFORM_GRPC_HOST=127.0.0.1:9090
 *  PLATFORM_SERVICE_TOKEN=… npx tsx examples/anthropic-proxy/main.ts`
 */
import { startAnthropicProxy } from './proxy.js';

const service = startAnthropicProxy();
await service.ready();
const stop = () => void service.stop('shutdown').then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
