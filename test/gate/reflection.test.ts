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
  const definition = protoLoader.loadSync(REFLECTION_PROTO, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
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
    expect(Object.keys(gate.methods)).toEqual(
      expect.arrayContaining([
        'healthCheck',
        'processAsync',
        'process',
        'processResponseStream',
        'processStream',
        'processSynthesis',
        'processRecognition',
      ]),
    );

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

  // What grpcurl (Go's protodesc) checks when it builds the served files into a descriptor pool:
  // each file's imports are served under the names it imports them by, every type it names (fully
  // qualified, as protoc writes them) is defined in it or in one of its imports, a map field's entry
  // type is named `<Field>Entry`, and ranges end exclusively (`reserved 7` is 7..8; it was served as
  // 7..7, which protodesc rejects, and duration.proto was not served at all).
  it('serves gate.proto with every file it imports, as a valid descriptor pool', async () => {
    const answer = await ask(client, { file_containing_symbol: 'com.platform.gate.Gate' });
    const files = answer.file_descriptor_response!.file_descriptor_proto.map(
      (bytes) => descriptor.FileDescriptorProto.decode(bytes) as any,
    );
    const byName = new Map(files.map((file) => [file.name as string, file]));
    const gate = byName.get('gate.proto');
    expect(gate?.dependency).toEqual(['google/protobuf/duration.proto']);
    expect(byName.get('google/protobuf/duration.proto')?.package).toBe('google.protobuf');

    for (const file of files) {
      for (const dependency of file.dependency as string[]) {
        expect(byName.has(dependency), `${file.name} imports ${dependency}`).toBe(true);
        const alone = await ask(client, { file_by_filename: dependency });
        expect(alone.error_response, dependency).toBeUndefined();
      }
      // Every type a field or method names is defined in this file or one it imports.
      const visible = new Set<string>();
      const define = (prefix: string, message: any) => {
        visible.add(`${prefix}.${message.name}`);
        for (const nested of message.nestedType ?? []) define(`${prefix}.${message.name}`, nested);
        for (const nested of message.enumType ?? []) visible.add(`${prefix}.${message.name}.${nested.name}`);
      };
      for (const seen of [file, ...file.dependency.map((d: string) => byName.get(d))]) {
        for (const message of seen.messageType ?? []) define(`.${seen.package}`, message);
        for (const e of seen.enumType ?? []) visible.add(`.${seen.package}.${e.name}`);
      }
      const named: string[] = [];
      const entries: string[] = [];
      const collect = (message: any) => {
        for (const field of message.field ?? []) if (field.typeName) named.push(field.typeName);
        for (const nested of message.nestedType ?? []) {
          if (nested.options?.mapEntry) entries.push(nested.name);
          collect(nested);
        }
      };
      file.messageType?.forEach(collect);
      for (const service of file.service ?? []) for (const m of service.method ?? []) named.push(m.inputType, m.outputType);
      expect(
        named.filter((name) => !visible.has(name)),
        file.name,
      ).toEqual([]);
      expect(
        entries.filter((name) => !name.endsWith('Entry')),
        file.name,
      ).toEqual([]);
      if (file === gate) expect(entries).toContain('SchemaFilesEntry');

      const ranges = (message: any): { message: string; start: number; end: number }[] => [
        ...[...(message.reservedRange ?? []), ...(message.extensionRange ?? [])].map((r: any) => ({
          message: message.name,
          start: r.start,
          end: r.end,
        })),
        ...(message.nestedType ?? []).flatMap(ranges),
      ];
      const all = (file.messageType ?? []).flatMap(ranges);
      expect(
        all.filter((r: { start: number; end: number }) => !(r.end > r.start)),
        file.name,
      ).toEqual([]);
      if (file === gate) expect(all).toContainEqual({ message: 'StartServingProto', start: 7, end: 8 });
    }
  });
});
