/**
 * The demo's model services (examples/demo/gateway.yaml launches them as processes) in this process,
 * on the demo's default connection tokens: echo, upper and the text classifier, ready to answer.
 */
import { startEchoService } from '../../examples/echo-service/service.js';
import { textClassifierHandlers } from '../../examples/text-classifier/service.js';
import { upperHandlers } from '../../examples/upper-service/service.js';
import { ModelService } from '../../sdk/index.js';
import { silentLogger } from '../../sdk/service/logger.js';

export async function startDemoServices(grpcAddress: string): Promise<ModelService[]> {
  const common = { gateways: [grpcAddress], logger: silentLogger };
  const services = [
    startEchoService({ ...common, connectionToken: 'demo-echo-token-0123' }),
    new ModelService(upperHandlers, { ...common, descriptor: { name: 'upper' }, connectionToken: 'demo-upper-token-0123' }).start(),
    new ModelService(textClassifierHandlers(), {
      ...common,
      descriptor: { name: 'text-classifier', fittable: true },
      connectionToken: 'demo-classifier-token-0123',
    }).start(),
  ];
  await Promise.all(services.map((s) => s.ready()));
  return services;
}
