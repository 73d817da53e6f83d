/**
 * One service definition (an item of the config's `services`), read the same way wherever it comes
 * from: the config file at boot (load.ts) or a service stored through the user-space API at run time
 * (core/userspace/service-input.ts). Both validate against the same schema item and normalise here.
 */
import { hashSecret } from '../admission/secret-hashes.js';
import { builtinManifest, builtinPluginNames } from '../plugins/manifest.js';
import configSchema from '../../schemas/config.schema.json' with { type: 'json' };
import type { ServiceConfig, ServiceFamily, WakerConfig } from './types.js';
import type { Prices } from '../userspace/prices.js';

/** The JSON Schema of one `services[]` item of schemas/config.schema.json. */
export const SERVICE_DEFINITION_SCHEMA: Readonly<Record<string, unknown>> = configSchema.properties.services.items;

/** A schema-valid `services[]` item (defaults applied) whose `account` resolved to `accountId`. */
export function normaliseService(s: Record<string, any>, accountId: number): ServiceConfig {
  return {
    id: s.id as number,
    name: s.name as string,
    accountId,
    public: s.public as boolean,
    required: s.required as boolean,
    connectionTokenHashes: (s.connectionTokens as any[]).map((t) => (t.tokenHash as string | undefined) ?? hashSecret(t.token as string)),
    timeoutSec: s.timeoutSec as number | undefined,
    provider: s.provider as string | undefined,
    defaultModel: s.defaultModel as string | undefined,
    family: s.family as ServiceFamily,
    ...(s.aliases?.length ? { aliases: s.aliases as string[] } : {}),
    nativeResponses: s.nativeResponses as boolean,
    batch: s.batch as boolean,
    fittable: s.fittable as boolean,
    configs: s.configs,
    fitConfigs: s.fitConfigs,
    ...(s.upstream ? { upstream: s.upstream } : {}),
    ...(s.fallbacks?.length ? { fallbacks: s.fallbacks as string[] } : {}),
    ...(s.affinity ? { affinity: s.affinity as { messages: number } } : {}),
    waitForInstanceMs: s.waitForInstanceMs as number,
    ...(s.waker ? { waker: s.waker as WakerConfig } : {}),
    ...(s.prices ? { prices: s.prices as Prices } : {}),
  };
}

/** What the fallback check needs to know of a target service. */
export interface FallbackTargetInfo {
  readonly accountId: number;
  readonly public: boolean;
}

/**
 * The problems of a service's `fallbacks`: a reference that names no service, or a service
 * falling back to another account's private one (every caller of it would reach that service and see
 * its name). `resolve` finds the target of `<account>/<service>`.
 */
export function fallbackProblems(
  service: Pick<ServiceConfig, 'accountId' | 'fallbacks'>,
  resolve: (account: string, name: string) => FallbackTargetInfo | undefined,
): string[] {
  const problems: string[] = [];
  for (const ref of service.fallbacks ?? []) {
    const [account = '', name = ''] = ref.split('/');
    const target = resolve(account, name);
    if (!target) problems.push(`fallback '${ref}' names no service declared in services`);
    else if (!target.public && target.accountId !== service.accountId)
      problems.push(`fallback '${ref}' is a private service of another account`);
  }
  return problems;
}

/** Why a service with an `upstream` block cannot be served with these plugins enabled, if it cannot. */
export function upstreamProblem(enabledPlugins: readonly string[]): string | undefined {
  if (enabledPlugins.some((name) => builtinManifest(name)?.servesUpstreams)) return undefined;
  const servers = builtinPluginNames().filter((name) => builtinManifest(name)?.servesUpstreams);
  return `has an upstream: enable the plugin that calls it (plugins.enabled: ${servers.map((n) => `'${n}'`).join(' or ')})`;
}
