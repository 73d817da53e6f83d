/** The Gate protocol's TypeScript side: what the gateway and the model-service SDK both stand on. */
export * from './loader.js';
export type * from './messages.js';
export * from './headers.js';
export * from './status.js';
export * from './error-codes.js';
export * from './speech-codec.js';
export type { GateClient, GateDefinition, GateHandlers } from './generated/com/platform/gate/Gate.js';
export type { ProtoGrpcType } from './generated/gate.js';
export * from './load-report.js';
export * from './heartbeat-silence.js';
export * from './wire.js';
export * from './gathered-chunks.js';
export { messageDecoder } from './root.js';
