import { definePlugin } from '../../core/plugins/index.js';
import { createAccess } from './access.js';
import { accountRoutes } from './accounts.js';
import { apiKeyRoutes } from './api-keys.js';
import { authRoutes } from './auth.js';
import { memberRoutes } from './members.js';
import { serviceRoutes } from './services.js';
import { sessionCredential } from './session-credential.js';
import { usageRoutes } from './usage.js';

/**
 * The user-space API under `/api/platformcore`: sign-in and sessions, accounts, members (and API keys,
 * services and usage, added by their own route modules). Every route is authorized by `access` (access.ts),
 * the one place that decides who may do what. Starting the plugin starts the gateway's user space
 * (core/userspace/): its collections and the change feed that brings stored accounts, keys and services to
 * this gateway.
 */
export default definePlugin({
  name: 'user-space',
  description: 'The user-space API: sign-in, sessions, accounts, members, API keys and services managed at run time',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create(ctx) {
    const access = createAccess(ctx);
    // A console session is a credential of the platform's routes too (session-credential.ts).
    ctx.admission.useCredential(sessionCredential(ctx, access));
    return {
      routes(router) {
        authRoutes(router, ctx, access);
        accountRoutes(router, ctx, access);
        memberRoutes(router, ctx, access);
        serviceRoutes(router, ctx, access);
        apiKeyRoutes(router, ctx, access);
        usageRoutes(router, ctx, access);
      },
      start: () => ctx.userSpace.start(),
      stop: () => ctx.userSpace.stop(),
    };
  },
});
