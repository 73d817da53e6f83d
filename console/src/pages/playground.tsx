/**
 * Playground: streamed chat with any model the account may call, made with the console's session (the
 * chat API takes it as a caller of the session's current account), and the same request as curl and
 * OpenAI SDK code that reads an application's key from `GATEWAY_API_KEY`.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, call, CHAT, errorOf, items, request } from '../api.js';
import { useApp } from '../app-state.js';
import { Button, Card, CopyButton, ErrorNote, Field, Page, useAction, useLoad } from '../ui.js';

interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function PlaygroundPage() {
  return (
    <Page title="Playground" description="Chat with any model this account may call, streamed, and copy the same request as code.">
      <Playground />
    </Page>
  );
}

/** Reads an OpenAI chat stream (server-sent events) and hands each content delta to `onDelta`. */
async function readStream(response: Response, onDelta: (text: string) => void): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; error?: { message?: string; code?: string } };
        if (chunk.error) throw new ApiError(500, chunk.error.code ?? 'STREAM_ERROR', chunk.error.message ?? 'stream error');
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) onDelta(delta);
      }
    }
  }
}

function Playground() {
  const app = useApp();
  const models = useLoad(() => call(`${CHAT}/models`).then((a) => items<{ id: string }>(a).map((m) => m.id)), [app.account.name]);
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [input, setInput] = useState('');
  const [messages, setMessages] = useState<Message[]>([]);
  const [tab, setTab] = useState<'curl' | 'python' | 'node'>('curl');
  const action = useAction();
  const stop = useRef<AbortController | null>(null);
  const chosen = model || models.data?.[0] || '';

  const requestMessages = (next: Message[]): Message[] => (system.trim() ? [{ role: 'system', content: system.trim() }, ...next] : next);

  const send = (e: Event) => {
    e.preventDefault();
    if (!input.trim() || !chosen) return;
    const history: Message[] = [...messages, { role: 'user', content: input.trim() }];
    setMessages([...history, { role: 'assistant', content: '' }]);
    setInput('');
    void action.run(async () => {
      stop.current = new AbortController();
      const response = await request(`${CHAT}/chat/completions`, {
        body: { model: chosen, messages: requestMessages(history), stream: true },
        signal: stop.current.signal,
      });
      if (!response.ok) {
        setMessages(history);
        throw await errorOf(response);
      }
      let text = '';
      await readStream(response, (delta) => {
        text += delta;
        setMessages([...history, { role: 'assistant', content: text }]);
      });
    });
  };

  const example = requestMessages(
    input.trim()
      ? [...messages, { role: 'user', content: input.trim() }]
      : messages.length
        ? messages
        : [{ role: 'user', content: 'Hello!' }],
  );
  const origin = location.origin;
  const code = {
    curl: `curl ${origin}${CHAT}/chat/completions \\\n  -H "Authorization: Bearer $GATEWAY_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '${JSON.stringify({ model: chosen, messages: example, stream: true }).replace(/'/g, "'\\''")}'`,
    python: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${origin}${CHAT}", api_key=os.environ["GATEWAY_API_KEY"])\nstream = client.chat.completions.create(\n    model=${JSON.stringify(chosen)},\n    messages=${JSON.stringify(example, null, 4).replace(/\n/g, '\n    ')},\n    stream=True,\n)\nfor chunk in stream:\n    print(chunk.choices[0].delta.content or "", end="")`,
    node: `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${origin}${CHAT}', apiKey: process.env.GATEWAY_API_KEY });\nconst stream = await client.chat.completions.create({\n  model: ${JSON.stringify(chosen)},\n  messages: ${JSON.stringify(example, null, 2).replace(/\n/g, '\n  ')},\n  stream: true,\n});\nfor await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`,
  };
  const codeRef = useRef<HTMLPreElement>(null);

  return (
    <div class="grid two wide-first">
      <Card title="Chat">
        <ErrorNote error={models.error} />
        <div class="row">
          <Field label="Model">
            {(id) => (
              <select id={id} value={chosen} onChange={(e) => setModel(e.currentTarget.value)}>
                {(models.data ?? []).map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="System prompt">
            {(id) => <input id={id} value={system} onInput={(e) => setSystem(e.currentTarget.value)} placeholder="optional" />}
          </Field>
        </div>
        <div class="chat" aria-live="polite" aria-label="Conversation" role="log">
          {messages.length === 0 && <p class="muted">Send a message to start.</p>}
          {messages.map((m, i) => (
            <div class={`msg msg-${m.role}`} key={i}>
              <span class="msg-role">{m.role === 'user' ? 'You' : chosen}</span>
              <p>{m.content || (action.busy && i === messages.length - 1 ? '…' : '')}</p>
            </div>
          ))}
        </div>
        <ErrorNote error={action.error} />
        <form class="composer" onSubmit={send}>
          <label class="sr-only" for="prompt">
            Message
          </label>
          <textarea id="prompt" rows={2} value={input} onInput={(e) => setInput(e.currentTarget.value)} placeholder="Write a message" />
          <div class="form-actions">
            {action.busy ? (
              <Button onClick={() => stop.current?.abort()}>Stop</Button>
            ) : (
              <Button type="submit" variant="primary" disabled={!chosen}>
                Send
              </Button>
            )}
            <Button variant="ghost" onClick={() => setMessages([])} disabled={!messages.length}>
              Clear
            </Button>
          </div>
        </form>
      </Card>
      <Card title="As code">
        <div class="tabs" role="tablist" aria-label="Language">
          {(['curl', 'python', 'node'] as const).map((t) => (
            <button
              type="button"
              role="tab"
              id={`tab-${t}`}
              aria-selected={tab === t}
              aria-controls="code-panel"
              class={tab === t ? 'on' : ''}
              key={t}
              onClick={() => setTab(t)}
            >
              {t === 'curl' ? 'curl' : t === 'python' ? 'OpenAI SDK (Python)' : 'OpenAI SDK (Node)'}
            </button>
          ))}
        </div>
        <div id="code-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
          <pre class="code" ref={codeRef} data-testid="code" tabIndex={0}>
            {code[tab]}
          </pre>
          <CopyButton text={code[tab]} label="Copy the code" target={() => codeRef.current} />
          <p class="hint">
            The code reads an application's API key (create one under API tokens) from GATEWAY_API_KEY; the console itself calls with your
            session.
          </p>
        </div>
      </Card>
    </div>
  );
}
