/**
 * The demo echo chat service on the model-service SDK. It answers what the standard chat adapter
 * sends (chat completions, legacy completions, embeddings) with echo.ts; streamed answers go out as
 * one partial answer per chunk. Also usable through the direct adapter: an OpenAI request body as
 * the data, no config.
 */
import { ModelService, ServiceError, type ModelHandlers, type ModelServiceOptions } from '@model-gateway/sdk';
import { countPromptTokens, echoAnswer, requestKind, type EchoRequest } from './echo.js';

type Json = Record<string, unknown>;

export const echoHandlers: ModelHandlers = {
  predict(request) {
    const data = request.data.json<EchoRequest>();
    const config = request.config?.kind === 'json' ? request.config.json<Json>() : {};
    if (typeof data !== 'object' || data === null || !requestKind(data)) {
      throw ServiceError.badRequest('expected chat data {messages}, completion data {prompt} or embeddings data {input}');
    }
    return echoAnswer(data, config ?? {});
  },
  ext(methodName, params) {
    if (methodName !== 'count_tokens') throw ServiceError.methodNotSupported(methodName);
    let request: unknown;
    try {
      request = JSON.parse(params.request ?? '');
    } catch {
      throw ServiceError.badRequest('count_tokens expects the request as JSON in the param "request"');
    }
    if (typeof request !== 'object' || request === null) throw ServiceError.badRequest('count_tokens expects a request object');
    return countPromptTokens(request as Json);
  },
};

/**
 * Starts the echo service and connects it to the gateway(s). Gateways and token default to
 * PLATFORM_GRPC_HOST(S) and PLATFORM_SERVICE_TOKEN, as for every SDK service.
 */
export function startEchoService(options: Partial<ModelServiceOptions> = {}): ModelService {
  return new ModelService(echoHandlers, { descriptor: { name: 'echo' }, ...options }).start();
}
