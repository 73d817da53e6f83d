import { hashSecret } from '../admission/secret-hashes.js';
import type { GatewayConfig, LaunchConfig } from '../config/types.js';
import type { Gate } from '../gate/gate.js';
import type { LaunchedServices } from './launcher.js';

/** Where each launched service stands when the banner is printed. */
export interface LaunchReport {
  connected: string[];
  connecting: string[];
  notStarted: string[];
}

/** The configured service a launch entry registers as: the one its connection token belongs to. */
function serviceOf(config: GatewayConfig, entry: LaunchConfig): { id: number; label: string } | undefined {
  const token = entry.env.PLATFORM_SERVICE_TOKEN;
  if (!token) return undefined;
  const hash = hashSecret(token);
  const service = config.services.find((s) => s.connectionTokenHashes.includes(hash));
  if (!service) return undefined;
  const account = config.accounts.find((a) => a.id === service.accountId);
  return { id: service.id, label: `${account?.name ?? service.accountId}/${service.name}` };
}

/**
 * Waits until every launched service is connected, was skipped or given up on, or `timeoutMs`
 * passed, so the banner's "Try:" line works when it appears; then says where each one stands.
 */
export async function waitForLaunched(
  config: GatewayConfig,
  gate: Gate,
  launched: LaunchedServices,
  timeoutMs: number,
): Promise<LaunchReport> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const report: LaunchReport = { connected: [], connecting: [], notStarted: [] };
    for (const entry of config.launch) {
      const service = serviceOf(config, entry);
      const label = service?.label ?? entry.name;
      const state = launched.states().get(entry.name);
      if (state?.state === 'skipped' || state?.state === 'failed') report.notStarted.push(`${label} (${state.reason})`);
      else if (service && gate.instances(service.id).some((i) => i.state === 'serving')) report.connected.push(label);
      else report.connecting.push(label);
    }
    if (!report.connecting.length || Date.now() >= deadline) return report;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Where each launched service stands without a Gate to ask (the primary of several workers): those
 * started are still connecting as far as the banner can tell.
 */
export function launchedWithoutWaiting(config: GatewayConfig, launched: LaunchedServices): LaunchReport {
  const report: LaunchReport = { connected: [], connecting: [], notStarted: [] };
  for (const entry of config.launch) {
    const label = serviceOf(config, entry)?.label ?? entry.name;
    const state = launched.states().get(entry.name);
    if (state?.state === 'skipped' || state?.state === 'failed') report.notStarted.push(`${label} (${state.reason})`);
    else report.connecting.push(label);
  }
  return report;
}

export interface BannerInput {
  httpUrl: string;
  grpcAddress: string;
  configPath: string;
  storeKind: string;
  /** Each worker's own gRPC address, when several workers serve. */
  workers?: string[];
  demo?: { apiKey: string; serviceToken: string; metricsToken?: string; signIn?: { email: string; password: string } };
  launch: LaunchReport;
}

/** The lines `npm start` prints once the gateway listens and its launched services are connected. */
export function bannerLines(input: BannerInput): string[] {
  const lines = [
    '',
    `Gateway ready: HTTP ${input.httpUrl}, gRPC ${input.grpcAddress} (config ${input.configPath}, store ${input.storeKind})`,
  ];
  if (input.workers) lines.push(`  Workers:             ${input.workers.length}, own gRPC ports ${input.workers.join(', ')}`);
  if (input.demo) {
    lines.push(
      `  Demo API key:        ${input.demo.apiKey}   (set DEMO_API_KEY to change it)`,
      `  demo/external token: ${input.demo.serviceToken}   (set DEMO_SERVICE_TOKEN to change it)`,
    );
    if (input.demo.metricsToken)
      lines.push(
        `  Metrics token:       ${input.demo.metricsToken}   (GET /metrics with Authorization: Bearer; set DEMO_METRICS_TOKEN to change it)`,
      );
    if (input.demo.signIn) {
      lines.push(
        `  Console:             ${input.httpUrl}/console   (sign in as ${input.demo.signIn.email} / ${input.demo.signIn.password}; set DEMO_PASSWORD before the first start to change it)`,
      );
    }
  }
  const { connected, connecting, notStarted } = input.launch;
  if (connected.length) lines.push(`  Services connected:  ${connected.join(', ')}`);
  if (connecting.length)
    lines.push(
      `  Still connecting:    ${connecting.join(', ')} (until then the platform API answers 400 NO_ACTIVE_INSTANCES and the chat adapters 503 with Retry-After; see /health)`,
    );
  if (notStarted.length) lines.push(`  Not started:         ${notStarted.join('; ')}`);
  if (input.demo) {
    lines.push(
      `  Try: curl -s ${input.httpUrl}/api/adapters/chatapi/v1/chat/completions -H 'Authorization: Bearer ${input.demo.apiKey}' \\`,
      `         -H 'Content-Type: application/json' -d '{"model":"demo/echo","messages":[{"role":"user","content":"hello"}]}'`,
    );
  }
  return [...lines, ''];
}
