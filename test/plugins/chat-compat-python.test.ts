/**
 * The official OpenAI (Responses API) and Anthropic (Messages API) Python clients, pinned in
 * .ci/requirements.txt, pointed at the adapter base URLs with no other change. The checks live in
 * test/python/responses_openai.py and test/python/messages_anthropic.py.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';
import { OTHER_ACCOUNT_KEY, READ_ONLY_KEY, TEST_KEY } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { describePythonFailure, pythonPrerequisite, runPython } from '../support/python.js';

const ready = requirePrerequisite('official openai and anthropic Python clients', pythonPrerequisite(['openai', 'anthropic', 'pydantic']));

type Line = { check: string; ok: boolean; error?: string; trace?: string };

describe.skipIf(!ready)('official Python clients: Responses and Messages APIs', () => {
  let fx: ChatFixture;
  beforeAll(async () => {
    fx = await startChatFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  const run = async (script: string, args: string[], checks: string[]) => {
    const result = await runPython(script, args, { env: { CHAT_KEY: TEST_KEY, READ_ONLY_KEY, OTHER_KEY: OTHER_ACCOUNT_KEY } });
    const lines = result.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    expect(
      lines.filter((l) => !l.ok).map((l) => `${l.check}: ${l.error}\n${l.trace}`),
      describePythonFailure(result),
    ).toEqual([]);
    expect(lines.map((l) => l.check)).toEqual(checks);
    expect(result.code).toBe(0);
  };

  it('openai: passes every check of responses_openai.py', async () => {
    await run(
      'responses_openai.py',
      [fx.base],
      ['create', 'stream', 'tool_round_trip', 'parse', 'previous_retrieve_delete', 'errors', 'cut_off_stream'],
    );
  });

  it('anthropic: passes every check of messages_anthropic.py', async () => {
    await run(
      'messages_anthropic.py',
      [fx.base, fx.direct],
      ['create_string_content', 'stream_helpers', 'tool_round_trip', 'count_tokens', 'direct_adapter', 'error_classes', 'cut_off_stream'],
    );
  });
});
