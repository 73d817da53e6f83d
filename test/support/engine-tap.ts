/**
 * A recording pass-through in front of a real engine: every request goes to the engine unchanged and
 * its answer back unchanged, and both are kept, so a test can compare what a client printed with
 * what the engine actually said (a real model's words cannot be known in advance).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TappedExchange {
  path: string;
  /** The request body as JSON (undefined when empty or not JSON). */
  request: any;
  status: number;
  /** The engine's answer body as text: JSON, or the SSE stream as it came. */
  answer: string;
  /** From the request's arrival to the answer's end. */
  ms: number;
}

export interface EngineTap {
  /** Where to point the client instead of the engine (same paths). */
  url: string;
  exchanges: TappedExchange[];
  /** Sends later requests to another engine (one started fresh), at the same tap URL. */
  forwardTo(engineUrl: string): void;
  close(): Promise<void>;
}

const parseJson = (text: string): any => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Starts the tap; until {@link EngineTap.forwardTo} names an engine (or `engineUrl` does), requests fail. */
export async function startEngineTap(engineUrl?: string): Promise<EngineTap> {
  let target = engineUrl ? new URL(engineUrl) : undefined;
  const exchanges: TappedExchange[] = [];
  const server = http.createServer((req, res) => {
    const arrived = performance.now();
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(body);
      if (!target) return res.destroy();
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (answer) => {
          const pieces: Buffer[] = [];
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (c: Buffer) => {
            pieces.push(c);
            res.write(c);
          });
          answer.on('end', () => {
            exchanges.push({
              path: req.url ?? '',
              request: parseJson(sent.toString()),
              status: answer.statusCode ?? 0,
              answer: Buffer.concat(pieces).toString(),
              ms: Math.round(performance.now() - arrived),
            });
            res.end();
          });
          answer.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => res.destroy());
      // The client leaving ends the engine request too, as it would without the tap.
      res.on('close', () => upstream.destroy());
      upstream.end(sent);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    forwardTo: (url) => (target = new URL(url)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The assistant text of a chat-completions answer, whole or streamed (the `delta.content` pieces joined). */
export function chatAnswerText(answer: string): string {
  const whole = parseJson(answer);
  if (whole) return whole.choices?.[0]?.message?.content ?? '';
  let text = '';
  for (const line of answer.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const chunk = parseJson(line.slice(5).trim());
    text += chunk?.choices?.[0]?.delta?.content ?? '';
  }
  return text;
}
