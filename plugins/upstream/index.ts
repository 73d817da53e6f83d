/**
 * The built-in upstream connector. A service whose config carries an `upstream` block gets an
 * in-process instance that calls an HTTP engine (vLLM, Ollama, llama.cpp, TGI, OpenAI, Anthropic…)
 * directly: no proxy process, no gRPC hop. To every other part of the gateway it is one more
 * instance of the service, so keys, permissions, rate limits, registry validation, async tasks, the
 * chat adapters and usage logging apply as they do to a dialled-in service. With a health check,
 * the instance takes requests only while the engine answers it.
 */
import { definePlugin, type LocalInstanceHandle, type PluginContext, type ServiceEntry, type UpstreamConfig } from '../../core/plugins/index.js';
import { UpstreamWorker } from './worker.js';

/** One service's engine: its worker, its place in the Gate, its health-check timer. */
interface Connector {
  readonly worker: UpstreamWorker;
  readonly handle: LocalInstanceHandle;
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
}

/** The connectors of each running gateway (one process may run several). */
const running = new WeakMap<PluginContext, Connector[]>();

export default definePlugin({
  name: 'upstream',
  description: 'Built-in connector to HTTP engines (OpenAI- or Anthropic-compatible) for services with an `upstream` block',
  start(ctx) {
    const connectors: Connector[] = [];
    for (const service of ctx.directory.services()) {
      if (service.upstream) connectors.push(connect(ctx, service, service.upstream));
    }
    running.set(ctx, connectors);
  },
  close(ctx) {
    for (const connector of running.get(ctx) ?? []) {
      connector.closed = true;
      clearTimeout(connector.timer);
      connector.handle.detach('gateway closing');
    }
    running.delete(ctx);
  },
});

function connect(ctx: PluginContext, service: ServiceEntry, upstream: UpstreamConfig): Connector {
  const apiKey = upstream.apiKeyEnv ? process.env[upstream.apiKeyEnv] : undefined;
  if (upstream.apiKeyEnv && !apiKey) {
    ctx.logger.warn({ service: service.name, env: upstream.apiKeyEnv }, 'upstream key variable is not set; calling the engine without a key');
  }
  const worker = new UpstreamWorker({ service, upstream, apiKey, maxAnswerBytes: ctx.config.gate.maxAnswerBytes });
  // The instance's name reaches callers (`x-served-by`): the service's name, never the engine's host,
  // port or credentials. The host (never its user or password) is for the operator's logs and views.
  const host = new URL(upstream.baseUrl).host;
  const handle = ctx.gate.attachLocal(service, { name: `upstream:${service.name}`, hostname: host, worker });
  const connector: Connector = { worker, handle, timer: undefined, closed: false };
  const check = upstream.healthCheck;
  if (check) {
    // Until the engine first answers its health check it has no instance here. Afterwards it leaves
    // routing only after `failuresBeforeDown` failures in a row: an engine busy generating (llama.cpp's
    // server on few cores) can answer one probe late without being down.
    handle.setServing(false);
    let failures = check.failuresBeforeDown;
    const probe = async () => {
      const healthy = await worker.healthy(check.path, check.timeoutMs);
      if (connector.closed) return;
      failures = healthy ? 0 : failures + 1;
      if (healthy || failures >= check.failuresBeforeDown) handle.setServing(healthy);
      connector.timer = setTimeout(probe, check.intervalMs).unref();
    };
    void probe();
  }
  ctx.logger.info({ service: service.name, api: upstream.api, engine: host }, 'upstream engine attached');
  return connector;
}
