import type { Context } from 'koa';
import {
  collectAnswer as collectServiceAnswer,
  drained,
  gatewayError,
  servedByHeader,
  toGatewayError,
  type GatewayError,
  type ServiceAnswer,
  type ServiceCall,
} from '../../../core/plugins/index.js';
import { mergeChunks } from './answers.js';
import { parseJsonObject, type JsonObject } from './json-object.js';
import { asOutage } from './outage.js';
import { findUsage, mergeUsage, type Usage } from './usage.js';

/**
 * How a streamed answer goes on the wire. Each partial answer of the service is one event whose JSON
 * text is written as is (it is already JSON: no parse, no re-serialisation).
 */
export interface SseFormat<R> {
  /** The SSE text of one partial answer (`json` is single-line); '' writes nothing. */
  partial(json: string, request: R): string;
  /** The SSE text for a complete (non-partial) answer to a streaming request. */
  whole(json: string, request: R): string;
  /** The event that reports an error after the 200 headers went out. */
  error(err: GatewayError, request: R): string;
  /** Written after the last answer, before the response closes ('' for none). */
  readonly end: string | ((request: R) => string);
  /**
   * Whether the answer reached its terminal event (Anthropic's `message_stop`, a Responses terminal).
   * A stream the service finished without it is cut off: the caller gets an error event, never a
   * clean end. Absent: the service's finished stream is complete.
   */
  terminated?(request: R): boolean;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Proxies such as nginx would otherwise buffer the stream.
  'x-accel-buffering': 'no',
};

const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /[\r\n]+/g;

/**
 * A JSON text on one line. Raw line breaks cannot occur inside JSON strings, so any there are
 * whitespace between tokens; a pretty-printed answer would otherwise end the `data:` field early.
 */
export function oneLine(json: string): string {
  return LINE_BREAK.test(json) ? json.replace(LINE_BREAKS, ' ') : json;
}

/**
 * Relays a service's streamed answer as Server-Sent Events. Nothing is written until the first event
 * is ready, so an error before it (the service refused, the first-chunk deadline passed) still
 * propagates as a thrown GatewayError and becomes an ordinary JSON error response. The deadlines
 * (first chunk, idle) are the call's own (Gate open options), so they reach the relay as the call's
 * failure like any other. After the 200
 * headers an error becomes one error event, and the response ends. Returns the usage the answer
 * reported, when it did.
 */
export async function relaySse<R>(
  koa: Context,
  call: ServiceCall,
  format: SseFormat<R>,
  request: R,
  serviceName: string,
): Promise<Usage | undefined> {
  const res = koa.res;
  let committed = false;
  let usage: Usage | undefined;
  try {
    for await (const answer of call) {
      const json = answerJson(answer, serviceName);
      if (json === undefined) continue;
      usage = mergeUsage(usage, findUsage(json));
      const text = answer.body === 'partialPredict' ? format.partial(oneLine(json), request) : format.whole(json, request);
      if (!text) continue;
      if (res.destroyed) break;
      if (!committed) committed = commit(koa, call);
      // A caller that stops reading leaves the answers in the call, whose bound (CALLER_TOO_SLOW) ends it.
      if (!res.write(text)) await drained(res, [call.failedSignal]);
    }
  } catch (thrown) {
    const err = asOutage(toGatewayError(thrown), serviceName);
    call.cancel(err);
    if (!committed) throw err;
    // A caller that does not read would never get the error event: cut the connection instead.
    if (res.writableNeedDrain) res.destroy();
    else if (!res.destroyed) res.end(format.error(err, request));
    return usage;
  }
  if (res.destroyed) return usage;
  if (format.terminated && !format.terminated(request)) {
    const err = gatewayError('STREAM_CUT_OFF', { args: { service: serviceName, expected: 'no terminal event' } });
    if (!committed) throw err;
    res.end(format.error(err, request));
    return usage;
  }
  if (!committed) commit(koa, call);
  const end = typeof format.end === 'function' ? format.end(request) : format.end;
  if (end) res.end(end);
  else res.end();
  return usage;
}

/** The JSON text of an answer frame; undefined for a frame without data (a bare `finish`). */
function answerJson(answer: ServiceAnswer, serviceName: string): string | undefined {
  if (answer.body === 'partialPredict') return answer.partialPredict?.data?.json || undefined;
  if (answer.body === 'predict') {
    const json = answer.predict?.data?.json;
    if (json) return json;
  }
  throw gatewayError('SERVICE_BAD_RESPONSE', {
    args: { service: serviceName, reason: `expected a JSON answer, got ${answer.body ?? 'an empty frame'}` },
  });
}

export function commit(koa: Context, call: ServiceCall): true {
  // Koa stays out of the response from here on; the access log still sees status 200.
  if (call.servedBy) koa.set('x-served-by', servedByHeader(call.servedBy));
  koa.status = 200;
  koa.respond = false;
  koa.res.writeHead(200, SSE_HEADERS);
  return true;
}

/** A non-streamed answer: the JSON of a `predict` answer, or the JSON texts of partial answers. */
export type CollectedAnswer = { whole: string; parts?: undefined } | { whole?: undefined; parts: string[] };

/**
 * Reads a service's whole answer for a non-streaming request, with the one reading of answer frames
 * (core/gate/answer.ts: bounded by gate.maxAnswerBytes, statuses and headers checked). A service may
 * answer a plain predict with a stream of partial answers; their JSON texts are returned in order for
 * the caller to merge.
 */
export async function collectAnswer(call: ServiceCall, serviceName: string): Promise<CollectedAnswer> {
  const answer = await collectServiceAnswer(call, serviceName).catch((thrown: unknown) => {
    throw asOutage(toGatewayError(thrown), serviceName);
  });
  const bad = (reason: string) => gatewayError('SERVICE_BAD_RESPONSE', { args: { service: serviceName, reason } });
  if (answer.protobuf.length) throw bad('expected a JSON answer, got protobuf');
  if (!answer.json.length) throw bad('the answer carried no data');
  return answer.streamed ? { parts: answer.json } : { whole: answer.json.at(-1)! };
}

/**
 * A non-streamed chat answer as a completion object, for the adapters that translate it (Messages,
 * Responses): the whole answer, or its streamed parts merged under `head`. SERVICE_BAD_RESPONSE when
 * it is not a JSON object. `json` is its text (for its usage).
 */
export async function collectChatCompletion(
  call: ServiceCall,
  serviceName: string,
  head: { id: string; created: number; model: string },
): Promise<{ json: string; completion: JsonObject }> {
  const answer = await collectAnswer(call, serviceName);
  const json = answer.whole ?? mergeChunks(answer.parts, { ...head, object: 'chat.completion', includeUsage: false });
  const completion = parseJsonObject(json);
  if (!completion) {
    throw gatewayError('SERVICE_BAD_RESPONSE', { args: { service: serviceName, reason: 'the chat answer is not a JSON object' } });
  }
  return { json, completion };
}
