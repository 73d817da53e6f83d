/**
 * Entry of the OpenAI-compatible proxy service:
 * `OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=… PLATFORM_GRPC_HOST=127.0.0.1:9090
 *  PLATFORM_SERVICE_TOKEN=… npx tsx examples/openai-proxy/main.ts`
 */
import { startOpenAiProxy } from './proxy.js';

const service = startOpenAiProxy();
await service.ready();
const stop = () => void service.stop('shutdown').then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
