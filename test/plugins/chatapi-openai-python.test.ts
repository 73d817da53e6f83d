/**
 * The official OpenAI Python client (openai, pinned in .ci/requirements.txt) pointed at the adapter
 * base URL with no other change. The checks live in test/python/chatapi_openai.py.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITED_KEY } from '../support/chat.js';
import { startChatFixture, type ChatFixture } from '../support/chat-fixture.js';
import { OTHER_ACCOUNT_KEY, READ_ONLY_KEY, TEST_KEY } from '../support/gateway.js';
import { requirePrerequisite } from '../support/prerequisites.js';
import { describePythonFailure, pythonPrerequisite, runPython } from '../support/python.js';

const ready = requirePrerequisite('official openai Python client', pythonPrerequisite(['openai']));

describe.skipIf(!ready)('official openai Python client against the standard adapter', () => {
  let fx: ChatFixture;
  beforeAll(async () => {
    fx = await startChatFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('passes every check of chatapi_openai.py', async () => {
    const result = await runPython('chatapi_openai.py', [fx.base], {
      env: { CHAT_KEY: TEST_KEY, READ_ONLY_KEY, OTHER_KEY: OTHER_ACCOUNT_KEY, LIMITED_KEY },
    });
    const lines = result.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { check: string; ok: boolean; error?: string; trace?: string });
    const failures = lines.filter((l) => !l.ok).map((l) => `${l.check}: ${l.error}\n${l.trace}`);
    expect(failures, describePythonFailure(result)).toEqual([]);
    expect(lines.map((l) => l.check)).toEqual([
      'chat_completion',
      'chat_stream',
      'chat_stream_include_usage',
      'chat_stream_helper',
      'tool_call_through_proxy',
      'errors',
      'error_mid_stream',
      'models',
      'embeddings',
      'legacy_completions',
    ]);
    expect(result.code).toBe(0);
  });
});
