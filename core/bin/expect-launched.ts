import type { LaunchConfig } from '../config/types.js';
import type { Gateway } from '../gateway.js';
import type { LaunchEvents } from './launcher.js';

/**
 * Launched services count as required: `/health` is `degraded` while one that was started has no
 * connected instance. The service is found by the connection token its entry passes
 * (`PLATFORM_SERVICE_TOKEN`); a service skipped for a missing prerequisite is not expected.
 */
export function expectLaunchedServices(gateway: Gateway): LaunchEvents {
  const serviceOf = (entry: LaunchConfig) => {
    const token = entry.env.PLATFORM_SERVICE_TOKEN;
    return token ? gateway.directory.serviceForConnectionToken(token) : undefined;
  };
  return {
    started(entry) {
      const service = serviceOf(entry);
      if (service) gateway.gate.expectInstances(service.id);
    },
    skipped(entry) {
      const service = serviceOf(entry);
      if (service && !service.required) gateway.gate.expectInstances(service.id, false);
    },
  };
}
