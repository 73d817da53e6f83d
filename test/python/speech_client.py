"""A speech client written with plain grpcio from proto/gate.proto (no SDK).

Usage: speech_client.py <stubs_dir> <gateway host:port> <api key> <phrase> <provider_specific>
1. processSynthesis of <phrase> from demo/tts at 16 kHz in 1 KB chunks;
2. processRecognition of that audio by demo/asr, streamed in 20 ms messages, once without and once
   with partial results;
3. processRecognition that sends audio before its config (a bad request).
Prints one JSON object with what came back.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import gate_pb2  # noqa: E402
import gate_pb2_grpc  # noqa: E402

address, key, phrase, provider_specific = sys.argv[2:6]
stub = gate_pb2_grpc.GateStub(grpc.insecure_channel(address))
out = {}

synthesis = stub.processSynthesis(gate_pb2.ClientTtsRequestProto(
    account="demo", model="tts", authToken=key,
    tts=gate_pb2.TtsRequestProto(text=phrase, output_audio_spec=gate_pb2.AudioFormatOptions(
        audio_encoding=gate_pb2.AudioFormatOptions.LINEAR16_PCM, sample_rate_hertz=16000, chunk_size_kb=1)),
), timeout=60)
audio = b""
chunks = []
for response in synthesis:
    if response.HasField("error"):
        out["tts_error"] = response.error.code
        break
    data = response.tts.audio_chunk.data
    chunks.append({"size": len(data), "first": response.tts.first, "last": response.tts.last})
    audio += data
out["tts"] = chunks


def recognize(partial, messages=None):
    def requests():
        base = {"account": "demo", "model": "asr", "authToken": key}
        if messages is not None:
            for m in messages:
                yield gate_pb2.ClientAsrRequestProto(**base, asr=m)
            return
        yield gate_pb2.ClientAsrRequestProto(**base, asr=gate_pb2.AsrRequestProto(config=gate_pb2.RecognitionConfig(
            audio_encoding=gate_pb2.RecognitionConfig.LINEAR16_PCM, sample_rate_hertz=16000, language_code="en-US",
            enable_partial_results=partial, provider_specific=provider_specific)))
        for i in range(0, len(audio), 640):
            yield gate_pb2.ClientAsrRequestProto(**base, asr=gate_pb2.AsrRequestProto(audio_content=audio[i:i + 640]))

    results = []
    for response in stub.processRecognition(requests(), timeout=60):
        if response.HasField("error"):
            results.append({"error": response.error.code, "status": response.error.statusCode})
            continue
        for chunk in response.asr.chunks:
            results.append({
                "text": chunk.alternatives[0].text if chunk.alternatives else "",
                "final": chunk.final,
                "end_of_utterance": chunk.end_of_utterance,
                "words": [w.word for w in chunk.alternatives[0].words] if chunk.alternatives else [],
            })
    return results


out["asr"] = recognize(False)
out["asr_partial"] = recognize(True)
out["asr_audio_first"] = recognize(False, [
    gate_pb2.AsrRequestProto(audio_content=audio[:640]),
    gate_pb2.AsrRequestProto(config=gate_pb2.RecognitionConfig(sample_rate_hertz=16000)),
])
print(json.dumps(out))
