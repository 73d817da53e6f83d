"""The official Anthropic Python client against the chat adapters' Messages API, base_url only.

Usage: messages_anthropic.py <standard base_url> <direct base_url>   (keys in CHAT_KEY, READ_ONLY_KEY)

Prints one JSON line per check ({"check", "ok", "error"?}) and exits 1 when any failed.
"""
import json
import os
import sys
import traceback

import anthropic
from anthropic import Anthropic

BASE, DIRECT = sys.argv[1], sys.argv[2]
KEY = os.environ["CHAT_KEY"]
client = Anthropic(api_key=KEY, base_url=BASE, max_retries=0)
direct = Anthropic(api_key=KEY, base_url=DIRECT, max_retries=0)
PROXY = "demo/openai-proxy/gpt-up"
WEATHER = {"name": "get_weather", "description": "Weather in a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
checks = []


def check(fn):
    checks.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def raises(cls, fn):
    try:
        fn()
    except cls as e:
        return e
    raise AssertionError(f"expected {cls.__name__}")


@check
def create_string_content():
    m = client.messages.create(model="demo/echo", max_tokens=50, messages=[{"role": "user", "content": "hello from python"}])
    expect(m.type == "message" and m.content[0].text == "Echo: hello from python", m.content)
    expect(m.stop_reason == "end_turn", m.stop_reason)
    expect(m._request_id, "no request id")


@check
def stream_helpers():
    with client.messages.stream(model="demo/echo", max_tokens=50, messages=[{"role": "user", "content": "one two"}]) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    expect(text == "Echo: one two", text)
    expect(final.content[0].text == "Echo: one two" and final.stop_reason == "end_turn", final)
    events = [e.type for e in client.messages.create(model="demo/echo", max_tokens=50, stream=True, messages=[{"role": "user", "content": "x"}])]
    expect(events[0] == "message_start" and events[-1] == "message_stop", events)


@check
def tool_round_trip():
    ask = {"role": "user", "content": "Weather in Paris?"}
    first = client.messages.create(model=PROXY, max_tokens=100, tools=[WEATHER], messages=[ask])
    use = next(b for b in first.content if b.type == "tool_use")
    expect(first.stop_reason == "tool_use" and use.input == {"city": "Paris"}, first)
    second = client.messages.create(model=PROXY, max_tokens=100, tools=[WEATHER], messages=[
        ask, {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "21 C"}]}])
    expect(second.content[0].text == "The tool said: 21 C", second.content)


@check
def count_tokens():
    n = client.messages.count_tokens(model="demo/echo", system="one two", messages=[{"role": "user", "content": "three four five"}])
    expect(n.input_tokens == 5, n)
    n = direct.messages.count_tokens(model="demo/claude/c", messages=[{"role": "user", "content": [{"type": "text", "text": "n"}]}])
    expect(n.input_tokens == len(json.dumps([{"role": "user", "content": [{"type": "text", "text": "n"}]}], separators=(",", ":"))), n)


@check
def direct_adapter():
    m = direct.messages.create(model="demo/claude/c", max_tokens=20, messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    expect(m.content[0].text == "Claude heard: hi", m.content)
    # A string content reaches the Anthropic-family service as one text block; content that is no part is a 400.
    m = direct.messages.create(model="demo/claude/c", max_tokens=20, messages=[{"role": "user", "content": "a string"}])
    expect(m.content[0].text == "Claude heard: a string", m.content)
    e = raises(anthropic.BadRequestError, lambda: direct.messages.create(model="demo/claude/c", max_tokens=20, messages=[{"role": "user", "content": [{"text": "no type"}]}]))
    expect("messages[0].content" in e.message, e.message)


@check
def error_classes():
    hi = [{"role": "user", "content": "hi"}]
    bad_key = Anthropic(api_key="nope", base_url=BASE, max_retries=0)
    read_only = Anthropic(api_key=os.environ["READ_ONLY_KEY"], base_url=BASE, max_retries=0)
    cases = [
        (anthropic.AuthenticationError, "authentication_error", lambda: bad_key.messages.create(model="demo/echo", max_tokens=5, messages=hi)),
        (anthropic.PermissionDeniedError, "permission_error", lambda: read_only.messages.create(model="demo/echo", max_tokens=5, messages=hi)),
        (anthropic.NotFoundError, "not_found_error", lambda: client.messages.create(model="demo/nothing", max_tokens=5, messages=hi)),
        (anthropic.BadRequestError, "invalid_request_error", lambda: client.messages.create(model="demo/echo", max_tokens=5, messages=hi, extra_body={"temperature": 9})),
        (anthropic.RateLimitError, "rate_limit_error", lambda: client.messages.create(model="demo/claude/c", max_tokens=5, messages=[{"role": "user", "content": "rate-limited"}])),
        (anthropic.InternalServerError, "api_error", lambda: client.messages.create(model="demo/claude/c", max_tokens=5, messages=[{"role": "user", "content": "server-error"}])),
        (anthropic.OverloadedError, "overloaded_error", lambda: client.messages.create(model="demo/claude/c", max_tokens=5, messages=[{"role": "user", "content": "upstream-error"}])),
        (anthropic.InternalServerError, "api_error", lambda: client.messages.create(model="demo/private", max_tokens=5, messages=hi)),
    ]
    for cls, kind, fn in cases:
        e = raises(cls, fn)
        expect(e.body["error"]["type"] == kind, (cls.__name__, e.body))
        expect(e.request_id, (cls.__name__, "no request id"))


@check
def cut_off_stream():
    def drain():
        with client.messages.stream(model="demo/claude/c", max_tokens=5, messages=[{"role": "user", "content": "cut-off"}]) as s:
            for _ in s:
                pass
    e = raises(anthropic.APIError, drain)
    expect("message_stop" in str(e), str(e))


failed = 0
for fn in checks:
    try:
        fn()
        print(json.dumps({"check": fn.__name__, "ok": True}), flush=True)
    except Exception as e:  # noqa: BLE001
        failed += 1
        print(json.dumps({"check": fn.__name__, "ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}), flush=True)
sys.exit(1 if failed else 0)
