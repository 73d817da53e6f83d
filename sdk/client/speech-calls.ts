import type * as grpc from '@grpc/grpc-js';
import type {
  AsrResponseProto,
  ClientAsrRequestProto,
  ClientAsrResponseProto,
  ClientTtsRequestProto,
  ClientTtsResponseProto,
  RecognitionConfig,
  TtsResponseProto,
} from '../../proto/src/index.js';
import { GateClientError } from './errors.js';

/** Who a speech call is for: the same fields as every client request. */
export interface SpeechAddress {
  account: string;
  model: string;
  authToken: string;
}

/** The chunks of a processSynthesis call; an in-band error or a transport failure throws GateClientError. */
export async function* readSynthesis(
  call: grpc.ClientReadableStream<ClientTtsResponseProto>,
  signal: AbortSignal | undefined,
): AsyncGenerator<TtsResponseProto, void, undefined> {
  yield* readAnswers(call, signal, (response) => response.tts);
}

/**
 * The client side of processRecognition. The config goes out as the first message on creation;
 * `write` sends audio (LINEAR16 PCM), `end` half-closes, and iterating yields the results.
 */
export class GateRecognitionStream implements AsyncIterable<AsrResponseProto> {
  private iterating = false;

  constructor(
    private readonly call: grpc.ClientDuplexStream<ClientAsrRequestProto, ClientAsrResponseProto>,
    private readonly address: SpeechAddress,
    config: RecognitionConfig,
    private readonly signal: AbortSignal | undefined,
  ) {
    // Errors surface through iteration; this listener keeps an unread stream from throwing.
    call.on('error', () => {});
    call.write({ ...address, asr: { config } });
  }

  /** Sends audio; false when the caller should wait for 'drain' (see `drained`). */
  write(audio: Uint8Array): boolean {
    return this.call.write({ ...this.address, asr: { audio_content: Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength) } });
  }

  /** Resolves when the stream takes more audio after `write` returned false. */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.call.off('drain', done);
        this.call.off('close', done);
        resolve();
      };
      this.call.once('drain', done);
      this.call.once('close', done);
    });
  }

  /** No more audio; results keep coming until the service's last one. */
  end(): void {
    this.call.end();
  }

  cancel(): void {
    this.call.cancel();
  }

  /** The results; iterate once. */
  [Symbol.asyncIterator](): AsyncIterator<AsrResponseProto> {
    if (this.iterating) throw new Error('A GateRecognitionStream can be iterated once');
    this.iterating = true;
    return readAnswers(this.call, this.signal, (response) => response.asr);
  }
}

async function* readAnswers<R extends { error?: ClientTtsResponseProto['error']; body?: string }, T>(
  call: grpc.ClientReadableStream<R> | grpc.ClientDuplexStream<unknown, R>,
  signal: AbortSignal | undefined,
  member: (response: R) => T | undefined,
): AsyncGenerator<T, void, undefined> {
  const cancel = () => call.cancel();
  if (signal?.aborted) cancel();
  else signal?.addEventListener('abort', cancel, { once: true });
  let finished = false;
  try {
    for await (const response of call as AsyncIterable<R>) {
      if (response.body === 'error' || (response.body === undefined && response.error)) throw GateClientError.fromApiError(response.error);
      const value = member(response);
      if (value !== undefined) yield value;
    }
    finished = true;
  } catch (err) {
    throw GateClientError.from(err);
  } finally {
    signal?.removeEventListener('abort', cancel);
    if (!finished) cancel();
  }
}
