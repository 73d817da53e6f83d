import { describe, expect, it } from 'vitest';
import type { Directory, ServiceEntry } from '../../core/admission/directory.js';
import { CallTable } from '../../core/gate/call-table.js';
import { InstancePool } from '../../core/gate/instance-pool.js';
import { LocalInstance } from '../../core/gate/local-instance.js';
import type { ServiceCall } from '../../core/gate/service-call.js';
import { GatewayEvents } from '../../core/observe/events.js';
import { silentLogger } from '../../core/observe/logger.js';

const service = { id: 7, name: 'svc', accountId: 1, account: { id: 1, name: 'acme' } } as unknown as ServiceEntry;
const directory = { serviceById: () => undefined } as unknown as Directory;
const instance = (name: string) => new LocalInstance(service, { name, worker: { receive() {} } }, () => {}, silentLogger());
const table = () => new CallTable({ maxBufferedBytes: 1 << 20, maxAnswerBytes: 1 << 20 });

/**
 * Issue 26: an instance owns its state, its transitions and its in-flight calls; the pool asks for a
 * transition and the call table tells it which calls it answers, but nothing else writes them.
 */
describe('instances own their state and their calls', () => {
  it('refuses a state written from outside, and makes its own transitions', () => {
    const a = instance('a');
    expect(() => {
      (a as unknown as { state: string }).state = 'closed';
    }).toThrow(TypeError);
    expect(a.serve()).toBe(false); // serving already
    expect(a.drain()).toBe(true);
    expect(a.state).toBe('draining');
    expect(a.drain()).toBe(false);
    expect(a.serve()).toBe(true);
    expect(a.state).toBe('serving');
  });

  it('counts the calls the table routes to it, hands them over on a reconnect, and gives up what it held when it closes', () => {
    const calls = table();
    const a = instance('a');
    const b = instance('a');
    const call = calls.open(a, service.id, service.name, 0);
    expect(a.inFlight).toBe(1);
    calls.followed(a.handOver(b), b);
    expect([a.inFlight, b.inFlight, a.state]).toEqual([0, 1, 'draining']);
    expect(calls.instanceOf(call)).toBe(b);
    const lost = b.close();
    expect(lost).toEqual([call]);
    expect(b.close()).toEqual([]); // closed is final: nothing twice
    expect([b.inFlight, b.state]).toEqual([0, 'closed']);
  });

  it('lets go of a call once it settles', () => {
    const calls = table();
    const a = instance('a');
    const call = calls.open(a, service.id, service.name, 0);
    calls.deliver(a, { requestId: call.requestId, body: 'predict', predict: { data: { json: '{}' } } });
    expect([call.settled, a.inFlight, calls.size]).toEqual([true, 0, 0]);
  });
});

describe('the instance pool', () => {
  it('routes to serving instances only, and hands the calls of an ended instance to the Gate', () => {
    const lostCalls: ServiceCall[] = [];
    const pool = new InstancePool(directory, new GatewayEvents(), (_instance, lost) => lostCalls.push(...lost));
    const calls = table();
    const a = instance('a');
    pool.add(a);
    expect(pool.pick(service.id)).toBe(a);
    const call = calls.open(a, service.id, service.name, 0);
    pool.drain(a);
    expect([pool.pick(service.id), a.state, a.inFlight]).toEqual([undefined, 'draining', 1]);
    expect(pool.serve(a)).toBe(true);
    expect(pool.pick(service.id)).toBe(a);
    pool.end(a, 'test');
    expect(lostCalls).toEqual([call]);
    expect([pool.pick(service.id), pool.list(), a.state]).toEqual([undefined, [], 'closed']);
  });
});
