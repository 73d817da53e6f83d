/**
 * Prometheus metrics over several workers (`server.workers`). A scrape on the shared HTTP port
 * reaches whichever worker the primary handed the connection to, so that worker's own figures would
 * alternate from scrape to scrape. Instead it asks the primary, which collects every worker's
 * registry with prom-client's AggregatorRegistry (counters and histograms summed, gauges by each
 * metric's aggregator, sum by default) and answers with the text.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'gateway-metrics-request';
const RESPONSE = 'gateway-metrics-response';
/** Longer than prom-client's own 5 s wait for the workers, so its error comes back, not ours. */
const ANSWER_TIMEOUT_MS = 8_000;

interface MetricsResponse {
  type: typeof RESPONSE;
  id: number;
  text?: string;
  contentType?: string;
  error?: string;
}

export interface WorkersMetrics {
  text: string;
  contentType: string;
}

/**
 * In a worker: `registries` are what the primary collects from this process. False outside a
 * worker (one gateway, or tests running several in one process): serve the registry as it is.
 */
export function shareMetricsWithWorkers(registries: Registry[]): boolean {
  if (!cluster.isWorker || !process.send) return false;
  new AggregatorRegistry(); // installs prom-client's answer to the primary's requests
  AggregatorRegistry.setRegistries(registries);
  return true;
}

const pending = new Map<number, { resolve: (m: WorkersMetrics) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
let nextId = 0;
let listening = false;

/** In a worker: every worker's metrics, aggregated by the primary. */
export function workersMetrics(): Promise<WorkersMetrics> {
  if (!listening) {
    listening = true;
    process.on('message', (message: MetricsResponse) => {
      if (message?.type !== RESPONSE) return;
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      clearTimeout(waiter.timer);
      if (message.error !== undefined) waiter.reject(new Error(`aggregating the workers' metrics failed: ${message.error}`));
      else waiter.resolve({ text: message.text ?? '', contentType: message.contentType ?? 'text/plain' });
    });
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error("the primary did not answer with the workers' metrics"));
    }, ANSWER_TIMEOUT_MS);
    timer.unref();
    pending.set(id, { resolve, reject, timer });
    process.send!({ type: REQUEST, id });
  });
}

/** In the primary: answers the workers' requests for the aggregate. */
export function serveWorkersMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== REQUEST) return;
    const reply = (fields: Partial<MetricsResponse>) => {
      if (worker.isConnected()) worker.send({ type: RESPONSE, id: message.id, ...fields });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text, contentType: aggregator.contentType }),
      (err: Error) => reply({ error: err.message }),
    );
  });
}
