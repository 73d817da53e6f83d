"""A model service written with plain grpcio from proto/gate.proto (no SDK).

Usage: gate_service.py <stubs_dir> <gateway host:port> <connection token>
Registers with startServing, heartbeats at the gateway's interval, answers predict with
{"python": true, "echo": <data>, "requestId": <Z-requestId header>} and ext with
{"python": true, "method": <methodName>, "params": {<name>: <the parameter payload's json>}}. Prints READY once the
gateway sent serviceInfo; runs until killed or the stream ends.
"""
import json
import os
import queue
import sys
import threading
import uuid

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import gate_pb2  # noqa: E402
import gate_pb2_grpc  # noqa: E402

address, token = sys.argv[2], sys.argv[3]
channel = grpc.insecure_channel(address)
stub = gate_pb2_grpc.GateStub(channel)

health = stub.healthCheck(gate_pb2.HeartBeatProto(), timeout=10)
assert health.status == "Ok", health

outgoing = queue.Queue()
outgoing.put(gate_pb2.ServiceToGateProto(startServing=gate_pb2.StartServingProto(
    connectionToken=token,
    serviceDescriptor=gate_pb2.ServiceDescriptorProto(name="python-echo"),
    hostname="python-test",
    instanceBootUuid=str(uuid.uuid4()),
)))


def requests():
    while True:
        message = outgoing.get()
        if message is None:
            return
        yield message


def heartbeat(interval_ms):
    stop = threading.Event()
    while not stop.wait(interval_ms / 1000.0):
        outgoing.put(gate_pb2.ServiceToGateProto(heartBeat=gate_pb2.HeartBeatProto()))


heartbeats_started = False
# GATE_SERVICE_TRACE=1: the first message of each kind is named on stderr, which the test reports
# when this service never gets ready.
trace = os.environ.get("GATE_SERVICE_TRACE") == "1"
kinds_seen = set()
for message in stub.processAsync(requests()):
    kind = message.WhichOneof("body")
    if trace and kind not in kinds_seen:
        kinds_seen.add(kind)
        print("got", kind, file=sys.stderr, flush=True)
    if kind == "serviceInfo":
        print("READY", message.serviceInfo.modelName, flush=True)
    elif kind == "heartBeat" and not heartbeats_started:
        heartbeats_started = True
        threading.Thread(target=heartbeat, args=(message.heartBeat.interval,), daemon=True).start()
    elif kind == "predict":
        data = json.loads(message.predict.data.json)
        answer = {"python": True, "echo": data, "requestId": message.headers.get("Z-requestId")}
        outgoing.put(gate_pb2.ServiceToGateProto(
            requestId=message.requestId,
            predict=gate_pb2.PredictResponseProto(data=gate_pb2.PayloadProto(json=json.dumps(answer))),
        ))
    elif kind == "ext":
        # params is map<string, PayloadProto>, as in the platform's public SDKs.
        params = {name: payload.json for name, payload in message.ext.params.items()}
        answer = {"python": True, "method": message.ext.methodName, "params": params}
        outgoing.put(gate_pb2.ServiceToGateProto(
            requestId=message.requestId,
            ext=gate_pb2.ExtendedResponseProto(data=gate_pb2.PayloadProto(json=json.dumps(answer))),
        ))
