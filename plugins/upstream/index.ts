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

export default definePlugin({
  name: 'upstream',
  description: 'Built-in connector to HTTP engines (OpenAI- or Anthropic-compatible) for services with an `upstream` block',
  create(ctx) {
    // This gateway's connectors, one per service with an `upstream` block.
    let connectors: Connector[] = [];
    return {
      start() {
        for (const service of ctx.directory.services()) {
          if (service.upstream) connectors.push(connect(ctx, service, service.upstream));
        }
      },
      stop() {
        for (const connector of connectors) {
          connector.closed = true;
          clearTimeout(connector.timer);
          connector.handle.detach('gateway closing');
        }
        connectors = [];
      },
    };
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
    // Only an idle engine is probed: one making progress on calls in flight (a stream event, a call
    // taken or answered) within the time probes would take to declare it down is alive. llama.cpp's
    // server answers no probe while it generates, so a long agent turn took it out of routing.
    const progressWindowMs = check.intervalMs * check.failuresBeforeDown + check.timeoutMs;
    const probe = async () => {
      const healthy = worker.progressing(progressWindowMs) || (await worker.healthy(check.path, check.timeoutMs));
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
