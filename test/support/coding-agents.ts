/**
 * The coding agents the agent tests run (installed by .ci/run into .ci/agents from npm): where their
 * binaries are, and each one's non-interactive run against a gateway with the exact settings
 * docs/agents.md gives, in a scratch HOME so no user configuration is read, and offline (telemetry,
 * update checks and model-list fetches off).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Prerequisite } from './prerequisites.js';

const BIN = fileURLToPath(new URL('../../.ci/agents/node_modules/.bin/', import.meta.url));

export type AgentName = 'claude' | 'codex' | 'opencode';

export function agentPrerequisite(agent: AgentName): Prerequisite {
  const available = existsSync(join(BIN, agent));
  return { available, reason: `${agent} is not installed: npm install --prefix .ci/agents (what .ci/run does)` };
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface AgentTarget {
  /** The gateway's HTTP base, e.g. http://127.0.0.1:PORT */
  gateway: string;
  key: string;
  model: string;
  /** The scratch project folder the agent works in. */
  cwd: string;
  /** Its HOME (configuration and state). */
  home: string;
  /** Claude Code only: the adapter base its ANTHROPIC_BASE_URL names (default: the gateway root, /v1/messages). */
  anthropicBase?: string;
  /** OpenCode only: speak the Messages API (its bundled @ai-sdk/anthropic) to this base, e.g. the direct adapter's `/v1`. */
  opencodeAnthropicBase?: string;
}

/** The environment every agent runs with: no user config, no proxy, no terminal. */
function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
  };
}

/** Runs one agent with `prompt`; kills it after `timeoutMs`. */
export function runAgent(agent: AgentName, target: AgentTarget, prompt: string, timeoutMs = 120_000): Promise<AgentRun> {
  mkdirSync(target.home, { recursive: true });
  let args: string[];
  let env: NodeJS.ProcessEnv;
  if (agent === 'claude') {
    env = {
      ...baseEnv(target.home),
      ANTHROPIC_BASE_URL: target.anthropicBase ?? target.gateway,
      ANTHROPIC_API_KEY: target.key,
      ANTHROPIC_MODEL: target.model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: target.model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
    };
    args = ['-p', prompt];
  } else if (agent === 'codex') {
    mkdirSync(join(target.home, '.codex'), { recursive: true });
    writeFileSync(join(target.home, '.codex/config.toml'), codexConfig(target));
    env = { ...baseEnv(target.home), GATEWAY_API_KEY: target.key };
    args = ['exec', '--skip-git-repo-check', prompt];
  } else {
    mkdirSync(join(target.home, '.config/opencode'), { recursive: true });
    writeFileSync(join(target.home, '.config/opencode/opencode.json'), opencodeConfig(target));
    env = {
      ...baseEnv(target.home),
      GATEWAY_API_KEY: target.key,
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    };
    args = ['run', prompt];
  }
  return new Promise((resolve) => {
    const child = spawn(join(BIN, agent), args, { cwd: target.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** ~/.codex/config.toml: the gateway as a Responses provider, analytics and update checks off. */
export function codexConfig(target: AgentTarget): string {
  return [
    `model = "${target.model}"`,
    'model_provider = "gateway"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.gateway]',
    'name = "Model gateway"',
    `base_url = "${target.gateway}/v1"`,
    'env_key = "GATEWAY_API_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n');
}

/** ~/.config/opencode/opencode.json: the gateway as an OpenAI-compatible provider. */
export function opencodeConfig(target: AgentTarget): string {
  return JSON.stringify(
    {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: `gateway/${target.model}`,
      provider: {
        gateway: {
          npm: target.opencodeAnthropicBase ? '@ai-sdk/anthropic' : '@ai-sdk/openai-compatible',
          name: 'Model gateway',
          options: { baseURL: target.opencodeAnthropicBase ?? `${target.gateway}/v1`, apiKey: '{env:GATEWAY_API_KEY}' },
          models: { [target.model]: { name: target.model, tool_call: true } },
        },
      },
    },
    null,
    2,
  );
}
