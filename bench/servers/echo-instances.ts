/**
 * The demo echo service (examples/echo-service) as BENCH_ECHO_INSTANCES instances in one process,
 * for `npm run bench -- --echo-instances N`: each dials its own `processAsync` stream with its own
 * `instanceBootUuid` (the gateway keys instances by it: a second stream with the same one would be a
 * reconnect that replaces the first), all on the one process's CPU. It measures what a second stream
 * buys another account when one account's large messages cross the first: the gateway's least-loaded
 * routing sends small calls to the instance without a large call in flight (docs/benchmarks.md,
 * "Waiting behind a large message on the service's stream").
 */
import { randomUUID } from 'node:crypto';
import { startEchoService } from '../../examples/echo-service/service.js';

const count = Number(process.env.BENCH_ECHO_INSTANCES ?? 2);
// The first keeps the process's own boot UUID, as the demo's one instance does.
const services = Array.from({ length: count }, (_, i) => startEchoService(i === 0 ? {} : { instanceBootUuid: randomUUID() }));
await Promise.all(services.map((service) => service.ready()));
const stop = () => void Promise.all(services.map((service) => service.stop('shutdown'))).then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
