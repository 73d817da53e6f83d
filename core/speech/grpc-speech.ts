import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { Caller } from '../admission/directory.js';
import { gatewayError, toGatewayError } from '../errors.js';
import { toApiErrorProto } from '../grpc/api-error.js';
import { serviceHeaders } from '../gate/service-headers.js';
import type { SpeechHandlers } from '../grpc/grpc-server.js';
import type {
  ClientAsrRequestProto,
  ClientAsrResponseProto,
  ClientTtsRequestProto,
  ClientTtsResponseProto,
  StringMap,
} from '../../proto/src/index.js';
import { abortOnCancel, drained } from '../flow/drain-and-cancel.js';
import type { Logger } from '../observe/logger.js';
import type { Pipeline } from '../admission/pipeline.js';
import type { RecognitionStream } from './recognition.js';
import type { SpeechBridge } from './speech-bridge.js';

type SynthesisCall = grpc.ServerWritableStream<ClientTtsRequestProto, ClientTtsResponseProto>;
type RecognitionCall = grpc.ServerDuplexStream<ClientAsrRequestProto, ClientAsrResponseProto>;

export interface GrpcSpeechDeps {
  pipeline: Pipeline;
  bridge: SpeechBridge;
  logger: Logger;
}

/**
 * The Gate's speech calls. Both authenticate by `authToken` (MODEL_REQUESTS) and address the service
 * by `account`/`model`, like the client calls; errors come in-band as the `error` member, then the
 * stream ends. Writes respect the caller's flow control: after `write()` returns false nothing more is
 * written until 'drain' (the bridge bounds what piles up meanwhile).
 */
export function createGrpcSpeechHandlers({ pipeline, bridge, logger }: GrpcSpeechDeps): SpeechHandlers {
  const log = logger.child({ component: 'grpc-speech' });

  const errorMessage = (err: unknown): { error: ReturnType<typeof toApiErrorProto> } => {
    const error = toGatewayError(err);
    if (error.status >= 500) log.warn({ code: error.code, err: error.cause ?? error.message }, 'speech call failed');
    return { error: toApiErrorProto(error) };
  };

  const admit = (request: { account?: string; model?: string; authToken?: string }) =>
    pipeline.admit({
      apiKey: request.authToken,
      keyHeader: 'authToken',
      permission: 'MODEL_REQUESTS',
      account: request.account ?? '',
      model: request.model ?? '',
    });

  const processSynthesis = (call: SynthesisCall): void => {
    const abort = abortOnCancel(call);
    let release: (() => void) | undefined;
    void (async () => {
      try {
        const { caller, service } = admit(call.request);
        release = pipeline.openStream(caller);
        const request = bridge.checkSynthesis(call.request.tts);
        const stream = bridge.synthesize(service, request, { headers: headersFor(caller), signal: abort.signal });
        for await (const chunk of stream) {
          if (abort.signal.aborted) break;
          const message: ClientTtsResponseProto = { tts: { audio_chunk: { data: chunk.data }, first: chunk.first, last: chunk.last } };
          if (!call.write(message)) await drained(call, [abort.signal, stream.failedSignal]);
        }
      } catch (err) {
        if (!abort.signal.aborted) call.write(errorMessage(err));
      } finally {
        release?.();
        abort.dispose();
        call.end();
      }
    })();
  };

  /**
   * The first message must carry `config`; later ones carry `audio_content`, forwarded to the service
   * as it arrives. The client's half-close ends the audio; the call ends after the service's last
   * result. Audio first, a second config or a rejected config end the call with an error.
   */
  const processRecognition = (call: RecognitionCall): void => {
    const abort = abortOnCancel(call);
    let recognition: RecognitionStream | undefined;
    let closed = false;
    let release: (() => void) | undefined;

    const close = () => {
      if (closed) return;
      closed = true;
      release?.();
      abort.dispose();
      call.end();
    };
    const fail = (err: unknown) => {
      if (closed) return;
      recognition?.cancel(toGatewayError(err));
      if (!abort.signal.aborted) call.write(errorMessage(err));
      close();
    };
    const relay = async (stream: RecognitionStream) => {
      try {
        for await (const asr of stream) {
          if (closed || abort.signal.aborted) break;
          if (!call.write({ asr })) await drained(call, [abort.signal, stream.failedSignal]);
        }
        close();
      } catch (err) {
        fail(err);
      }
    };

    call.on('data', (message: ClientAsrRequestProto) => {
      if (closed) return;
      try {
        const asr = message.asr;
        const kind = asr?.body ?? (asr?.config ? 'config' : asr?.audio_content ? 'audio_content' : undefined);
        if (!recognition) {
          const { caller, service } = admit(message);
          release ??= pipeline.openStream(caller);
          if (kind !== 'config' || !asr?.config) {
            throw gatewayError('SPEECH_CONFIG_REQUIRED', { param: 'asr.config', args: { got: kind ?? 'a message without asr' } });
          }
          const config = bridge.checkRecognition(asr.config);
          recognition = bridge.recognize(service, config, { headers: headersFor(caller), signal: abort.signal });
          void relay(recognition);
          return;
        }
        if (kind === 'config') throw gatewayError('SPEECH_CONFIG_REPEATED', { param: 'asr.config' });
        if (kind === 'audio_content' && asr?.audio_content) {
          recognition.sendAudio(asr.audio_content);
          // Back-pressure: stop reading the caller while the service stream is full; gRPC flow
          // control then slows the caller down instead of the gateway buffering its audio.
          call.pause();
          void recognition.whenWritable().then(() => {
            if (!closed) call.resume();
          });
        }
      } catch (err) {
        fail(err);
      }
    });
    call.on('end', () => {
      // A caller's cancel also ends the readable side, and grpc-js reports 'cancelled' just after:
      // wait a turn so that a cancel is not taken for the end of the audio.
      setImmediate(() => {
        if (closed || abort.signal.aborted || call.cancelled) return;
        if (!recognition)
          return fail(gatewayError('SPEECH_CONFIG_REQUIRED', { param: 'asr.config', args: { got: 'the end of the stream' } }));
        recognition.end();
      });
    });
    call.on('error', (err) => fail(err));
  };

  return {
    processSynthesis,
    processRecognition,
  };
}

function headersFor(caller: Caller): StringMap {
  return serviceHeaders({ requestId: randomUUID(), callerAccountId: caller.account.id, keyName: caller.keyName });
}
