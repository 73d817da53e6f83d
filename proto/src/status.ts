import { loadGatePackage } from './loader.js';
import type { SimpleStatusName } from './messages.js';

let byName: ReadonlyMap<string, number> | undefined;
let byCode: ReadonlyMap<number, SimpleStatusName> | undefined;

/**
 * The `SimpleStatusProto` enum as gate.proto defines it (name → HTTP status), read from the gRPC
 * package every gateway and service has loaded already. A second parse of gate.proto (protobufjs's
 * Root) took 11 ms of event loop at a process's first error answer.
 */
function simpleStatuses(): ReadonlyMap<string, number> {
  if (!byName) {
    const { value } = loadGatePackage().com.platform.gate.SimpleStatusProto.type as { value: { name: string; number: number }[] };
    byName = new Map(value.map(({ name, number }) => [name, number]));
  }
  return byName;
}

/** The HTTP status of a `SimpleStatusProto` name (`BAD_REQUEST` → 400); `OK` is 0; undefined for other names. */
export function statusOfSimpleStatus(name: string | undefined): number | undefined {
  return name === undefined ? undefined : simpleStatuses().get(name);
}

/** The `SimpleStatusProto` name of an HTTP status (404 → `NOT_FOUND`), when the enum has one. */
export function simpleStatusOf(status: number): SimpleStatusName | undefined {
  if (!byCode) byCode = new Map([...simpleStatuses()].map(([name, code]) => [code, name as SimpleStatusName]));
  return byCode.get(status);
}
