/**
 * Responses tools as chat tools (responses-and-messages.md A.1, C.2). Function tools become Chat's
 * nested ones; a `namespace` (Codex's `multi_agent_v1`) is flattened into its function tools, each
 * under its own name unless another tool has that name too (then `<namespace>__<name>`), and the
 * map back turns the engine's calls into `function_call` items with `namespace` and the inner name.
 * A `custom` (free-form) tool becomes a function tool with one string parameter, `input`, and the
 * engine's calls of it come back as `custom_tool_call` items with that string as their `input`
 * (a grammar `format` cannot be enforced on a chat engine: its definition goes into the description).
 * Hosted tools (`web_search`, `file_search`, `code_interpreter`, `computer_use`…) run at OpenAI,
 * not at a chat engine: they are dropped and named (the route says so in a header and a log line),
 * unless `tool_choice` forces one, which is refused.
 */
import { gatewayError } from '../../../core/plugins/index.js';
import { isJsonObject as isObject, type JsonObject as Json } from '../../_shared/openai/json-object.js';

const invalid = (param: string, reason: string) => gatewayError('VALIDATION_FAILED', { param, args: { reason: `${param} ${reason}` } });

/** The Responses tool a chat function stands for: its name, namespace, and whether it is a custom tool. */
export interface ResponsesToolName {
  name: string;
  namespace?: string;
  custom?: true;
}

/** A chat function name → the Responses tool it stands for. */
export interface ToolNames {
  /** The Responses `name` and `namespace` of a chat function name; the name itself when not flattened. */
  toResponses(chatName: string): ResponsesToolName;
  /** The chat function name of a Responses call (`name`, and `namespace` when it has one). */
  toChat(name: string, namespace: unknown): string;
}

export interface ChatTools {
  tools: Json[];
  /** Types of the hosted tools left out, in request order, each once. */
  dropped: string[];
  names: ToolNames;
}

const PLAIN: ToolNames = { toResponses: (name) => ({ name }), toChat: (name) => name };

export function toChatTools(tools: readonly unknown[] | undefined): ChatTools {
  if (!tools?.length) return { tools: [], dropped: [], names: PLAIN };
  const flat: { fn: Json; namespace?: string; custom?: true; param: string }[] = [];
  const dropped: string[] = [];
  tools.forEach((tool, index) => {
    const t = tool as Json;
    if (t.type === 'function') flat.push({ fn: t, param: `tools[${index}]` });
    else if (t.type === 'namespace') {
      if (typeof t.name !== 'string' || !t.name) throw invalid(`tools[${index}].name`, 'is required');
      const inner = Array.isArray(t.tools) ? t.tools : [];
      inner.forEach((fn, j) => {
        if (!isObject(fn) || fn.type !== 'function')
          throw invalid(
            `tools[${index}].tools[${j}].type`,
            `'${String(isObject(fn) ? fn.type : fn)}' is not supported in a namespace for chat services: function tools only`,
          );
        flat.push({ fn, namespace: t.name as string, param: `tools[${index}].tools[${j}]` });
      });
    } else if (t.type === 'custom') {
      flat.push({ fn: customAsFunction(t), custom: true, param: `tools[${index}]` });
    } else if (!dropped.includes(String(t.type))) dropped.push(String(t.type));
  });
  const count = new Map<string, number>();
  for (const { fn } of flat) count.set(String(fn.name), (count.get(String(fn.name)) ?? 0) + 1);
  const chatName = (name: string, namespace?: string) => (namespace && (count.get(name) ?? 0) > 1 ? `${namespace}__${name}` : name);
  const back = new Map<string, ResponsesToolName>();
  const out = flat.map(({ fn, namespace, custom, param }) => {
    if (typeof fn.name !== 'string' || !fn.name) throw invalid(`${param}.name`, 'is required');
    const name = chatName(fn.name, namespace);
    if (namespace) back.set(name, { name: fn.name, namespace });
    else if (custom) back.set(name, { name: fn.name, custom });
    const chat: Json = { name };
    if (fn.description !== undefined && fn.description !== null) chat.description = fn.description;
    if (fn.parameters !== undefined && fn.parameters !== null) chat.parameters = fn.parameters;
    if (fn.strict !== undefined && fn.strict !== null) chat.strict = fn.strict;
    return { type: 'function', function: chat };
  });
  const names: ToolNames =
    back.size === 0
      ? PLAIN
      : {
          toResponses: (name) => back.get(name) ?? { name },
          toChat: (name, namespace) => (typeof namespace === 'string' && namespace ? chatName(name, namespace) : name),
        };
  return { tools: out, dropped, names };
}

/** The one string parameter a custom tool's free-form input travels in. */
export const CUSTOM_INPUT = 'input';

/** A `custom` tool as a function tool taking its free-form input as one string. */
function customAsFunction(tool: Json): Json {
  const format = isObject(tool.format) && tool.format.type === 'grammar' ? tool.format : undefined;
  const grammar = format ? ` It must match this ${String(format.syntax)} grammar:\n${String(format.definition)}` : '';
  const description = typeof tool.description === 'string' ? tool.description : undefined;
  return {
    name: tool.name,
    ...(description !== undefined ? { description } : {}),
    parameters: {
      type: 'object',
      properties: { [CUSTOM_INPUT]: { type: 'string', description: `The tool's free-form input, as raw text.${grammar}` } },
      required: [CUSTOM_INPUT],
      additionalProperties: false,
    },
  };
}

/** A custom tool's input from the chat call's arguments (`{"input": "…"}`); the arguments as they are when not so. */
export function customInput(args: string): string {
  try {
    const value = JSON.parse(args) as unknown;
    if (isObject(value) && typeof value[CUSTOM_INPUT] === 'string') return value[CUSTOM_INPUT];
  } catch {
    // An engine that ignored the schema: its raw text is the input.
  }
  return args;
}

/** A `custom_tool_call` item as the chat tool call it came from: its input as the one string argument. */
export const customCallAsChat = (item: Json): Json => ({
  id: item.call_id,
  type: 'function',
  function: { name: item.name, arguments: JSON.stringify({ [CUSTOM_INPUT]: typeof item.input === 'string' ? item.input : '' }) },
});

/** Chat's tool_choice for a Responses one; forcing a hosted tool the engine will not have is a 400. */
export function toChatToolChoice(choice: unknown, names: ToolNames): unknown {
  if (typeof choice === 'string') return choice;
  if (!isObject(choice)) throw invalid('tool_choice', 'must be a string or an object');
  if (choice.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: names.toChat(choice.name, choice.namespace) } };
  if (choice.type === 'custom' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  if (choice.type === 'allowed_tools') return choice.mode === 'required' ? 'required' : 'auto';
  throw invalid(
    'tool_choice.type',
    `'${String(choice.type)}' cannot be forced on a chat service, which runs no hosted tools: use none, auto, required or a function`,
  );
}
