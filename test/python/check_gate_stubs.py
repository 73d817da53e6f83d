"""Exercises the Python stubs generated from proto/gate.proto by grpc_tools.protoc.

Usage: python check_gate_stubs.py <stubs-dir> <Message.field>...
Builds and round-trips a few messages through the wire format, then prints one JSON object on
stdout for the test to assert on: the parsed messages, the field numbers asked for (read from the
descriptors) and the Gate service's methods. Any exception exits non-zero with a traceback.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])

from google.protobuf import json_format  # noqa: E402

import gate_pb2  # noqa: E402
import gate_pb2_grpc  # noqa: E402


def round_trip(message):
    """Serializes, parses into a fresh instance, and checks nothing was lost."""
    wire = message.SerializeToString()
    parsed = type(message).FromString(wire)
    assert parsed == message, f"{type(message).__name__} changed in a round trip"
    return parsed


def field_number(path):
    """'StartServingProto.instanceBootUuid' -> 8, from the generated descriptors."""
    message_name, field_name = path.split(".")
    return gate_pb2.DESCRIPTOR.message_types_by_name[message_name].fields_by_name[field_name].number


to_gate = gate_pb2.ServiceToGateProto(requestId=1, headers={"Z-requestId": "r-1"})
to_gate.startServing.connectionToken = "secret-token"
to_gate.startServing.version = 2
to_gate.startServing.instanceBootUuid = "7d3c1d1e-0000-4000-8000-000000000001"
to_gate.startServing.serviceDescriptor.name = "echo"
to_gate.startServing.serviceDescriptor.methods["predict"].output.type = "PredictResponse"
to_gate = round_trip(to_gate)
assert to_gate.WhichOneof("body") == "startServing"
assert to_gate.startServing.HasField("instanceBootUuid")

request = gate_pb2.ClientRequestProto(account="1", model="echo", authToken="key", timeoutSec=5)
request.predict.data.dataType = "PredictRequest"
request.predict.data.json = '{"name": "x"}'
request = round_trip(request)
assert request.WhichOneof("body") == "predict"
assert request.predict.data.WhichOneof("body") == "json"

# A message using the imported well-known type google.protobuf.Duration.
word = gate_pb2.WordInfo()
word.start_time.FromMilliseconds(1500)
word = round_trip(word)

gate = gate_pb2.DESCRIPTOR.services_by_name["Gate"]
stubs = [name for name in ("GateStub", "GateServicer", "add_GateServicer_to_server") if hasattr(gate_pb2_grpc, name)]

json.dump(
    {
        "serviceToGate": json_format.MessageToDict(to_gate),
        "clientRequest": json_format.MessageToDict(request),
        "wordStartMs": word.start_time.ToMilliseconds(),
        "fieldNumbers": {path: field_number(path) for path in sys.argv[2:]},
        "gateMethods": [method.name for method in gate.methods],
        "grpcStubs": stubs,
    },
    sys.stdout,
)
