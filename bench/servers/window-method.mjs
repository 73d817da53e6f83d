/** The one method of bench/receive-window.ts's sender and receiver: a bidi stream of raw bytes (no protobuf). */
const raw = (bytes) => bytes;

export const PUMP = {
  path: '/bench.Window/pump',
  requestStream: true,
  responseStream: true,
  requestSerialize: raw,
  requestDeserialize: raw,
  responseSerialize: raw,
  responseDeserialize: raw,
};
