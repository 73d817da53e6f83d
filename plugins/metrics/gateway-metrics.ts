import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PluginContext } from '../../core/plugins/index.js';
import { disconnectKind } from './disconnects.js';
import { FastCounter, FastHistogram } from './fast-families.js';
import { LabelCap } from './label-cap.js';
import type { MetricsOptions } from './options.js';

/** Request-scale latencies: 1 ms to 60 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** The gateway's own share of a request: 50 µs to 1 s. */
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Async tasks wait and run for longer: 10 ms to 1 h. */
const TASK_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

/**
 * Every metric family of one gateway, fed by the core's events and read at scrape time from the
 * Gate. Its own registry: several gateways in one process (tests) keep separate figures.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #unsubscribe: (() => void)[] = [];

  constructor(ctx: PluginContext<MetricsOptions>) {
    const { events, gate, directory, options } = ctx;
    const services = new LabelCap(options.maxServices);
    const accounts = new LabelCap(options.maxAccounts);
    const registers = [this.registry];
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });

    const httpRequests = new FastCounter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests by plugin, route template, method, status and service',
      labelNames: ['plugin', 'route', 'method', 'status', 'service'],
      registers,
    });
    const httpDuration = new FastHistogram({
      name: 'gateway_http_request_duration_seconds',
      help: "HTTP request duration, from the first byte read to the handler's end",
      labelNames: ['plugin', 'route', 'method', 'status', 'service'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const grpcCalls = new FastCounter({
      name: 'gateway_grpc_client_calls_total',
      help: 'gRPC client calls by method, service and result code',
      labelNames: ['method', 'service', 'code'],
      registers,
    });
    const grpcDuration = new FastHistogram({
      name: 'gateway_grpc_client_call_duration_seconds',
      help: 'gRPC client call duration',
      labelNames: ['method', 'service', 'code'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const overhead = new FastHistogram({
      name: 'gateway_overhead_seconds',
      help: 'Time a request spent in the gateway itself: its duration less the time waiting for the service',
      labelNames: ['transport', 'route'],
      buckets: OVERHEAD_BUCKETS,
      registers,
    });
    const serviceCalls = new FastCounter({
      name: 'gateway_service_calls_total',
      help: 'Requests sent to model services, by service and outcome (ok or error code)',
      labelNames: ['service', 'outcome'],
      registers,
    });
    const serviceDuration = new FastHistogram({
      name: 'gateway_service_call_duration_seconds',
      help: 'From sending a request to a service to its last answer',
      labelNames: ['service'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const firstChunk = new FastHistogram({
      name: 'gateway_stream_first_chunk_seconds',
      help: 'Streamed answers: time to the first chunk',
      labelNames: ['service'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const chunkGap = new FastHistogram({
      name: 'gateway_stream_chunk_gap_seconds',
      help: 'Streamed answers: time between chunks',
      labelNames: ['service'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const tokens = new FastCounter({
      name: 'gateway_tokens_total',
      help: 'Tokens of answers (from their usage), by account, service and direction (input or output)',
      labelNames: ['account', 'service', 'direction'],
      registers,
    });
    const charges = new Counter({
      name: 'gateway_billing_charges_total',
      help: 'Billing charges reported by services',
      labelNames: ['service', 'currency'],
      registers,
    });
    const chargedAmount = new Counter({
      name: 'gateway_billing_amount_total',
      help: 'Sum of the amounts of billing charges reported by services',
      labelNames: ['service', 'currency'],
      registers,
    });
    const reconnects = new Counter({
      name: 'gateway_service_reconnects_total',
      help: 'Service instances that reconnected (same boot UUID) and replaced their stream',
      labelNames: ['service'],
      registers,
    });
    const disconnects = new Counter({
      name: 'gateway_service_disconnects_total',
      help: 'Service streams that ended, by kind',
      labelNames: ['service', 'kind'],
      registers,
    });
    const dropped = new Counter({
      name: 'gateway_service_streams_dropped_total',
      help: 'Service streams that ended while serving, without stopServing (crash, heartbeat timeout, network)',
      labelNames: ['service'],
      registers,
    });
    const droppedCalls = new Counter({
      name: 'gateway_service_dropped_calls_total',
      help: 'Requests in flight on a service stream when it ended',
      labelNames: ['service'],
      registers,
    });
    const rejections = new Counter({
      name: 'gateway_rejections_total',
      help: 'Requests refused for a limit (rate limit, quota), by error code',
      labelNames: ['code'],
      registers,
    });
    const tasks = new Counter({
      name: 'gateway_async_tasks_total',
      help: 'Async task transitions, by the status reached',
      labelNames: ['status'],
      registers,
    });
    const taskWait = new Histogram({
      name: 'gateway_async_task_queue_wait_seconds',
      help: "Async tasks: from creation to a worker's claim",
      buckets: TASK_BUCKETS,
      registers,
    });
    const taskRun = new Histogram({
      name: 'gateway_async_task_processing_seconds',
      help: 'Async tasks: from the claim to the result',
      buckets: TASK_BUCKETS,
      registers,
    });
    const fitJobs = new Counter({
      name: 'gateway_fitting_jobs_total',
      help: 'Fitting job transitions, by the status reached',
      labelNames: ['status'],
      registers,
    });

    const perService = (read: (inFlight: number, instances: number) => number) =>
      function (this: Gauge) {
        this.reset();
        const figures = new Map<string, { inFlight: number; instances: number }>();
        for (const instance of gate.instances()) {
          if (instance.state !== 'serving') continue;
          const service = directory.serviceById(instance.serviceId);
          const name = services.value(service ? `${service.account.name}/${service.name}` : String(instance.serviceId));
          const f = figures.get(name) ?? { inFlight: 0, instances: 0 };
          f.inFlight += instance.inFlight;
          f.instances += 1;
          figures.set(name, f);
        }
        for (const [name, f] of figures) this.set({ service: name }, read(f.inFlight, f.instances));
      };
    new Gauge({
      name: 'gateway_service_instances',
      help: 'Connected serving instances per service',
      labelNames: ['service'],
      registers,
      collect: perService((_, n) => n),
    });
    new Gauge({
      name: 'gateway_service_in_flight',
      help: 'Requests in flight per service',
      labelNames: ['service'],
      registers,
      collect: perService((inFlight) => inFlight),
    });
    new Gauge({
      name: 'gateway_service_load',
      help: "Requests in flight per connected instance (the protocol carries no load report; this is the gateway's view)",
      labelNames: ['service'],
      registers,
      collect: perService((inFlight, n) => inFlight / n),
    });

    const on = this.#unsubscribe;
    on.push(
      events.on('httpRequest', (e) => {
        const labels = [e.plugin, e.route, e.method, String(e.status), services.value(e.service)];
        httpRequests.inc(labels);
        httpDuration.observe(labels, e.durationMs / 1000);
        if (e.service !== undefined) overhead.observe(['http', e.route], Math.max(0, e.durationMs - e.serviceWaitMs) / 1000);
      }),
    );
    on.push(
      events.on('grpcCall', (e) => {
        const labels = [e.method, services.value(e.service), e.code];
        grpcCalls.inc(labels);
        grpcDuration.observe(labels, e.durationMs / 1000);
        if (e.service !== undefined) overhead.observe(['grpc', e.method], Math.max(0, e.durationMs - e.serviceWaitMs) / 1000);
      }),
    );
    on.push(
      events.on('serviceCall', (e) => {
        const service = [services.value(e.service)];
        serviceCalls.inc([service[0]!, e.outcome]);
        serviceDuration.observe(service, e.durationMs / 1000);
        if (e.chunks > 1 && e.firstChunkMs !== undefined) firstChunk.observe(service, e.firstChunkMs / 1000);
      }),
    );
    on.push(events.on('chunkGap', (e) => chunkGap.observe([services.value(e.service)], e.ms / 1000)));
    on.push(
      events.on('usage', (e) => {
        const account = accounts.value(e.account);
        const service = services.value(e.service);
        tokens.inc([account, service, 'input'], e.inputTokens);
        tokens.inc([account, service, 'output'], e.outputTokens);
      }),
    );
    on.push(
      events.on('billing', (e) => {
        const labels = { service: services.value(e.service), currency: e.currency ?? 'units' };
        charges.inc(labels);
        if (e.amount > 0) chargedAmount.inc(labels, e.amount);
      }),
    );
    on.push(
      events.on('instance', (e) => {
        const service = services.value(e.service);
        if (e.change === 'connected') {
          if (e.reconnect) reconnects.inc({ service });
          return;
        }
        const kind = disconnectKind(e.reason);
        disconnects.inc({ service, kind });
        if (e.dropped) dropped.inc({ service });
        if (e.failedCalls) droppedCalls.inc({ service }, e.failedCalls);
      }),
    );
    on.push(events.on('rejection', (e) => rejections.inc({ code: e.code })));
    on.push(
      events.on('task', (e) => {
        tasks.inc({ status: e.status });
        if (e.queueWaitMs !== undefined) taskWait.observe(e.queueWaitMs / 1000);
        if (e.processingMs !== undefined) taskRun.observe(e.processingMs / 1000);
      }),
    );
    on.push(events.on('fitJob', (e) => fitJobs.inc({ status: e.status })));
  }

  close(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.registry.clear();
  }
}
