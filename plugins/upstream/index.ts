/**
 * The built-in upstream connector. A service whose config carries an `upstream` block gets an
 * in-process instance that calls an HTTP engine (vLLM, Ollama, llama.cpp, TGI, OpenAI, Anthropic…)
 * directly: no proxy process, no gRPC hop. To every other part of the gateway it is one more
 * instance of the service, so keys, permissions, rate limits, registry validation, async tasks, the
 * chat adapters and usage logging apply as they do to a dialled-in service. With a health check,
 * the instance takes requests only while the engine answers it.
 */
import {
  definePlugin,
  type LocalInstanceHandle,
  type PluginContext,
  type ServiceChange,
  type ServiceEntry,
  type UpstreamConfig,
} from '../../core/plugins/index.js';
import { UpstreamWorker } from './worker.js';

/** One service's engine: its worker, its place in the Gate, its health-check timer. */
interface Connector {
  readonly worker: UpstreamWorker;
  readonly handle: LocalInstanceHandle;
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
  /** Settles once the engine may take requests: at once without a health check, else after its first probe. */
  readonly firstProbe: Promise<void>;
}

/** How often a replaced engine is looked at for calls still in flight before it is closed. */
const DRAIN_CHECK_MS = 100;

export default definePlugin({
  name: 'upstream',
  description: 'Built-in connector to HTTP engines (OpenAI- or Anthropic-compatible) for services with an `upstream` block',
  create(ctx) {
    // This gateway's connectors, one per service with an `upstream` block, and the replaced ones
    // still finishing their calls.
    const connectors = new Map<number, Connector>();
    const draining = new Set<Connector>();
    // Each engine attached for a service gets a new instance name: a replacement must not take the
    // place (and fail the calls) of the instance it replaces.
    const generations = new Map<number, number>();
    let unsubscribe: (() => void) | undefined;

    const attach = (service: ServiceEntry, upstream: UpstreamConfig) => {
      const generation = (generations.get(service.id) ?? 0) + 1;
      generations.set(service.id, generation);
      connectors.set(service.id, connect(ctx, service, upstream, generation));
    };

    /**
     * A replaced engine leaves routing once its successor may take requests, and is closed when its
     * last call in flight has settled: a changed upstream block fails no call.
     */
    const drain = async (old: Connector, next: Connector) => {
      stopProbing(old);
      draining.add(old);
      await next.firstProbe;
      old.handle.setServing(false);
      while (old.handle.instance.inFlight > 0 && draining.has(old)) await sleep(DRAIN_CHECK_MS);
      draining.delete(old);
      old.handle.detach('upstream block changed');
    };

    /** A service added, changed or removed at run time (the user-space API): its engine follows. */
    const onServiceChange = ({ id, before, after }: ServiceChange) => {
      const current = connectors.get(id);
      if (after?.upstream && !after.base) {
        // A change elsewhere (its account's settings, an alias) keeps the engine and its connections.
        if (current && before && sameEngine(before, after)) return;
        attach(after, after.upstream);
        if (current) void drain(current, connectors.get(id)!);
      } else if (current) {
        connectors.delete(id);
        close(current, after ? 'upstream block removed' : 'service removed');
      }
    };

    return {
      start() {
        for (const service of ctx.directory.services()) {
          if (service.upstream && !service.base) attach(service, service.upstream);
        }
        unsubscribe = ctx.directory.onServiceChange(onServiceChange);
      },
      stop() {
        unsubscribe?.();
        for (const connector of [...connectors.values(), ...draining]) close(connector, 'gateway closing');
        connectors.clear();
        draining.clear();
      },
    };
  },
});

/** Whether two versions of a service call their engine the same way (what the worker reads of them). */
function sameEngine(a: ServiceEntry, b: ServiceEntry): boolean {
  const engine = (s: ServiceEntry) => JSON.stringify([s.account.name, s.name, s.defaultModel, s.aliases, s.upstream]);
  return engine(a) === engine(b);
}

function stopProbing(connector: Connector): void {
  connector.closed = true;
  clearTimeout(connector.timer);
}

function close(connector: Connector, reason: string): void {
  stopProbing(connector);
  connector.handle.detach(reason);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

function connect(ctx: PluginContext, service: ServiceEntry, upstream: UpstreamConfig, generation: number): Connector {
  const apiKey = upstream.apiKey ?? (upstream.apiKeyEnv ? process.env[upstream.apiKeyEnv] : undefined);
  if (upstream.apiKeyEnv && !apiKey) {
    ctx.logger.warn(
      { service: service.name, env: upstream.apiKeyEnv },
      'upstream key variable is not set; calling the engine without a key',
    );
  }
  const worker = new UpstreamWorker({ service, upstream, apiKey, maxAnswerBytes: ctx.config.gate.maxAnswerBytes });
  // The instance's name reaches callers (`x-served-by`): the service's name, never the engine's host,
  // port or credentials. The host (never its user or password) is for the operator's logs and views.
  const host = new URL(upstream.baseUrl).host;
  const name = generation === 1 ? `upstream:${service.name}` : `upstream:${service.name}#${generation}`;
  const handle = ctx.gate.attachLocal(service, { name, hostname: host, worker });
  let probed = () => {};
  const firstProbe = new Promise<void>((resolve) => (probed = resolve));
  const connector: Connector = { worker, handle, timer: undefined, closed: false, firstProbe };
  const check = upstream.healthCheck;
  if (!check) {
    handle.reportHealth({ status: 'unchecked', consecutiveFailures: 0 });
    probed();
  } else {
    handle.reportHealth({ status: 'pending', consecutiveFailures: 0 });
    // Until the engine first answers its health check it has no instance here. Afterwards it leaves
    // routing only after `failuresBeforeDown` failures in a row: an engine busy generating (llama.cpp's
    // server on few cores) can answer one probe late without being down.
    handle.setServing(false);
    let failures = check.failuresBeforeDown;
    // Only an idle engine is probed: one making progress on calls in flight (a stream event, a call
    // taken or answered) within the time probes would take to declare it down is alive. llama.cpp's
    // server answers no probe while it generates, so a long agent turn took it out of routing.
    const progressWindowMs = check.intervalMs * check.failuresBeforeDown + check.timeoutMs;
    const probe = async () => {
      const healthy = worker.progressing(progressWindowMs) || (await worker.healthy(check.path, check.timeoutMs));
      probed();
      if (connector.closed) return;
      failures = healthy ? 0 : failures + 1;
      handle.reportHealth({
        status: healthy ? 'healthy' : 'unhealthy',
        consecutiveFailures: healthy ? 0 : failures,
        checkedAt: Date.now(),
      });
      if (healthy || failures >= check.failuresBeforeDown) handle.setServing(healthy);
      connector.timer = setTimeout(probe, check.intervalMs).unref();
    };
    void probe();
  }
  ctx.logger.info({ service: service.name, api: upstream.api, engine: host }, 'upstream engine attached');
  return connector;
}
