"""The official OpenAI Python client against the gateway's audio bridges.

Usage: openai_audio.py <base_url> <api key> <phrase> <provider_specific>
Synthesizes <phrase> with audio.speech (model demo/tts, streamed WAV), then transcribes that WAV with
audio.transcriptions (model demo/asr; provider_specific passed as an extra form field), as JSON and
as text, and asks for an unknown model. Prints one JSON object with what came back.
"""
import io
import json
import sys

import openai

base_url, key, phrase, provider_specific = sys.argv[1:5]
client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0)
out = {}

with client.audio.speech.with_streaming_response.create(model="demo/tts", voice="alloy", input=phrase, response_format="wav") as response:
    out["speech_content_type"] = response.headers.get("content-type")
    pieces = list(response.iter_bytes())
wav = b"".join(pieces)
out["speech_bytes"] = len(wav)
out["speech_riff"] = wav[:4].decode("ascii")

audio = io.BytesIO(wav)
audio.name = "speech.wav"
transcript = client.audio.transcriptions.create(model="demo/asr", file=audio, language="en", extra_body={"provider_specific": provider_specific})
out["json_text"] = transcript.text

audio.seek(0)
out["text"] = client.audio.transcriptions.create(model="demo/asr", file=audio, response_format="text", extra_body={"provider_specific": provider_specific})

try:
    client.audio.speech.create(model="demo/nothing", voice="alloy", input=phrase)
except openai.NotFoundError as e:
    out["unknown_model"] = {"status": e.status_code, "code": e.code, "param": e.param}

print(json.dumps(out))
