import type protobuf from 'protobufjs';
import type { AsrResponseProto, PayloadProto, RecognitionConfig, TtsRequestProto } from './messages.js';
import { gateType as type } from './root.js';

/**
 * Data types of the speech bridge: what travels in `PayloadProto.dataType` between the gateway and a
 * model service when processSynthesis and processRecognition are carried over partialPredict.
 * The `com.platform.gate.*` names are messages of proto/gate.proto, protobuf-encoded in
 * `PayloadProto.protobuf`; audio is raw bytes.
 */
export const SpeechDataTypes = {
  /** Synthesis request (gateway → service, `data`): a TtsRequestProto with its output spec filled in. */
  ttsRequest: 'com.platform.gate.TtsRequestProto',
  /** Recognition settings (gateway → service, `config` of the first message): a RecognitionConfig. */
  recognitionConfig: 'com.platform.gate.RecognitionConfig',
  /** Recognition results (service → gateway, `data`): an AsrResponseProto. */
  asrResponse: 'com.platform.gate.AsrResponseProto',
  /**
   * Audio, both ways: raw signed 16-bit little-endian mono PCM, no header. The rate is the request's
   * (`output_audio_spec.sample_rate_hertz` for synthesis, `sample_rate_hertz` for recognition).
   */
  audio: 'audio/x-linear16-pcm',
} as const;

/**
 * Conversion options matching PROTO_LOADER_OPTS, so decoded messages look like the gRPC ones; without
 * `oneofs`, because these messages have none but the synthetic ones of proto3 `optional` fields.
 */
const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: false, arrays: true };

function encode(name: string, value: object): Buffer {
  const t = type(name);
  const bytes = t.encode(t.fromObject(value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes protobuf bytes; throws with the decoder's reason when they are not that message. */
function decode<T>(name: string, bytes: Uint8Array): T {
  const t = type(name);
  return t.toObject(t.decode(bytes), TO_OBJECT) as T;
}

export const encodeTtsRequest = (value: TtsRequestProto): Buffer => encode('TtsRequestProto', value);
export const decodeTtsRequest = (bytes: Uint8Array): TtsRequestProto => decode('TtsRequestProto', bytes);
export const encodeRecognitionConfig = (value: RecognitionConfig): Buffer => encode('RecognitionConfig', value);
export const decodeRecognitionConfig = (bytes: Uint8Array): RecognitionConfig => decode('RecognitionConfig', bytes);
export const encodeAsrResponse = (value: AsrResponseProto): Buffer => encode('AsrResponseProto', value);
export const decodeAsrResponse = (bytes: Uint8Array): AsrResponseProto => decode('AsrResponseProto', bytes);

/**
 * An AsrResponseProto from its JSON form (field names as in the proto), for services that answer
 * with JSON payloads. Throws when the JSON does not fit the message.
 */
export function asrResponseFromJson(json: string): AsrResponseProto {
  const t = type('AsrResponseProto');
  const value = JSON.parse(json) as Record<string, unknown>;
  const problem = t.verify(value);
  if (problem) throw new Error(problem);
  return t.toObject(t.fromObject(value), TO_OBJECT) as AsrResponseProto;
}

export function audioPayload(pcm: Uint8Array): PayloadProto {
  return { dataType: SpeechDataTypes.audio, protobuf: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength) };
}
