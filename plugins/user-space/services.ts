/**
 * Services of an account, managed at run time: its viewers list and read them; its developers create,
 * change and remove stored ones. A definition is checked as the config file's `services[]` item is
 * (schema, fallbacks rule, registry model, upstream connector enabled); the change reaches every
 * gateway through the change feed. Config-file (and launched) services and fitted (derived) ones are
 * listed read-only: a change answers 409. `{service}` is an ID or a name.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import {
  fallbackProblems,
  gatewayError,
  maskedUrl,
  publicDefinition,
  readServiceBody,
  upstreamProblem,
  type AccountConfig,
  type PluginContext,
  type ServiceDefinition,
  type ServiceEntry,
  type ServiceWrite,
  type StoredServiceDoc,
} from '../../core/plugins/index.js';
import { grantOf, readBody, type Access } from './access.js';

const SERVICES = '/api/platformcore/account/:account/services';
const SERVICE = `${SERVICES}/:service`;

/** Where a service comes from: the API (`stored`), the config file, or a fit (`derived`). */
type ServiceSource = 'stored' | 'config' | 'derived';

/** A service as found for one route: a stored document, or a Directory entry of another source. */
type Found = { source: 'stored'; doc: StoredServiceDoc } | { source: 'config' | 'derived'; entry: ServiceEntry };

