/**
 * The model service the benchmarks call: the TypeScript SDK answering every predict with its input.
 * Run as its own process (a model service is one), connected to PLATFORM_GRPC_HOST with
 * PLATFORM_SERVICE_TOKEN. Prints READY once the gateway spoke to it.
 */
import { serveModel, silentLogger } from '../sdk/index.js';

const service = serveModel({ predict: (req) => req.data.json() }, { descriptor: { name: 'bench-echo' }, logger: silentLogger });
await service.ready();
process.stdout.write('READY\n');
const stop = () => void service.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
