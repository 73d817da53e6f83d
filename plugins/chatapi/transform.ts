/**
 * Pure transforms of the standard chat adapter: the split of a request into predict data and
 * config, and embeddings in the encoding the caller asked for. No HTTP here; unit-tested alone.
 */
import { gatewayError, parsedPayload, type GateRequest } from '../../core/plugins/index.js';
import type { AnswerDefaults } from '../_shared/openai/answers.js';
import { isJsonObject as isObject, parseJsonObject } from '../_shared/openai/json-object.js';
import { topLevelValues } from '../_shared/openai/json-text.js';

/** The OpenAI endpoints the adapter serves, with the body fields that go into the predict data. */
export type Endpoint = 'chat' | 'completions' | 'embeddings';

/** Fields of each endpoint's body that form the predict data; every other field is config. */
export const DATA_FIELDS: Readonly<Record<Endpoint, ReadonlySet<string>>> = {
  chat: new Set(['model', 'messages', 'stream']),
  completions: new Set(['model', 'prompt', 'stream']),
  embeddings: new Set(['model', 'input']),
};

export interface SplitRequest {
  /** Predict data as JSON text. */
  data: string;
  /** The data object, handed beside its text to an in-process engine (core's parsedPayload). */
  dataObject: Record<string, unknown>;
  /** Predict config as JSON text (`{}` when the body has no other field). */
  config: string;
  /** The config object, for the registry validation. */
  configObject: Record<string, unknown>;
}

/**
 * The split rule: the endpoint's data fields go into the predict data, everything else into the
 * config. `model` in the data is the model forwarded to the service (the third part of the model id,
 * else the service's default model; left out when there is neither).
 *
 * Given the body's own JSON `text`, the two JSON texts are assembled from the members' raw text
 * instead of serialising the parsed values again: the messages, often most of the body, pass
 * through as they came (a 40 KB conversation: about 6 µs instead of 60).
 */
export function splitRequest(
  body: Record<string, unknown>,
  endpoint: Endpoint,
  forwardedModel: string | undefined,
  text?: string,
): SplitRequest {
  const dataFields = DATA_FIELDS[endpoint];
  const members = text === undefined ? undefined : topLevelValues(text);
  return (members && splitText(body, dataFields, forwardedModel, members)) ?? splitBySerialising(body, dataFields, forwardedModel);
}

/** The split from the members' raw text; undefined if a key of the parsed body has none. */
function splitText(
  body: Record<string, unknown>,
  dataFields: ReadonlySet<string>,
  forwardedModel: string | undefined,
  members: ReadonlyMap<string, string>,
): SplitRequest | undefined {
  const data: string[] = [];
  const config: string[] = [];
  const dataObject: Record<string, unknown> = {};
  const configObject: Record<string, unknown> = {};
  for (const key in body) {
    if (key === 'model') continue;
    const member = members.get(key);
    if (member === undefined) return undefined;
    const pair = `${JSON.stringify(key)}:${member}`;
    if (dataFields.has(key)) {
      data.push(pair);
      dataObject[key] = body[key];
    } else {
      config.push(pair);
      configObject[key] = body[key];
    }
  }
  if (forwardedModel !== undefined) {
    data.push(`"model":${JSON.stringify(forwardedModel)}`);
    dataObject.model = forwardedModel;
  }
  return { data: `{${data.join(',')}}`, dataObject, config: `{${config.join(',')}}`, configObject };
}

/**
 * The predict request of a split with its payload types: the JSON texts for a dialled-in service, and
 * beside them the objects, so that an in-process engine (the upstream connector) and failover read
 * them without parsing the texts again.
 */
export function predictOf(split: SplitRequest, types: { data?: string; config?: string }): GateRequest {
  return {
    predict: {
      data: parsedPayload(split.data, split.dataObject, types.data),
      config: parsedPayload(split.config, split.configObject, types.config),
    },
  };
}

function splitBySerialising(
  body: Record<string, unknown>,
  dataFields: ReadonlySet<string>,
  forwardedModel: string | undefined,
): SplitRequest {
  const data: Record<string, unknown> = {};
  const config: Record<string, unknown> = {};
  for (const key in body) {
    if (key === 'model') continue;
    if (dataFields.has(key)) data[key] = body[key];
    else config[key] = body[key];
  }
  if (forwardedModel !== undefined) data.model = forwardedModel;
  return { data: JSON.stringify(data), dataObject: data, config: JSON.stringify(config), configObject: config };
}

/**
 * An embeddings answer in the encoding the caller asked for. The Node SDK asks for `base64` by
 * default and decodes every item as little-endian float32, so float arrays from the service are
 * encoded when base64 was asked, and base64 from the service is decoded when floats were asked.
 * `data` is kept ordered by `index`. The original text is returned when nothing needs changing.
 */
export function encodeEmbeddings(json: string, encoding: 'float' | 'base64', defaults: AnswerDefaults, service = 'the service'): string {
  const answer = parseJsonObject(json);
  if (!answer) return json;
  let changed = false;
  if (answer.object === undefined) {
    answer.object = 'list';
    changed = true;
  }
  if (typeof answer.model !== 'string') {
    answer.model = defaults.model;
    changed = true;
  }
  if (Array.isArray(answer.data)) {
    const data = answer.data as unknown[];
    let previous = -Infinity;
    let sorted = true;
    for (const item of data) {
      if (!isObject(item)) continue;
      if (typeof item.index === 'number') {
        if (item.index < previous) sorted = false;
        previous = item.index;
      }
      if (item.object === undefined) {
        item.object = 'embedding';
        changed = true;
      }
      let embedding = item.embedding;
      // One vector per token (llama.cpp's server without pooling): mean-pooled into one, as its
      // `--pooling mean` would; base64 of the nested arrays would decode as NaN in the SDKs.
      if (Array.isArray(embedding) && embedding.some(Array.isArray)) {
        embedding = item.embedding = meanPool(embedding as unknown[], service);
        changed = true;
      }
      if (encoding === 'base64' && Array.isArray(embedding)) {
        item.embedding = floatsToBase64(embedding as number[]);
        changed = true;
      } else if (encoding === 'float' && typeof embedding === 'string') {
        item.embedding = base64ToFloats(embedding);
        changed = true;
      }
    }
    if (!sorted) {
      data.sort((a, b) => (isObject(a) ? Number(a.index) : 0) - (isObject(b) ? Number(b.index) : 0));
      changed = true;
    }
  }
  return changed ? JSON.stringify(answer) : json;
}

/** The mean of per-token vectors; a token that is not a vector of finite numbers is a bad answer. */
export function meanPool(tokens: readonly unknown[], service = 'the service'): number[] {
  const width = Array.isArray(tokens[0]) ? tokens[0].length : 0;
  const sum = new Array<number>(width).fill(0);
  for (const token of tokens) {
    if (!Array.isArray(token) || token.length !== width || !token.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw gatewayError('SERVICE_BAD_RESPONSE', {
        args: { service, reason: 'per-token embeddings must be vectors of finite numbers, all of one length' },
      });
    }
    for (let i = 0; i < width; i++) sum[i]! += token[i] as number;
  }
  return sum.map((v) => v / tokens.length);
}

/** Little-endian float32 bytes of the vector, base64-encoded (what OpenAI sends for `base64`). */
export function floatsToBase64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(Number(values[i]), i * 4);
  return bytes.toString('base64');
}

export function base64ToFloats(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const out = new Array<number>(bytes.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
