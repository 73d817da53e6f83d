import * as grpc from '@grpc/grpc-js';
import { BULK_LANE, GateHeaders, gateServiceDefinition, type GateToServiceProto, type StartServingProto } from '@model-gateway/protocol';
import type { GateStub } from '../grpc.js';
import type { Dispatcher } from './dispatcher.js';
import { laneDeserializer } from './ext-in-slices.js';
import type { SdkLogger } from './logger.js';
import { StreamSession } from './session.js';

/**
 * Opens the bulk lane the gateway offered (`Z-bulkLaneBytes` on its serviceInfo): a second
 * processAsync stream on the same connection, with the same startServing marked `Z-lane: bulk`. The
 * gateway writes the instance's large requests there, so a small request is never read behind a
 * large one; their answers go back on the lane, as every answer goes back on the stream its request
 * came on. The lane carries no heartbeats (the main stream's watch the connection); the gateway ends
 * the instance when its lane ends (after stopServing, when both streams have), and a refused lane (an
 * older instance's, a gateway restarted meanwhile) only means the service goes on without one.
 */
export function openBulkLane(
  stub: GateStub,
  main: StreamSession,
  start: StartServingProto,
  dispatcher: Dispatcher,
  log: SdkLogger,
  heartbeatGraceMs: number,
): StreamSession {
  const method = gateServiceDefinition().processAsync;
  const call = stub.makeBidiStreamRequest(
    method.path,
    method.requestSerialize,
    laneDeserializer(method.responseDeserialize),
    new grpc.Metadata(),
  );
  const lane = new StreamSession(call, main.gateway, log, heartbeatGraceMs);
  lane.onMessage = (message: GateToServiceProto) => {
    switch (message.body) {
      case 'cancel':
        dispatcher.cancel(lane, message.cancel?.requestIdToCancel ?? 0);
        return;
      case 'error':
        if (message.requestId) dispatcher.cancel(lane, message.requestId);
        else
          log.warn({ gateway: lane.gateway, code: message.error?.code }, `model-sdk: bulk lane refused (${message.error?.message ?? ''})`);
        return;
      case 'predict':
      case 'ext':
      case 'batch':
      case 'fit':
        lane.accepting = main.accepting;
        dispatcher.dispatch(lane, message);
        return;
      default:
      // Heartbeats, cluster updates and stopServing come on the main stream only.
    }
  };
  lane.send({ startServing: start, headers: { [GateHeaders.lane]: BULK_LANE } });
  log.debug({ gateway: lane.gateway }, 'model-sdk: bulk lane opened');
  return lane;
}
