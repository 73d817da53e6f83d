/**
 * Everything the chat-adapter suites run against, for real: a gateway with both adapters, the echo
 * service on the SDK (in-process, over gRPC), two HTTP engines with canned answers (OpenAI- and
 * Anthropic-compatible) behind `demo/openai-proxy` and `demo/claude` through the built-in upstream
 * connector, and two raw-protocol services (`demo/plain` records what it gets and echoes it;
 * `demo/faulty` fails on request).
 */
import { contentText, echoAnswer } from '../../examples/echo-service/echo.js';
import { startEchoService } from '../../examples/echo-service/service.js';
import { silentLogger, type ModelService } from '../../sdk/index.js';
import { CHAT_TOKENS, ENGINE_KEYS, ENGINE_KEY_ENV, chatConfigInput } from './chat.js';
import type { GatewayOptions } from '../../core/gateway.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { RawServiceError, startRawModel, type RawModel } from './raw-model.js';
import { startAnthropicUpstream, startOpenAiUpstream, type Upstream } from './upstream.js';

export interface ChatFixture {
  gw: TestGateway;
  /** `<http>/api/adapters/chatapi` */
  base: string;
  /** `<http>/api/adapters/chatapi-direct` */
  direct: string;
  openAiUpstream: Upstream;
  anthropicUpstream: Upstream;
  plain: RawModel;
  faulty: RawModel;
  close(): Promise<void>;
}

/** `demo/faulty` answers by the last user message: `fail-500`, `fail-503`, `fail-mid-stream`, else like the echo service. */
function faultyAnswer(data: any, config: any): unknown {
  // Content as a string, or as text parts (the Responses and Messages translations send parts).
  const last = contentText(data.messages?.at(-1)?.content);
  if (last === 'fail-500') throw new RawServiceError('model.crashed', 'the model crashed', 500);
  if (last === 'fail-503') throw new RawServiceError('model.overloaded', 'the model is overloaded', 503);
  if (last === 'fail-mid-stream') {
    return (async function* failing() {
      yield {
        id: 'chatcmpl-f',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'faulty',
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      };
      throw new RawServiceError('model.crashed', 'the model crashed mid-stream', 500);
    })();
  }
  return echoAnswer(data, config);
}

export async function startChatFixture(pluginOptions: Record<string, unknown> = {}, options: GatewayOptions = {}): Promise<ChatFixture> {
  const openAiUpstream = await startOpenAiUpstream();
  const anthropicUpstream = await startAnthropicUpstream();
  process.env[ENGINE_KEY_ENV.openai] = ENGINE_KEYS.openai;
  process.env[ENGINE_KEY_ENV.anthropic] = ENGINE_KEYS.anthropic;
  const gw = await startTestGateway(
    chatConfigInput(pluginOptions, { openai: openAiUpstream.url, anthropic: anthropicUpstream.url }),
    options,
  );
  const sdk = { gateways: gw.grpcAddress, logger: silentLogger };
  const services: ModelService[] = [startEchoService({ ...sdk, connectionToken: CHAT_TOKENS.echo })];
  await Promise.all(services.map((s) => s.ready()));
  const plain = await startRawModel(gw.grpcAddress, CHAT_TOKENS.plain, (req) => ({ got: req.data, dataType: req.dataType }));
  const faulty = await startRawModel(gw.grpcAddress, CHAT_TOKENS.faulty, (req) => faultyAnswer(req.data, req.config));
  return {
    gw,
    base: `${gw.httpUrl}/api/adapters/chatapi`,
    direct: `${gw.httpUrl}/api/adapters/chatapi-direct`,
    openAiUpstream,
    anthropicUpstream,
    plain,
    faulty,
    async close() {
      plain.close();
      faulty.close();
      await Promise.all(services.map((s) => s.stop()));
      await gw.close();
      await openAiUpstream.close();
      await anthropicUpstream.close();
    },
  };
}
