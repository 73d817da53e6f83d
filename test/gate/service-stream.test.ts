import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ECHO_TOKEN, TEST_KEY, eventually, startTestGateway, testConfigInput, type TestGateway } from '../support/gateway.js';
import { RawServiceStream, json, processUnary, rawClient, type RawClient } from '../support/raw-gate-client.js';

/** The model-service side of the Gate: registration, heartbeats, routing, reconnects, failures. */
describe('Gate processAsync', () => {
  let gw: TestGateway;
  let client: RawClient;
  const streams: RawServiceStream[] = [];
  const open = () => {
    const s = new RawServiceStream(client);
    streams.push(s);
    return s;
  };
  const predict = (extra: Record<string, unknown> = {}) =>
    processUnary(client, { account: 'demo', model: 'echo', authToken: TEST_KEY, predict: { data: json({ q: 1 }) }, ...extra });

  beforeEach(async () => {
    gw = await startTestGateway();
    client = rawClient(gw.grpcAddress);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    client.close();
    await gw.close();
  });

  it('answers healthCheck with status Ok', async () => {
    const reply = await new Promise<any>((resolve, reject) =>
      client.healthCheck({}, (e: Error | null, r: unknown) => (e ? reject(e) : resolve(r))),
    );
    expect(reply.status).toBe('Ok');
  });

  it('registers a service: serviceInfo, then heartBeat{Ok, interval} first and every interval', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'boot-1');
    const info = await s.next((m) => m.body === 'serviceInfo');
    expect(info.serviceInfo).toMatchObject({ accountId: 1, modelId: 10, modelName: 'echo' });
    const first = await s.next((m) => m.body === 'heartBeat');
    expect(first.heartBeat).toEqual({ status: 'Ok', interval: 200 });
    s.send({ heartBeat: {} });
    await s.next((m) => m.body === 'heartBeat'); // the next interval's beat
    expect(s.received.some((m) => m.body === 'cluster')).toBe(false); // single gateway: no cluster updates
  });

  it('refuses an unknown connection token with platform.gate.instance_by_token_not_found and closes', async () => {
    const s = open();
    s.startServing('no-such-token-000');
    const err = await s.next((m) => m.body === 'error');
    expect(err.error?.code).toBe('platform.gate.instance_by_token_not_found');
    await s.untilEnded();
    expect(gw.gateway.gate.instances()).toHaveLength(0);
  });

  it('requires startServing as the first message', async () => {
    const s = open();
    s.send({ heartBeat: {} });
    const err = await s.next((m) => m.body === 'error');
    expect(err.error?.code).toBe('platform.gate.start_serving_required');
    await s.untilEnded();
  });

  it('routes a predict, matches the answer by requestId and passes headers both ways', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'boot-1');
    await s.next((m) => m.body === 'serviceInfo');
    const pending = predict({ headers: { 'Z-requestId': 'corr-1', 'X-Trace': 't-1' } });
    const req = await s.next((m) => m.body === 'predict');
    expect(JSON.parse(req.predict!.data!.json!)).toEqual({ q: 1 });
    // The caller's own headers pass; Z-requestId is the gateway's (docs/design.md, decisions), not the caller's.
    expect(req.headers).toMatchObject({ 'X-Trace': 't-1', 'Z-callerAccountId': '1', 'PLATFORM-API-KEY-NAME': 'all' });
    expect(req.headers!['Z-requestId']).toMatch(/^[0-9a-f-]{36}$/);
    // An answer for an unknown request is ignored; the real one is delivered.
    s.send({ requestId: 999_999, predict: { data: json('stray') } });
    s.send({ requestId: req.requestId, headers: { 'Z-Server-Time': '5' }, predict: { data: json({ a: 2 }) } });
    const res = await pending;
    expect(res.body).toBe('predict');
    expect(JSON.parse(res.predict!.data!.json!)).toEqual({ a: 2 });
    expect(res.headers).toMatchObject({ 'Z-Server-Time': '5' });
  });

  it('drops an instance that stays silent for 3 intervals + 1 s', async () => {
    const s = new RawServiceStream(client, { answerHeartbeats: false });
    streams.push(s);
    s.startServing(ECHO_TOKEN, 'silent');
    await s.next((m) => m.body === 'serviceInfo');
    expect(gw.gateway.gate.hasInstances(10)).toBe(true);
    await eventually(() => !gw.gateway.gate.hasInstances(10), 4000, 'the silent instance to be dropped');
    await s.untilEnded();
    const res = await predict();
    // Both fields: the public SDKs' clients read `status`, which reads as OK when unset.
    expect(res.error).toMatchObject({ code: 'NO_ACTIVE_INSTANCES', statusCode: 400, status: 'BAD_REQUEST' });
  });

  it('replaces the session on reconnect with the same instanceBootUuid and still takes late answers from the old stream', async () => {
    const old = open();
    old.startServing(ECHO_TOKEN, 'same-boot');
    await old.next((m) => m.body === 'serviceInfo');
    const pending = predict();
    const req = await old.next((m) => m.body === 'predict');

    const fresh = open();
    fresh.startServing(ECHO_TOKEN, 'same-boot');
    await fresh.next((m) => m.body === 'serviceInfo');
    await eventually(() => gw.gateway.gate.instances(10).filter((i) => i.state === 'serving').length === 1, 2000, 'one serving session');
    expect(gw.gateway.gate.instances(10)).toHaveLength(1);

    old.send({ requestId: req.requestId, predict: { data: json('late but delivered') } });
    expect(JSON.parse((await pending).predict!.data!.json!)).toBe('late but delivered');

    // New requests go to the new stream only.
    const second = predict();
    const req2 = await fresh.next((m) => m.body === 'predict');
    fresh.send({ requestId: req2.requestId, predict: { data: json('fresh') } });
    expect(JSON.parse((await second).predict!.data!.json!)).toBe('fresh');
    // The old stream ending does not fail requests that now belong to the new one.
    old.close();
  });

  it('shares the load between two instances (least in-flight)', async () => {
    const a = open();
    const b = open();
    a.startServing(ECHO_TOKEN, 'a');
    b.startServing(ECHO_TOKEN, 'b');
    await a.next((m) => m.body === 'serviceInfo');
    await b.next((m) => m.body === 'serviceInfo');
    const calls = Array.from({ length: 6 }, () => predict());
    const countA = async () => {
      let n = 0;
      for (;;) {
        const m = await a.next((x) => x.body === 'predict', 300).catch(() => undefined);
        if (!m) return n;
        n++;
        a.send({ requestId: m.requestId, predict: { data: json('a') } });
      }
    };
    const countB = async () => {
      let n = 0;
      for (;;) {
        const m = await b.next((x) => x.body === 'predict', 300).catch(() => undefined);
        if (!m) return n;
        n++;
        b.send({ requestId: m.requestId, predict: { data: json('b') } });
      }
    };
    const [na, nb] = await Promise.all([countA(), countB()]);
    const answers = (await Promise.all(calls)).map((r) => JSON.parse(r.predict!.data!.json!));
    expect(na + nb).toBe(6);
    expect(na).toBe(3); // six concurrent requests, least in-flight: three each
    expect(answers.filter((x) => x === 'a')).toHaveLength(3);
  });

  it('turns a disconnect mid-request into an error for the caller at once', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'dies');
    await s.next((m) => m.body === 'serviceInfo');
    const pending = predict();
    await s.next((m) => m.body === 'predict');
    const started = Date.now();
    s.cancel();
    const res = await pending;
    expect(res.error).toMatchObject({ code: 'SERVICE_DISCONNECTED', statusCode: 502, status: 'BAD_GATEWAY' });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('times out with PREDICT_TIMEOUT (504) and sends cancel for the request', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'slow');
    await s.next((m) => m.body === 'serviceInfo');
    const pending = predict({ timeoutSec: 1 });
    const req = await s.next((m) => m.body === 'predict');
    const res = await pending;
    expect(res.error).toMatchObject({ code: 'PREDICT_TIMEOUT', statusCode: 504, status: 'GATEWAY_TIMEOUT' });
    const cancel = await s.next((m) => m.body === 'cancel');
    expect(cancel.cancel?.requestIdToCancel).toBe(req.requestId);
  });

  it('passes a service error on with its code and status', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'errs');
    await s.next((m) => m.body === 'serviceInfo');
    const pending = predict();
    const req = await s.next((m) => m.body === 'predict');
    s.send({ requestId: req.requestId, error: { code: 'platform-action.common.bad-request', message: 'no q' } });
    expect((await pending).error).toMatchObject({
      code: 'platform-action.common.bad-request',
      message: 'no q',
      statusCode: 400,
      status: 'BAD_REQUEST',
    });
  });

  it('sends an empty JSON config when the method descriptor declares a config input and none was given', async () => {
    const declaring = open();
    declaring.startServing(ECHO_TOKEN, 'template', {
      name: 'template',
      methods: {
        predict: { input: { data: { type: 'PredictRequest' }, config: { type: 'PredictConfig' } }, output: { type: 'PredictResponse' } },
      },
    });
    await declaring.next((m) => m.body === 'serviceInfo');
    const pending = predict();
    const req = await declaring.next((m) => m.body === 'predict');
    expect(req.predict?.config).toMatchObject({ json: '{}' });
    declaring.send({ requestId: req.requestId, predict: { data: json('ok') } });
    await pending;
    // A config the caller gave is sent as given.
    const given = predict({ predict: { data: json({ q: 1 }), config: json({ t: 1 }) } });
    const withConfig = await declaring.next((m) => m.body === 'predict');
    expect(withConfig.predict?.config).toMatchObject({ json: '{"t":1}' });
    declaring.send({ requestId: withConfig.requestId, predict: { data: json('ok') } });
    await given;
    declaring.close();
    await eventually(() => !gw.gateway.gate.hasInstances(10), 2000, 'the declaring instance to go');

    // Without the declaration the service gets no config, as before.
    const plain = open();
    plain.startServing(ECHO_TOKEN, 'plain');
    await plain.next((m) => m.body === 'serviceInfo');
    const second = predict();
    const bare = await plain.next((m) => m.body === 'predict');
    expect(bare.predict?.config).toBeUndefined();
    plain.send({ requestId: bare.requestId, predict: { data: json('ok') } });
    await second;
  });

  it('stops routing to an instance that sent stopServing but still delivers its answers', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'stopping');
    await s.next((m) => m.body === 'serviceInfo');
    const pending = predict();
    const req = await s.next((m) => m.body === 'predict');
    s.send({ stopServing: { reason: 'SIGTERM' } });
    await eventually(() => !gw.gateway.gate.hasInstances(10), 2000, 'routing to stop');
    expect((await predict()).error?.code).toBe('NO_ACTIVE_INSTANCES');
    s.send({ requestId: req.requestId, predict: { data: json('drained') } });
    expect(JSON.parse((await pending).predict!.data!.json!)).toBe('drained');
  });

  it('records deferred billing charges sent with requestId 0', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'bills');
    await s.next((m) => m.body === 'serviceInfo');
    s.send({ requestId: 0, deferredBillingCharge: { billingRequestId: 'bill-1', amountInUnits: 42 } });
    s.send({ deferredBillingCharges: { charges: [{ idempotencyKey: 'k1', amount: 7, currency: 'USD' }], params: { callerAccountId: 1 } } });
    await eventually(() => gw.gateway.gate.billing.list().length === 2, 2000, 'two billing records');
    const [one, two] = gw.gateway.gate.billing.list();
    expect(one).toMatchObject({ serviceId: 10, requestId: 0, billingRequestId: 'bill-1', amountInUnits: 42 });
    expect(two?.charges?.[0]).toMatchObject({ idempotencyKey: 'k1', amount: 7, currency: 'USD' });
  });

  it('sends stopServing on gateway shutdown and lets in-flight requests drain', async () => {
    const s = open();
    s.startServing(ECHO_TOKEN, 'drain');
    await s.next((m) => m.body === 'serviceInfo');
    const pending = predict();
    const req = await s.next((m) => m.body === 'predict');
    const closing = gw.gateway.gate.shutdown();
    await s.next((m) => m.body === 'stopServing');
    s.send({ requestId: req.requestId, predict: { data: json('finished during drain') } });
    expect(JSON.parse((await pending).predict!.data!.json!)).toBe('finished during drain');
    await closing;
    expect((await predict()).error?.code).toBe('platform.gate.gate_is_shut_down');
  });
});

describe('Gate cluster updates', () => {
  it('sends cluster{servers, currentServer} only when several gateways are configured', async () => {
    const gw = await startTestGateway(
      testConfigInput({ gate: { heartbeatIntervalMs: 200, servers: ['127.0.0.1:1', '127.0.0.1:2'], currentServer: '127.0.0.1:1' } }),
    );
    const client = rawClient(gw.grpcAddress);
    const s = new RawServiceStream(client);
    try {
      s.startServing(ECHO_TOKEN, 'c');
      const cluster = await s.next((m) => m.body === 'cluster');
      expect(cluster.cluster).toEqual({ servers: ['127.0.0.1:1', '127.0.0.1:2'], currentServer: '127.0.0.1:1' });
    } finally {
      s.close();
      client.close();
      await gw.close();
    }
  });
});
