import { describe, expect, it } from 'vitest';
import { configuredCluster, splitHostPort, workerCluster } from '../../core/gate/cluster-update.js';

describe('cluster updates', () => {
  it('sends the configured list to every stream, and nothing with a single gateway', () => {
    expect(configuredCluster(['a:1', 'b:1'], 'a:1')('anything:9')).toEqual({ servers: ['a:1', 'b:1'], currentServer: 'a:1' });
    expect(configuredCluster(['a:1'], 'a:1')('a:1')).toBeUndefined();
    expect(configuredCluster([], undefined)('a:1')).toBeUndefined();
  });

  const workers = (index: number) => workerCluster({ index, sharedPort: 9090, ownPorts: [9091, 9092, 9093] });

  it("tells a stream on a worker's own port every worker's own port, under the host it dialled", () => {
    expect(workers(1)('gw.local:9092')).toEqual({
      servers: ['gw.local:9091', 'gw.local:9092', 'gw.local:9093'],
      currentServer: 'gw.local:9092',
    });
  });

  it('tells a stream on the shared port its own address and the other workers, so each worker is reached once', () => {
    expect(workers(0)('127.0.0.1:9090')).toEqual({
      servers: ['127.0.0.1:9090', '127.0.0.1:9092', '127.0.0.1:9093'],
      currentServer: '127.0.0.1:9090',
    });
    expect(workers(2)('[::1]:9090')).toEqual({ servers: ['[::1]:9090', '[::1]:9091', '[::1]:9092'], currentServer: '[::1]:9090' });
  });

  it('sends nothing for an address it cannot place (a proxy in between, no port) or a single worker', () => {
    expect(workers(0)('proxy.example:443')).toBeUndefined();
    expect(workers(0)('gw.local')).toBeUndefined();
    expect(workerCluster({ index: 0, sharedPort: 9090, ownPorts: [9091] })('127.0.0.1:9091')).toBeUndefined();
    expect(splitHostPort('[::1]:80')).toEqual({ host: '[::1]', port: 80 });
  });
});
