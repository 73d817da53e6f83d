import type { ServiceEntry } from '../admission/directory.js';

/** `<account>/<service>`: how metrics, usage and logs name a service. */
export function serviceLabel(service: ServiceEntry): string {
  return `${service.account.name}/${service.name}`;
}
