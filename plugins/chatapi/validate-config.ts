import { GatewayError, type PluginContext, type ServiceEntry } from '../../core/plugins/index.js';

/**
 * The registry validation of a chat config made from a Responses or Messages request: the same
 * checks and 400 as `chat/completions`, with the field named as the caller's request calls it
 * (`max_output_tokens`, not the chat config's `max_tokens`).
 */
export function validateTranslatedConfig(
  ctx: PluginContext<any>,
  service: ServiceEntry,
  config: Record<string, unknown>,
  model: string | undefined,
  callerNames: Readonly<Record<string, string>>,
): void {
  try {
    ctx.pipeline.validateConfig(service, config, model);
  } catch (err) {
    const renamed = err instanceof GatewayError && err.param ? callerNames[err.param] : undefined;
    if (!renamed || !(err instanceof GatewayError)) throw err;
    throw new GatewayError({
      code: err.code,
      status: err.status,
      type: err.type,
      permanent: err.permanent,
      message: err.message.split(`'${err.param!}'`).join(`'${renamed}'`),
      param: renamed,
      args: { ...err.args, param: renamed },
    });
  }
}
