import { describe, expect, it } from 'vitest';
import { outputMatches, pythonModules, withDocsPorts, type DocExample } from '../support/doc-examples.js';

/** How the docs-example test compares what an example printed with the ```text block after it. */
describe('docs example output blocks', () => {
  it('matches up to IDs, timestamps, line breaks and … elisions', () => {
    const shown =
      'task 6192f0e6-b8cd-4eef-8c41-47249196ba8f\n{"taskId":"6192f0e6-…","callerId":1,\n "createdAt":1795260214531}\n{"id":"resp_6e38332280e9fc47c062e580","created_at":1795426168,…}';
    const printed =
      'task 0a3e2b1c-1111-2222-3333-444455556666\n{"taskId":"0a3e2b1c-1111-2222-3333-444455556666","callerId":1,"createdAt":1764000000000}\n{"id":"resp_0074ec137227b996fa865286","created_at":1764000000,"status":"completed"}\n';
    expect(outputMatches(shown, printed)).toBe(true);
    // Between commas an elision may stand for no member at all.
    expect(outputMatches('{"a":1,…,"c":3}', '{"a":1,"c":3}')).toBe(true);
    expect(outputMatches('{"a":1,…,"c":3}', '{"a":1,"b":2,"c":3}')).toBe(true);
  });

  it('refuses a different value, a missing line, an extra line and an elision that skips nothing real', () => {
    expect(outputMatches('{"upper":"HELLO"}', '{"upper":"HELLOX"}')).toBe(false);
    expect(outputMatches('{"upper":"HELLO"}\n{"words":3}', '{"upper":"HELLO"}')).toBe(false);
    expect(outputMatches('{"upper":"HELLO"}', '{"upper":"HELLO"}\n{"words":3}')).toBe(false);
    // `…}}]` says the message and the choice close together: they do not.
    expect(
      outputMatches(
        '{"choices":[{"message":{"content":"hi",…}}]}',
        '{"choices":[{"message":{"content":"hi","refusal":null},"finish_reason":"stop"}]}',
      ),
    ).toBe(false);
    expect(
      outputMatches(
        '{"choices":[{"message":{"content":"hi",…},…}]}',
        '{"choices":[{"message":{"content":"hi","refusal":null},"finish_reason":"stop"}]}',
      ),
    ).toBe(true);
  });

  it("puts the test demo's ports back to the docs' 8080 and 9090", () => {
    expect(withDocsPorts('connected to gateway 127.0.0.1:40123, http://localhost:40999/x, :401234', 40999, 40123)).toBe(
      'connected to gateway 127.0.0.1:9090, http://localhost:8080/x, :401234',
    );
  });

  it('finds the Python modules an example imports or runs, not the stubs it generates', () => {
    const example = (language: DocExample['language'], code: string) => ({ language, code }) as DocExample;
    expect(pythonModules(example('python', 'from openai import OpenAI\nimport os, json\n'))).toEqual(['json', 'openai', 'os']);
    expect(
      pythonModules(
        example('sh', "python -m grpc_tools.protoc -Iproto proto/gate.proto\npython - <<'EOF'\nimport grpc, gate_pb2, gate_pb2_grpc\nEOF"),
      ),
    ).toEqual(['grpc', 'grpc_tools']);
    expect(pythonModules(example('sh', 'curl -s http://127.0.0.1:8080/health'))).toEqual([]);
  });
});
