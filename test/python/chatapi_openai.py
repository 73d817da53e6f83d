"""The official OpenAI Python client against the standard chat adapter, with no change but base_url.

Usage: chatapi_openai.py <base_url>   (keys in CHAT_KEY, READ_ONLY_KEY, OTHER_KEY, LIMITED_KEY)

Runs every check, prints one JSON line per check ({"check", "ok", "error"?}) and exits 1 when any
check failed, so the Node test can report exactly which one.
"""
import json
import os
import sys
import traceback

import openai
from openai import OpenAI

BASE = sys.argv[1]
KEY = os.environ["CHAT_KEY"]
client = OpenAI(api_key=KEY, base_url=BASE, max_retries=0)
MESSAGES = [{"role": "user", "content": "hello from python"}]
checks = []


def check(fn):
    checks.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


@check
def chat_completion():
    c = client.chat.completions.create(model="demo/echo", messages=MESSAGES, temperature=0.3)
    expect(c.object == "chat.completion", c.object)
    expect(c.choices[0].message.content == "Echo: hello from python", c.choices[0].message.content)
    expect(c.choices[0].finish_reason == "stop", c.choices[0].finish_reason)
    expect(c._request_id, "no request id")


@check
def chat_stream():
    text, finish = "", None
    for chunk in client.chat.completions.create(model="demo/echo", messages=MESSAGES, stream=True):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finish = chunk.choices[0].finish_reason or finish
    expect(text == "Echo: hello from python", text)
    expect(finish == "stop", finish)


@check
def chat_stream_include_usage():
    chunks = list(client.chat.completions.create(
        model="demo/echo", messages=MESSAGES, stream=True, stream_options={"include_usage": True}))
    last = chunks[-1]
    expect(last.choices == [], last.choices)
    expect(last.usage is not None and last.usage.total_tokens == 7, last.usage)
    expect(all(c.usage is None for c in chunks[:-1]), "usage before the last chunk")


@check
def chat_stream_helper():
    with client.chat.completions.stream(model="demo/echo", messages=MESSAGES) as stream:
        final = stream.get_final_completion()
    expect(final.choices[0].message.content == "Echo: hello from python", final.choices[0].message.content)


@check
def tool_call_through_proxy():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    c = client.chat.completions.create(model="demo/openai-proxy/gpt-4o-mini", messages=ask, tools=tools)
    call = c.choices[0].message.tool_calls[0]
    expect(c.choices[0].finish_reason == "tool_calls", c.choices[0].finish_reason)
    expect((call.id, call.function.name, json.loads(call.function.arguments)) == ("call_weather_1", "get_weather", {"city": "Paris"}), call)
    args = ""
    for chunk in client.chat.completions.create(model="demo/openai-proxy/gpt-4o-mini", messages=ask, tools=tools, stream=True):
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            args += tc.function.arguments or ""
    expect(json.loads(args) == {"city": "Paris"}, args)


def raises(cls, status, message, fn):
    try:
        fn()
    except cls as e:
        expect(e.status_code == status, f"status {e.status_code}")
        expect(message in e.message, f"message {e.message!r}")
        expect(e.request_id, "no request_id")
        return e
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"expected {cls.__name__}, got {type(e).__name__}: {e}")
    raise AssertionError(f"expected {cls.__name__}, nothing raised")


def other(key):
    return OpenAI(api_key=key, base_url=BASE, max_retries=0)


@check
def errors():
    raises(openai.AuthenticationError, 401, "API key is not valid",
           lambda: other("not-a-key").chat.completions.create(model="demo/echo", messages=MESSAGES))
    raises(openai.PermissionDeniedError, 403, "MODEL_REQUESTS",
           lambda: other(os.environ["READ_ONLY_KEY"]).chat.completions.create(model="demo/echo", messages=MESSAGES))
    raises(openai.NotFoundError, 404, "not available to this key",
           lambda: other(os.environ["OTHER_KEY"]).chat.completions.create(model="demo/private", messages=MESSAGES))
    raises(openai.NotFoundError, 404, "demo/nothing",
           lambda: client.chat.completions.create(model="demo/nothing", messages=MESSAGES))
    e = raises(openai.BadRequestError, 400, "role",
               lambda: client.chat.completions.create(model="demo/echo", messages=[{"content": "x"}]))
    expect(e.param == "messages[0].role", e.param)
    expect(e.code == "VALIDATION_FAILED", e.code)
    e = raises(openai.BadRequestError, 400, "temperature",
               lambda: client.chat.completions.create(model="demo/echo/echo-1", messages=MESSAGES, temperature=3))
    expect(e.param == "temperature", e.param)
    raises(openai.InternalServerError, 500, "the model crashed",
           lambda: client.chat.completions.create(model="demo/faulty", messages=[{"role": "user", "content": "fail-500"}]))
    raises(openai.InternalServerError, 503, "the model is overloaded",
           lambda: client.chat.completions.create(model="demo/faulty", messages=[{"role": "user", "content": "fail-503"}], stream=True))
    limited = other(os.environ["LIMITED_KEY"])
    try:
        limited.chat.completions.create(model="demo/echo", messages=MESSAGES)
    except openai.RateLimitError:
        pass
    raises(openai.RateLimitError, 429, "requests per second",
           lambda: limited.chat.completions.create(model="demo/echo", messages=MESSAGES))


@check
def error_mid_stream():
    stream = client.chat.completions.create(model="demo/faulty", messages=[{"role": "user", "content": "fail-mid-stream"}], stream=True)
    try:
        for _ in stream:
            pass
    except openai.APIError as e:
        expect("the model crashed mid-stream" in e.message, e.message)
        return
    raise AssertionError("no APIError from the stream")


@check
def models():
    ids = [m.id for m in client.models.list()]
    for wanted in ["demo/echo", "demo/echo/echo-1", "demo/echo/echo-2", "demo/openai-proxy"]:
        expect(wanted in ids, f"{wanted} not in {ids}")
    m = client.models.retrieve("demo/echo/echo-2")
    expect((m.id, m.object, m.owned_by) == ("demo/echo/echo-2", "model", "demo"), m)
    raises(openai.NotFoundError, 404, "demo/echo/unknown", lambda: client.models.retrieve("demo/echo/unknown"))


@check
def embeddings():
    default = client.embeddings.create(model="demo/echo", input=["alpha", "beta"])
    floats = client.embeddings.create(model="demo/echo", input=["alpha", "beta"], encoding_format="float")
    expect(len(default.data) == 2 and len(default.data[0].embedding) == 8, default.data)
    expect([d.embedding for d in default.data] == [d.embedding for d in floats.data], "base64 and float differ")
    expect([d.index for d in floats.data] == [0, 1], "indexes")


@check
def legacy_completions():
    c = client.completions.create(model="demo/echo", prompt="once upon a time")
    expect(c.choices[0].text == "Echo: once upon a time", c.choices[0].text)
    text = "".join(chunk.choices[0].text for chunk in client.completions.create(model="demo/echo", prompt="once upon a time", stream=True) if chunk.choices)
    expect(text == "Echo: once upon a time", text)


failed = 0
for fn in checks:
    try:
        fn()
        print(json.dumps({"check": fn.__name__, "ok": True}), flush=True)
    except Exception as e:  # noqa: BLE001
        failed += 1
        print(json.dumps({"check": fn.__name__, "ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}), flush=True)
sys.exit(1 if failed else 0)
