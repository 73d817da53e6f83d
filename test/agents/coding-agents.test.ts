/**
 * The coding agents themselves, each with its default configuration, run non-interactively against
 * a gateway on loopback: Claude Code (`claude -p`), Codex CLI (`codex exec`) and OpenCode
 * (`opencode run`). Behind the gateway a scripted engine answers the agent's first request with a
 * call of its file-reading tool and the next with `DONE: <what the tool read>`, so an agent that
 * prints the file's secret word did a real tool round trip through the gateway's translations.
 * The agents come from npm (.ci/run installs them into .ci/agents); a missing one is skipped with a
 * line saying so, and fails the run under CI=true.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPrerequisite, runAgent, type AgentName, type AgentTarget } from '../support/coding-agents.js';
import { startTestGateway, testConfigInput, TEST_KEY, type TestGateway } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { responsesAnswer, startAgentEngine, type AgentEngine } from '../support/agent-engine.js';
import { startRawModel, type RawModel } from '../support/raw-model.js';

const SECRET = 'marmalade-7731';
const ENGINE_KEY_ENV = 'AGENTS_TEST_ENGINE_KEY';
const NATIVE_TOKEN = 'responses-native-token-0001';
const ready = (agent: AgentName) => requirePrerequisite(`coding agent ${agent}`, agentPrerequisite(agent));

describe('coding agents through the gateway', () => {
  let engine: AgentEngine;
  let gw: TestGateway;
  let native: RawModel | undefined;
  let scratch: string;
  const target = (name: string, model: string, extra: Partial<AgentTarget> = {}): AgentTarget => ({
    gateway: gw.httpUrl,
    key: TEST_KEY,
    model,
    cwd: join(scratch, 'project'),
    home: join(scratch, name),
    ...extra,
  });

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'gateway-agents-'));
    const project = join(scratch, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'notes.txt'), `The secret word is ${SECRET}.\n`);
    engine = await startAgentEngine(join(project, 'notes.txt'));
    process.env[ENGINE_KEY_ENV] = 'scripted-engine-key';
    const upstream = (api: 'openai' | 'anthropic') => ({
      api,
      baseUrl: api === 'openai' ? `${engine.url}/v1` : engine.url,
      apiKeyEnv: ENGINE_KEY_ENV,
      defaultModel: 'scripted',
    });
    gw = await startTestGateway(
      testConfigInput({
        services: [
          // A chat-completions engine, called by the names the agents default to.
          {
            id: 30,
            name: 'chat-engine',
            account: 'demo',
            public: true,
            family: 'openai',
            aliases: ['scripted-chat', 'claude-sonnet-4-5', 'gpt-5-codex'],
            upstream: upstream('openai'),
          },
          // An engine of Anthropic's own API family.
          {
            id: 31,
            name: 'anthropic-engine',
            account: 'demo',
            public: true,
            family: 'anthropic',
            aliases: ['scripted-anthropic'],
            upstream: upstream('anthropic'),
          },
          // An engine of the Responses API's own family: the body passes through untranslated.
          {
            id: 32,
            name: 'responses-engine',
            account: 'demo',
            public: true,
            family: 'openai',
            nativeResponses: true,
            aliases: ['scripted-responses'],
            connectionTokens: [{ token: NATIVE_TOKEN }],
          },
          // The same family through the upstream connector: the body goes to the engine's /v1/responses.
          {
            id: 33,
            name: 'responses-upstream',
            account: 'demo',
            public: true,
            family: 'openai',
            nativeResponses: true,
            aliases: ['scripted-responses-upstream'],
            upstream: upstream('openai'),
          },
        ],
        plugins: { enabled: ['chatapi', 'chatapi-direct', 'upstream'], options: { chatapi: { aliasPrefix: '/v1' } } },
      }),
    );
    native = await startRawModel(gw.grpcAddress, NATIVE_TOKEN, (req) =>
      responsesAnswer(req.data, join(project, 'notes.txt'), engine.calls),
    );
  }, 60_000);
  afterAll(async () => {
    native?.close();
    await gw?.close();
    await engine?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const roundTrip = async (agent: AgentName, t: AgentTarget, tool: string) => {
    const before = engine.calls.length;
    const run = await runAgent(agent, t, 'What is the secret word in notes.txt? Read the file.');
    const diagnostics = `exit ${run.code}\nstdout:\n${run.stdout.slice(-3000)}\nstderr:\n${run.stderr.slice(-3000)}`;
    expect(engine.calls.slice(before), diagnostics).toContain(tool);
    expect(run.stdout, diagnostics).toContain(`DONE: `);
    expect(run.stdout, diagnostics).toContain(SECRET);
    expect(run.code, diagnostics).toBe(0);
  };

  describe.skipIf(!ready('claude'))('Claude Code (claude -p)', () => {
    it('completes a tool round trip to a chat-completions engine (standard adapter at ANTHROPIC_BASE_URL=<gateway>)', async () => {
      await roundTrip('claude', target('claude-chat', 'claude-sonnet-4-5'), 'Read');
    }, 180_000);
    it('completes a tool round trip to an Anthropic-family engine through the direct adapter', async () => {
      await roundTrip(
        'claude',
        target('claude-direct', 'scripted-anthropic', { anthropicBase: `${gw.httpUrl}/api/adapters/chatapi-direct` }),
        'Read',
      );
    }, 180_000);
  });

  describe.skipIf(!ready('codex'))('Codex CLI (codex exec)', () => {
    it('completes a tool round trip to a chat-completions engine through the Responses translation', async () => {
      await roundTrip('codex', target('codex', 'gpt-5-codex'), 'exec_command');
    }, 180_000);
    it('completes a tool round trip to an engine that speaks the Responses API itself (passed through)', async () => {
      const before = native!.requests.length;
      await roundTrip('codex', target('codex-native', 'scripted-responses'), 'exec_command');
      expect(native!.requests.length).toBeGreaterThanOrEqual(before + 2);
    }, 180_000);
    it('completes a tool round trip to a Responses engine through the upstream connector (its /v1/responses)', async () => {
      const before = engine.requests.filter((r) => r.path === '/v1/responses').length;
      await roundTrip('codex', target('codex-upstream', 'scripted-responses-upstream'), 'exec_command');
      expect(engine.requests.filter((r) => r.path === '/v1/responses').length).toBeGreaterThanOrEqual(before + 2);
    }, 180_000);
  });

  describe.skipIf(!ready('opencode'))('OpenCode (opencode run)', () => {
    it('completes a tool round trip to a chat-completions engine', async () => {
      await roundTrip('opencode', target('opencode', 'scripted-chat'), 'read');
    }, 180_000);
    it('completes a tool round trip to an Anthropic-family engine through the direct adapter (its Anthropic provider)', async () => {
      await roundTrip(
        'opencode',
        target('opencode-anthropic', 'scripted-anthropic', { opencodeAnthropicBase: `${gw.httpUrl}/api/adapters/chatapi-direct/v1` }),
        'read',
      );
    }, 180_000);
  });
});
