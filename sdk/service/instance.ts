import { randomUUID } from 'node:crypto';

/**
 * One random UUID per process lifetime, sent as `StartServingProto.instanceBootUuid` on every stream to
 * every gateway, reconnects included: the gateway tells a transient disconnect from a restart by it.
 */
export const PROCESS_INSTANCE_UUID: string = randomUUID();
