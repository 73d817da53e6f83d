import type { Directory, ServiceEntry } from '../admission/directory.js';
import { gatewayError } from '../errors.js';
import { DERIVED_ACCOUNT_ID_HEADER, DERIVED_SERVICE_ID_HEADER, FITTED_MODEL_DIR_HEADER, type StringMap } from '../../proto/src/index.js';
import type { FallbackTarget } from './failover.js';

/**
 * Headers a base service receives on a request for one of its derived (fitted) services: which fitted
 * model to use and for which service. Set only by the Gate: a caller's own values are dropped.
 */
const RESERVED_HEADERS = new Set<string>([FITTED_MODEL_DIR_HEADER, DERIVED_SERVICE_ID_HEADER, DERIVED_ACCOUNT_ID_HEADER]);

/** The service whose instances take a request, and the headers they get. */
export interface Routed {
  readonly target: ServiceEntry;
  readonly headers: StringMap;
}

const NO_FALLBACKS: readonly FallbackTarget[] = [];

/** Which service's instances serve a service (derived services), and where its fallbacks point. */
export class ServiceRoutes {
  readonly #directory: Directory;

  constructor(directory: Directory) {
    this.#directory = directory;
  }

  /**
   * The service whose instances serve `service`, and the headers that tell them which model to use.
   * A derived (fitted) service is served by its base service, told the fitted model's directory;
   * before its first successful fit it cannot be called (SERVICE_NOT_FITTED, 400).
   */
  route(service: ServiceEntry, given: StringMap | undefined): Routed {
    let headers = given ?? {};
    for (const name in headers) {
      if (RESERVED_HEADERS.has(name.toUpperCase())) {
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !RESERVED_HEADERS.has(k.toUpperCase())));
        break;
      }
    }
    const base = service.base;
    if (!base) return { target: service, headers };
    if (!base.ready) throw gatewayError('SERVICE_NOT_FITTED', { args: { service: service.name } });
    const target = this.#directory.serviceById(base.serviceId);
    if (!target) throw gatewayError('NO_ACTIVE_INSTANCES', { args: { service: service.name } });
    return {
      target,
      headers: {
        ...headers,
        [FITTED_MODEL_DIR_HEADER]: base.modelDir,
        [DERIVED_SERVICE_ID_HEADER]: String(service.id),
        [DERIVED_ACCOUNT_ID_HEADER]: String(service.accountId),
      },
    };
  }

  /** The configured fallbacks of a service, resolved (unknown ones were refused at boot). */
  fallbacksOf(service: ServiceEntry): readonly FallbackTarget[] {
    const refs = service.fallbacks;
    if (!refs?.length) return NO_FALLBACKS;
    const out: FallbackTarget[] = [];
    for (const ref of refs) {
      const [account, name, ...model] = ref.split('/');
      const account_ = account === undefined ? undefined : this.#directory.findAccount(account);
      const target = account_ && name ? this.#directory.findService(account_, name) : undefined;
      if (target) out.push(model.length ? { service: target, model: model.join('/') } : { service: target });
    }
    return out;
  }
}
