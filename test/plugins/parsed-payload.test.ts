import { describe, expect, it } from 'vitest';
import type { ServiceEntry, UpstreamConfig } from '../../core/plugins/index.js';
import { parsedPayload, parsedValueOf } from '../../core/gate/parsed-payload.js';
import { retargetPredict } from '../../core/gate/failover.js';
import { splitRequest } from '../../plugins/chatapi/transform.js';
import { engineBody } from '../../plugins/upstream/engine-request.js';
import { gateServiceDefinition } from '../../proto/src/index.js';

const upstream = { api: 'openai', models: {}, passModels: true } as unknown as UpstreamConfig;
const service = { id: 1, name: 'llm', account: { name: 'demo' }, defaultModel: 'm' } as unknown as ServiceEntry;

/**
 * The standard chat adapter hands its parsed body to an in-process engine beside the text it sends
 * (issue 26, the hot path): the engine takes the value instead of parsing the text again, the wire
 * never carries the value, and a fallback that rewrites the text rewrites the value with it.
 */
describe('parsed payloads', () => {
  const body = { model: 'demo/llm/m', messages: [{ role: 'user', content: 'hi' }], stream: false, temperature: 0.5 };
  const text = JSON.stringify(body);
  const split = splitRequest(body, 'chat', 'm', text);

  it('splits a body into data and config objects that are exactly what their texts parse to', () => {
    expect(split.dataObject).toEqual(JSON.parse(split.data));
    expect(split.configObject).toEqual(JSON.parse(split.config));
  });

  it('gives the engine the value it carries, without parsing the text, and leaves the value unchanged', () => {
    const data = { ...split.dataObject };
    // The value says something the text does not: what the engine sends shows which one it read.
    const predict = {
      data: parsedPayload(split.data, { ...data, messages: [{ role: 'user', content: 'from the value' }] }),
      config: parsedPayload(split.config, split.configObject),
    };
    const sent = engineBody(predict, upstream, service);
    expect(sent).toEqual({ temperature: 0.5, messages: [{ role: 'user', content: 'from the value' }], stream: false, model: 'm' });
    const direct = {
      data: parsedPayload('{"model":"demo/llm/x","messages":[]}', { model: 'demo/llm/x', messages: [] }, 'x#/ChatCompletionDirectProxy'),
    };
    const value = parsedValueOf(direct.data) as Record<string, unknown>;
    expect(engineBody(direct, upstream, service).model).toBe('x');
    expect(value.model).toBe('demo/llm/x');
  });

  it('parses the text as before when the payload carries no value', () => {
    expect(engineBody({ data: { json: split.data }, config: { json: split.config } }, upstream, service)).toEqual({
      ...JSON.parse(split.config),
      ...JSON.parse(split.data),
      model: 'm',
    });
  });

  it('never puts the value on the wire', () => {
    const encode = gateServiceDefinition().processAsync.responseSerialize;
    const withValue = encode({ requestId: 1, predict: { data: parsedPayload(split.data, split.dataObject, 't') } });
    const without = encode({ requestId: 1, predict: { data: { json: split.data, dataType: 't' } } });
    expect(Buffer.compare(withValue, without)).toBe(0);
    expect(JSON.stringify(parsedPayload(split.data, split.dataObject))).toBe(JSON.stringify({ json: split.data }));
  });

  it('re-addresses a fallback with a new text and a value that matches it', () => {
    const moved = retargetPredict({ data: parsedPayload(split.data, split.dataObject) }, 'other');
    expect(JSON.parse(moved.data!.json!)).toEqual({ ...split.dataObject, model: 'other' });
    expect(parsedValueOf(moved.data)).toEqual(JSON.parse(moved.data!.json!));
    expect(split.dataObject.model).toBe('m');
  });
});
