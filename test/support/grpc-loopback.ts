import * as grpc from '@grpc/grpc-js';

const MiB = 2 ** 20;
/** Messages of raw bytes both ways: what the loopback methods and their client pass as they are. */
export const identity = (bytes: Buffer) => bytes;

/**
 * A grpc-js server on 127.0.0.1 with one method of raw bytes at `path` (its requests read by
 * `deserialize`, its number answer sent as text) and `interceptors`, and a plain client for it;
 * messages up to 8 MiB both ways. For tests of what grpc-js itself does with a call.
 */
export async function loopbackMethod<T>(options: {
  path: string;
  requestStream: boolean;
  deserialize: (bytes: Buffer) => T;
  handler: grpc.handleUnaryCall<T, number> | grpc.handleClientStreamingCall<T, number>;
  interceptors?: grpc.ServerInterceptor[];
}): Promise<{ client: grpc.Client; close: () => void }> {
  const server = new grpc.Server({ interceptors: options.interceptors ?? [], 'grpc.max_receive_message_length': 8 * MiB });
  server.addService(
    {
      method: {
        path: options.path,
        requestStream: options.requestStream,
        responseStream: false,
        requestDeserialize: options.deserialize,
        requestSerialize: identity,
        responseSerialize: (n: number) => Buffer.from(String(n)),
        responseDeserialize: identity,
      },
    },
    { method: options.handler as grpc.UntypedHandleCall },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 8 * MiB });
  return {
    client,
    close: () => {
      client.close();
      server.forceShutdown();
    },
  };
}
