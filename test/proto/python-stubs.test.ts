/**
 * proto/gate.proto through the real protoc (grpcio-tools), not only protobufjs: the generated
 * Python stubs import, messages round-trip, and a few field numbers read back from the descriptors.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { describePythonFailure, generatePythonStubs, pythonPrerequisite, runPython } from '../support/python.ts';

const ready = requirePrerequisite('proto/python-stubs', pythonPrerequisite(['grpc', 'grpc_tools.protoc', 'google.protobuf']));

const FIELD_NUMBERS: Record<string, number> = {
  'StartServingProto.instanceBootUuid': 8,
  'ServiceToGateProto.startServing': 3,
  'ServiceToGateProto.deferredBillingCharges': 110,
  'GateToServiceProto.cancel': 108,
  'ClientRequestProto.predict': 101,
  'ClientRequestProto.partialPredict': 104,
};

describe.skipIf(!ready)('gate.proto compiled by grpc_tools.protoc for Python', () => {
  let stubsDir = '';

  beforeAll(async () => {
    stubsDir = await mkdtemp(join(tmpdir(), 'gate-py-stubs-'));
    await generatePythonStubs(stubsDir);
  });

  afterAll(async () => {
    if (stubsDir) await rm(stubsDir, { recursive: true, force: true });
  });

  it('generates gate_pb2.py and gate_pb2_grpc.py', async () => {
    const files = await readdir(stubsDir);
    expect(files).toEqual(expect.arrayContaining(['gate_pb2.py', 'gate_pb2_grpc.py']));
  });

  it('builds, serializes and parses messages; field numbers match the spec', async () => {
    const result = await runPython('check_gate_stubs.py', [stubsDir, ...Object.keys(FIELD_NUMBERS)]);
    expect(result.code, describePythonFailure(result)).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;

    expect(report.fieldNumbers).toEqual(FIELD_NUMBERS);
    // int64 fields come out of MessageToDict as strings, as in the proto3 JSON mapping.
    expect(report.serviceToGate).toMatchObject({
      requestId: '1',
      headers: { 'Z-requestId': 'r-1' },
      startServing: {
        connectionToken: 'secret-token',
        version: '2',
        instanceBootUuid: '7d3c1d1e-0000-4000-8000-000000000001',
        serviceDescriptor: { name: 'echo', methods: { predict: { output: { type: 'PredictResponse' } } } },
      },
    });
    expect(report.clientRequest).toEqual({
      account: '1',
      model: 'echo',
      authToken: 'key',
      timeoutSec: 5,
      predict: { data: { dataType: 'PredictRequest', json: '{"name": "x"}' } },
    });
    expect(report.wordStartMs).toBe(1500);
    expect(report.gateMethods).toEqual([
      'healthCheck',
      'processAsync',
      'process',
      'processResponseStream',
      'processStream',
      'processSynthesis',
      'processRecognition',
    ]);
    expect(report.grpcStubs).toEqual(['GateStub', 'GateServicer', 'add_GateServicer_to_server']);
  });
});
