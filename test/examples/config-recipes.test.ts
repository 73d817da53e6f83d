/**
 * The config recipes in examples/configs/ load and work. The pattern for a new recipe: add an entry
 * to RECIPES with the environment it needs (its secrets), and a `check` that starts gateways from it
 * and makes a request through them; a recipe that needs something outside Node (MongoDB, an engine)
 * asks for it with a Prerequisite, so it skips loudly (and fails under CI=true) without it.
 * Every file in examples/configs/ must have an entry: a recipe nobody loads would rot.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../core/config/load.js';
import { createGateway, type Gateway } from '../../core/gateway.js';
import { silentLogger } from '../../core/observe/logger.js';
import { ModelService } from '../../sdk/index.js';
import { silentLogger as sdkSilentLogger } from '../../sdk/service/logger.js';
import { upperHandlers } from '../../examples/upper-service/service.js';
import { eventually } from '../support/gateway.js';
import { mongoPrerequisite, startMongo } from '../support/mongo-server.js';
import { requirePrerequisite, type Prerequisite } from '../support/prerequisites.js';
import { repoRoot } from '../support/python.js';
import { startAnthropicUpstream, startOpenAiUpstream } from '../support/upstream.js';
import { llamaCppPrerequisite, startLlamaCppServer } from '../support/llama-cpp.js';
import { freePort } from '../support/ports.js';

const RECIPES_DIR = join(repoRoot, 'examples', 'configs');

interface Recipe {
  /** The environment the recipe's ${VAR}s need (secrets, addresses). */
  env: Record<string, string>;
  prerequisite?: () => Prerequisite;
  /** Starts gateways from the recipe and makes requests through them. */
  check(start: (env?: Record<string, string>) => Promise<RunningGateway>): Promise<void>;
}

interface RunningGateway {
  gateway: Gateway;
  httpUrl: string;
  grpcAddress: string;
}

/** The upper-case service of examples/upper-service, in this process, dialling the given gateways. */
async function upperService(token: string, ...gateways: string[]): Promise<ModelService> {
  const service = new ModelService(upperHandlers, {
    descriptor: { name: 'upper' },
    gateways,
    connectionToken: token,
    logger: sdkSilentLogger,
  }).start();
  await service.ready();
  return service;
}

