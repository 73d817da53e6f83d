import { readFileSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import protobuf from 'protobufjs';
import descriptor, { type IDescriptorProto, type IFileDescriptorProto } from 'protobufjs/ext/descriptor/index.js';
import { GATE_PROTO_PATH, GATE_SERVICE_NAME, PROTO_LOADER_OPTS } from '../../proto/src/index.js';

/**
 * gRPC server reflection (v1 and v1alpha) for the Gate service, so grpcurl, Postman and other
 * generic clients list and call it without a copy of proto/gate.proto. It describes only what is
 * public in the proto file; every call is still admitted as usual.
 */
export function addGateReflection(server: Pick<grpc.Server, 'addService'>): void {
  const definition = protoLoader.loadSync(GATE_PROTO_PATH, PROTO_LOADER_OPTS);
  const files = gateFileDescriptors();
  // The reflection service reads the files from the definition: hand it ours instead of proto-loader's.
  const served = Object.fromEntries(
    Object.entries(definition).map(([name, value]) => [
      name,
      'fileDescriptorProtos' in value ? { ...value, fileDescriptorProtos: files } : value,
    ]),
  ) as protoLoader.PackageDefinition;
  new ReflectionService(served).addToServer(server);
}

// A CommonJS module: its members through the default import (Node has no named exports for it).
const { FileDescriptorProto } = descriptor;
type DescribableRoot = protobuf.Root & { toDescriptor(syntax: string): { file: IFileDescriptorProto[] } };

/**
 * The encoded FileDescriptorProtos of gate.proto and of every file it imports, as protoc writes
 * them, so that they build into a valid descriptor pool (grpcurl, Go's protodesc). What proto-loader
 * hands the reflection service (protobufjs's `toDescriptor`) is not: it names files after packages
 * (`com_platform_gate.proto`) and lists no imports, so a client cannot resolve
 * `google.protobuf.Duration`; it writes reserved and extension ranges with the end inclusive
 * (`reserved 7` as 7..7) where descriptors' ends are exclusive (7..8); it names a map field's entry
 * type `Headers` where protoc and protodesc require `HeadersEntry`; and its type names are relative.
 */
export function gateFileDescriptors(): Buffer[] {
  const imports = protobuf.parse(readFileSync(GATE_PROTO_PATH, 'utf8'), { keepCase: true }).imports ?? [];
  const gateRoot = new protobuf.Root().loadSync(GATE_PROTO_PATH, { keepCase: true }).resolveAll() as DescribableRoot;
  const gatePackage = GATE_SERVICE_NAME.slice(0, GATE_SERVICE_NAME.lastIndexOf('.'));
  const gate = gateRoot.toDescriptor('proto3').file.find((file) => file.package === gatePackage);
  if (!gate) throw new Error(`${GATE_PROTO_PATH}: no package with the Gate service`);
  gate.name = GATE_PROTO_PATH.split('/').pop()!;
  gate.dependency = imports;
  const imported = imports.map((name) => {
    // The well-known files (google/protobuf/*.proto) that protobufjs carries, one file each.
    const json = protobuf.common.get(name);
    if (!json) throw new Error(`${gate.name} imports ${name}, which reflection cannot describe`);
    const root = protobuf.Root.fromJSON(json).resolveAll() as DescribableRoot;
    const [file] = root.toDescriptor('proto3').file;
    return { file: { ...file!, name, dependency: [] }, root };
  });
  return [{ file: gate, root: gateRoot }, ...imported].map(({ file, root }) => {
    for (const message of file.messageType ?? []) asProtocWrites(message, root.lookupType(`${file.package}.${message.name}`));
    for (const service of file.service ?? []) {
      const described = root.lookupService(`${file.package}.${service.name}`);
      for (const method of service.method ?? []) {
        const { resolvedRequestType, resolvedResponseType } = described.methods[method.name!]!;
        method.inputType = resolvedRequestType!.fullName;
        method.outputType = resolvedResponseType!.fullName;
      }
    }
    return Buffer.from(FileDescriptorProto.encode(FileDescriptorProto.fromObject(file)).finish());
  });
}

/** Fixes one message (and its nested ones) in place: exclusive range ends, map entry names, full type names. */
function asProtocWrites(message: IDescriptorProto, type: protobuf.Type): void {
  for (const range of [...(message.reservedRange ?? []), ...(message.extensionRange ?? [])]) if (range.end != null) range.end += 1;
  for (const field of message.field ?? []) {
    const described = type.fields[field.name!];
    if (!described) continue;
    if (described.map) {
      const entry = message.nestedType?.find((nested) => nested.name === field.typeName && nested.options?.mapEntry);
      if (!entry) continue;
      entry.name = mapEntryName(field.name!);
      field.typeName = `${type.fullName}.${entry.name}`;
      const value = entry.field?.find((f) => f.name === 'value');
      if (value?.typeName && described.resolvedType) value.typeName = described.resolvedType.fullName;
    } else if (field.typeName && described.resolvedType) {
      field.typeName = described.resolvedType.fullName;
    }
  }
  for (const nested of message.nestedType ?? []) {
    const inner = type.nested?.[nested.name!];
    if (inner instanceof protobuf.Type) asProtocWrites(nested, inner);
  }
}

/** protoc's name of a map field's entry type: `schema_files` and `schemaFiles` → `SchemaFilesEntry`. */
function mapEntryName(field: string): string {
  return `${field.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()).replace(/^\w/, (c) => c.toUpperCase())}Entry`;
}
