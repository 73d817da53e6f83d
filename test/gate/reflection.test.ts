import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * gRPC server reflection, judged the way grpcurl uses it: a client that has only the standard
 * reflection proto lists the services, fetches the Gate's file descriptors, and calls
 * `Gate.process` with message types built from those descriptors alone (no proto/gate.proto).
 */
const REFLECTION_PROTO = createRequire(import.meta.url).resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');

interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

function reflectionClient(address: string) {
  const definition = protoLoader.loadSync(REFLECTION_PROTO, { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  const pkg = grpc.loadPackageDefinition(definition) as any;
  return new pkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure()) as grpc.Client & {
    ServerReflectionInfo(): grpc.ClientDuplexStream<Record<string, string>, ReflectionResponse>;
  };
}

/** One reflection request, one answer, on its own stream. */
function ask(client: ReturnType<typeof reflectionClient>, request: Record<string, string>): Promise<ReflectionResponse> {
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.once('data', (response: ReflectionResponse) => {
      resolve(response);
      call.end();
    });
    call.once('error', reject);
    call.write(request);
  });
}

describe('gRPC server reflection', () => {
  let gw: TestGateway;
  let client: ReturnType<typeof reflectionClient>;

  beforeAll(async () => {
    gw = await startTestGateway();
    client = reflectionClient(gw.grpcAddress);
  });
  afterAll(async () => {
    client?.close();
    await gw?.close();
  });

  it('lists the Gate service', async () => {
    const answer = await ask(client, { list_services: '' });
    const names = answer.list_services_response!.service.map((s) => s.name);
    expect(names).toEqual(['com.platform.gate.Gate']);
  });

  it('describes the Gate well enough to call it without the proto file', async () => {
    const answer = await ask(client, { file_containing_symbol: 'com.platform.gate.Gate' });
    const files = answer.file_descriptor_response!.file_descriptor_proto.map((bytes) => descriptor.FileDescriptorProto.decode(bytes));
    const root = (protobuf.Root as any).fromDescriptor({ file: files }) as protobuf.Root;
    const gate = root.lookupService('com.platform.gate.Gate');
    expect(Object.keys(gate.methods)).toEqual(expect.arrayContaining(['healthCheck', 'processAsync', 'process', 'processResponseStream', 'processStream', 'processSynthesis', 'processRecognition']));

    const method = gate.methods.process!;
    const requestType = root.lookupType(method.requestType);
    const responseType = root.lookupType(method.responseType);
    const generic = new grpc.Client(gw.grpcAddress, grpc.credentials.createInsecure());
    const reply = await new Promise<Record<string, any>>((resolve, reject) => {
      generic.makeUnaryRequest(
        '/com.platform.gate.Gate/process',
        (value: Record<string, unknown>) => Buffer.from(requestType.encode(requestType.fromObject(value)).finish()),
        (bytes: Buffer) => responseType.toObject(responseType.decode(bytes), { defaults: false }),
        { account: 'nobody', model: 'nothing', authToken: TEST_KEY, predict: { data: { json: '{}' } } },
        (err, value) => (err ? reject(err) : resolve(value as Record<string, any>)),
      );
    });
    generic.close();
    // The gateway's own in-band answer, decoded with the reflected types only.
    expect(reply.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', statusCode: 400 });
  });
});