export function serviceRoutes(router: Router, ctx: PluginContext<any>, access: Access): void {
  const { userSpace, directory, registry, gate } = ctx;
  const isId = (ref: string) => /^\d+$/.test(ref);

  /** The account's service `ref` names: the store first (read-your-writes on any gateway), then the Directory. */
  async function find(account: AccountConfig, ref: string): Promise<Found> {
    const stored = isId(ref) ? await userSpace.services.get(Number(ref)) : await userSpace.services.byName(account.id, ref);
    if (stored && stored.accountId === account.id) return { source: 'stored', doc: stored };
    const entry = directory.findService(account, ref);
    if (entry && !userSpace.serviceSync.isStored(entry.id)) return { source: entry.base ? 'derived' : 'config', entry };
    throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'service', id: ref } });
  }

  function instancesOf(id: number): number {
    return gate.instances(id).filter((i) => i.state === 'serving').length;
  }

  /**
   * Every instance of the service live on this gateway, serving or not: its version, load and state,
   * and for an upstream engine its health as the connector's probes last saw it. The hostname of an
   * engine is its URL's host only (URL.host never carries a user or password).
   */
  function connectedOf(id: number) {
    return gate.instances(id).map((i) => ({
      name: i.bootUuid,
      kind: i.kind,
      state: i.state,
      hostname: i.hostname ?? null,
      version: i.version ?? null,
      image: i.image ?? null,
      inFlight: i.inFlight,
      load: i.load ? { ...i.load, at: new Date(i.load.at).toISOString() } : null,
      connectedAt: new Date(i.connectedAt).toISOString(),
      bulkLane: i.bulkLane === true,
      ...(i.engineHealth
        ? {
            engineHealth: {
              status: i.engineHealth.status,
              consecutiveFailures: i.engineHealth.consecutiveFailures,
              checkedAt: i.engineHealth.checkedAt === undefined ? null : new Date(i.engineHealth.checkedAt).toISOString(),
            },
          }
        : {}),
    }));
  }

  function storedView(doc: StoredServiceDoc, account: AccountConfig) {
    return {
      id: doc._id,
      account: account.name,
      source: 'stored' satisfies ServiceSource,
      ...publicDefinition(doc.definition),
      connectionTokens: doc.connectionTokens.map(({ id, prefix, createdAt }) => ({
        id,
        prefix,
        createdAt: new Date(createdAt).toISOString(),
      })),
      registryModel: registryModelOf(doc.definition.provider as string | undefined, doc.definition.defaultModel as string | undefined),
      instances: instancesOf(doc._id),
      connectedInstances: connectedOf(doc._id),
      createdAt: new Date(doc.createdAt).toISOString(),
      updatedAt: new Date(doc.updatedAt).toISOString(),
    };
  }

  /** A config-file or derived service: its settings as the Directory holds them, tokens as a count. */
  function entryView(entry: ServiceEntry, source: 'config' | 'derived') {
    const { account, connectionTokenHashes, accountId: _accountId, base, upstream, id, ...settings } = entry;
    const baseService = base && directory.serviceById(base.serviceId);
    return {
      id,
      account: account.name,
      source,
      ...settings,
      ...(upstream
        ? {
            upstream: {
              ...upstream,
              baseUrl: maskedUrl(upstream.baseUrl),
              apiKey: undefined,
              apiKeySet: upstream.apiKey !== undefined || undefined,
            },
          }
        : {}),
      connectionTokens: connectionTokenHashes.map((_hash, i) => ({ id: `config:${i}` })),
      ...(base ? { base: { id: base.serviceId, name: baseService?.name ?? null, fitted: base.ready } } : {}),
      registryModel: registryModelOf(entry.provider, entry.defaultModel),
      instances: instancesOf(id),
      connectedInstances: connectedOf(id),
    };
  }

  function registryModelOf(provider: string | undefined, model: string | undefined) {
    if (provider === undefined || model === undefined) return null;
    const found = registry.model(provider, model);
    return found ? { provider, name: found.name, displayName: found.displayName ?? found.name } : null;
  }

  /**
   * What the config check would say of this definition in this account, beside the schema: another
   * service's name or alias (409), fallbacks, the registry model, the upstream connector (400).
   */
  function check(account: AccountConfig, id: number, definition: ServiceDefinition): void {
    const sameName = directory.findService(account, definition.name);
    if (sameName && sameName.id !== id) throw gatewayError('SERVICE_NAME_TAKEN', { param: 'name', args: { name: definition.name } });
    for (const alias of (definition.aliases as string[] | undefined) ?? []) {
      const holder = directory.serviceByAlias(alias);
      if (holder && holder.id !== id) throw gatewayError('SERVICE_ALIAS_TAKEN', { param: 'aliases', args: { alias } });
    }
    const fallbacks = (definition.fallbacks as string[] | undefined) ?? [];
    const problems = fallbackProblems({ accountId: account.id, fallbacks }, (accountRef, name) => {
      const owner = directory.findAccount(accountRef);
      const target = owner && directory.findService(owner, name);
      return target && target.id !== id ? target : undefined;
    });
    if (definition.upstream) {
      const unserved = upstreamProblem(ctx.config.plugins.enabled);
      if (unserved) problems.push(`the service ${unserved}`);
    }
    const config = { ...definition, id, accountId: account.id, connectionTokenHashes: [], configs: definition.configs ?? [] } as never;
    problems.push(...registry.checkServices([config]).map((p) => p.replace(/^service '[^']*': /, '')));
    if (problems.length)
      throw gatewayError('VALIDATION_FAILED', {
        param: problems[0]!.startsWith('fallback') ? 'fallbacks' : 'body',
        args: { reason: problems.join('; ') },
      });
  }

  function answerWrite(koa: Context, written: ServiceWrite, account: AccountConfig, status: number): void {
    koa.status = status;
    koa.body = { ...storedView(written.doc, account), ...(written.connectionToken ? { connectionToken: written.connectionToken } : {}) };
  }

  function refuseChange(found: Exclude<Found, { source: 'stored' }>): never {
    if (found.source === 'config') throw gatewayError('CONFIG_ENTRY_READ_ONLY', { args: { entity: 'Service', name: found.entry.name } });
    throw gatewayError('SERVICE_READ_ONLY', {
      args: { service: found.entry.name, reason: 'is a fitted (derived) service, changed and removed through the fitting API' },
    });
  }

  router.get(SERVICES, access.require('viewer'), async (koa) => {
    const account = grantOf(koa).account!;
    const stored = await userSpace.services.list(account.id);
    const storedIds = new Set(stored.map((doc) => doc._id));
    const others = [...directory.services()].filter(
      (s) => s.accountId === account.id && !storedIds.has(s.id) && !userSpace.serviceSync.isStored(s.id),
    );
    koa.body = {
      services: [
        ...others.map((entry) => entryView(entry, entry.base ? 'derived' : 'config')),
        ...stored.map((doc) => storedView(doc, account)),
      ].sort((a, b) => a.id - b.id),
    };
  });

  router.post(SERVICES, access.require('developer'), async (koa) => {
    const account = grantOf(koa).account!;
    const { definition, tokens } = readServiceBody(await readBody(ctx, koa));
    check(account, 0, definition);
    const written = await userSpace.services.create(account.id, definition, tokens, (id) => !directory.serviceById(id));
    ctx.logger.info({ serviceId: written.doc._id, service: definition.name, accountId: account.id }, 'user space: service created');
    answerWrite(koa, written, account, 201);
  });

  router.get(SERVICE, access.require('viewer'), async (koa) => {
    const account = grantOf(koa).account!;
    const found = await find(account, koa.params.service!);
    koa.body = found.source === 'stored' ? storedView(found.doc, account) : entryView(found.entry, found.source);
  });

  router.patch(SERVICE, access.require('developer'), async (koa) => {
    const account = grantOf(koa).account!;
    const found = await find(account, koa.params.service!);
    if (found.source !== 'stored') refuseChange(found);
    const { definition, tokens } = readServiceBody(await readBody(ctx, koa), found.doc.definition);
    check(account, found.doc._id, definition);
    const written = await userSpace.services.update(found.doc, definition, tokens);
    ctx.logger.info({ serviceId: found.doc._id, service: definition.name, accountId: account.id }, 'user space: service changed');
    answerWrite(koa, written, account, 200);
  });

  router.delete(SERVICE, access.require('developer'), async (koa) => {
    const account = grantOf(koa).account!;
    const found = await find(account, koa.params.service!);
    if (found.source !== 'stored') refuseChange(found);
    const id = found.doc._id;
    const derived = [...directory.services()].find((s) => s.base?.serviceId === id);
    if (derived) {
      throw gatewayError('CONFLICT', {
        args: { reason: `Service '${found.doc.definition.name}' serves the fitted service '${derived.name}': remove that one first` },
      });
    }
    await userSpace.services.remove(found.doc);
    ctx.logger.info({ serviceId: id, service: found.doc.definition.name, accountId: account.id }, 'user space: service removed');
    koa.status = 204;
  });
}
