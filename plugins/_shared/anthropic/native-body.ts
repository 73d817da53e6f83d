/**
 * A Messages body as an Anthropic-family service takes it, from what the agents send: `content` as
 * a string (what SDK users and Claude Code's later turns write) becomes one text block, the form the
 * family's spec requires. A body with nothing to adapt goes on byte for byte.
 */

type Message = { role?: unknown; content?: unknown };

export function nativeMessagesBody(body: { messages: unknown[] }, text: string): string {
  if (!body.messages.some((m) => typeof (m as Message)?.content === 'string')) return text;
  return JSON.stringify({
    ...body,
    messages: body.messages.map((m) => {
      const message = m as Message;
      return typeof message?.content === 'string' ? { ...message, content: [{ type: 'text', text: message.content }] } : m;
    }),
  });
}
