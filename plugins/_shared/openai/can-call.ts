import type { Caller, ServiceEntry } from '../../../core/plugins/index.js';

/** Whether `caller` may call `service` on the chat adapters: its own services and public ones. */
export function canCall(caller: Caller, service: ServiceEntry): boolean {
  return service.public || service.accountId === caller.account.id;
}