const post = (url: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const RECIPES: Record<string, Recipe> = {
  'custom-plugin.yaml': {
    env: {},
    async check(start) {
      const gw = await start();
      const service = await upperService('acme-upper-token-0123', gw.grpcAddress);
      try {
        const answer = await post(
          `${gw.httpUrl}/api/custom/shout/acme/upper`,
          { 'PLATFORM-API-KEY': 'acme-api-key-0123456789' },
          { text: 'hello' },
        );
        expect(answer.status).toBe(200);
        expect(await answer.json()).toEqual({ greeting: 'HEY', answer: { upper: 'HELLO' } });
      } finally {
        await service.stop();
      }
    },
  },
  'mongodb-cluster.yaml': {
    env: { ACME_API_KEY: 'acme-cluster-key-0123456789', UPPER_SERVICE_TOKEN: 'acme-cluster-upper-0123' },
    prerequisite: mongoPrerequisite,
    async check(start) {
      const mongo = await startMongo();
      const [grpcA, grpcB] = [await freePort(), await freePort()];
      const cluster = { MONGODB_URI: mongo.uri, GATEWAY_A: `127.0.0.1:${grpcA}`, GATEWAY_B: `127.0.0.1:${grpcB}` };
      const a = await start({ ...cluster, GATEWAY_SELF: cluster.GATEWAY_A, GRPC_PORT: String(grpcA) });
      const b = await start({ ...cluster, GATEWAY_SELF: cluster.GATEWAY_B, GRPC_PORT: String(grpcB) });
      // The service dials gateway A only; a task created there is read back through gateway B.
      const service = await upperService('acme-cluster-upper-0123', a.grpcAddress);
      try {
        const key = { 'PLATFORM-API-KEY': 'acme-cluster-key-0123456789' };
        const created = await post(`${a.httpUrl}/api/platformgateway/account/acme/model/upper/async/predict`, key, { text: 'shared' });
        expect(created.status).toBe(200);
        const taskId = (await created.json()) as string;
        let answer: Response | undefined;
        await eventually(
          async () => {
            answer = await fetch(`${b.httpUrl}/api/platformgateway/account/acme/async/task/${taskId}/response`, { headers: key });
            return answer.status !== 204;
          },
          20_000,
          'the task to complete, seen from gateway B',
        );
        expect(answer!.status).toBe(200);
        expect(await answer!.json()).toEqual({ upper: 'SHARED' });
      } finally {
        await service.stop();
        await mongo.stop();
      }
    },
  },
  'upstream-engines.yaml': {
    env: {},
    prerequisite: llamaCppPrerequisite,
    async check(start) {
      // The connector reads engine keys from the process environment when it attaches (apiKeyEnv).
      process.env.OPENAI_API_KEY = 'sk-recipe-openai';
      process.env.ANTHROPIC_API_KEY = 'sk-ant-recipe';
      // The SaaS APIs, vLLM and Ollama as recorded stand-ins on loopback; llama.cpp for real.
      const openai = await startOpenAiUpstream();
      const anthropic = await startAnthropicUpstream();
      const llama = await startLlamaCppServer();
      try {
        const gw = await start({
          OPENAI_BASE_URL: `${openai.url}/v1`,
          ANTHROPIC_BASE_URL: anthropic.url,
          VLLM_BASE_URL: `${openai.url}/v1`,
          OLLAMA_BASE_URL: `${openai.url}/v1`,
          LLAMA_CPP_BASE_URL: `${llama.url}/v1`,
          LLAMA_CPP_MODEL: llama.model,
        });
        const key = { authorization: 'Bearer acme-api-key-0123456789' };
        await eventually(
          () => [3, 4, 5].every((id) => gw.gateway.gate.instances(id)[0]?.state === 'serving'),
          15_000,
          'the engines to pass their health checks',
        );
        // Anthropic's engine takes Messages bodies: the Messages route relays them as they are.
        const message = await post(
          `${gw.httpUrl}/api/adapters/chatapi/v1/messages`,
          { 'x-api-key': 'acme-api-key-0123456789' },
          { model: 'acme/claude/haiku', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
        );
        expect(message.status).toBe(200);
        expect(((await message.json()) as { content: { text: string }[] }).content[0]!.text).toBe('Claude heard: hi');
        expect(anthropic.requests.at(-1)!.body.model).toBe('claude-3-5-haiku-latest');
        for (const model of ['acme/openai/mini', 'acme/vllm', 'acme/ollama', 'acme/llamacpp']) {
          const answer = await post(`${gw.httpUrl}/api/adapters/chatapi/v1/chat/completions`, key, {
            model,
            max_tokens: 8,
            messages: [{ role: 'user', content: 'hi' }],
          });
          expect(answer.status, model).toBe(200);
          const body = (await answer.json()) as { choices: { message: { content: string } }[] };
          expect(body.choices[0]!.message.content.length, model).toBeGreaterThan(0);
        }
        const chats = openai.requests.filter((r) => r.path === '/v1/chat/completions');
        expect(chats.map((r) => r.body.model)).toEqual(['gpt-4o-mini', 'Qwen/Qwen2.5-0.5B-Instruct', 'qwen2.5:0.5b']);
        // The key goes only to the engine whose service names its variable.
        expect(chats.map((r) => r.headers.authorization)).toEqual(['Bearer sk-recipe-openai', undefined, undefined]);
        expect(anthropic.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-recipe');
      } finally {
        delete process.env.OPENAI_API_KEY;
        delete process.env.ANTHROPIC_API_KEY;
        await llama.close();
        await anthropic.close();
        await openai.close();
      }
    },
  },
};

describe('config recipes (examples/configs)', () => {
  it('every recipe file has a test entry', () => {
    const files = readdirSync(RECIPES_DIR).filter((f) => /\.(ya?ml|json)$/.test(f));
    expect(files.filter((f) => !(f in RECIPES))).toEqual([]);
  });

  for (const [file, recipe] of Object.entries(RECIPES)) {
    const ready = recipe.prerequisite ? requirePrerequisite(`config recipe ${file}`, recipe.prerequisite()) : true;
    it.skipIf(!ready)(
      `${file} loads and serves requests`,
      async () => {
        const started: Gateway[] = [];
        const start = async (env: Record<string, string> = {}): Promise<RunningGateway> => {
          const config = loadConfigFile(join(RECIPES_DIR, file), { env: { HTTP_PORT: '0', GRPC_PORT: '0', ...recipe.env, ...env } });
          const gateway = await createGateway(config, { logger: silentLogger() });
          started.push(gateway);
          const { httpUrl, grpcAddress } = await gateway.start();
          return { gateway, httpUrl, grpcAddress };
        };
        try {
          await recipe.check(start);
        } finally {
          for (const gateway of started.reverse()) await gateway.close();
        }
      },
      60_000,
    );
  }
});
