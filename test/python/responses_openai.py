"""The official OpenAI Python client's Responses API against the standard chat adapter, base_url only.

Usage: responses_openai.py <base_url>   (keys in CHAT_KEY, OTHER_KEY)

Prints one JSON line per check ({"check", "ok", "error"?}) and exits 1 when any failed.
"""
import json
import os
import sys
import traceback

import openai
from openai import OpenAI
from pydantic import BaseModel

BASE = sys.argv[1]
client = OpenAI(api_key=os.environ["CHAT_KEY"], base_url=BASE, max_retries=0)
other = OpenAI(api_key=os.environ["OTHER_KEY"], base_url=BASE, max_retries=0)
PROXY = "demo/openai-proxy/gpt-up"
WEATHER = {
    "type": "function", "name": "get_weather", "description": "Weather in a city", "strict": True,
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False},
}
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
def create():
    r = client.responses.create(model="demo/echo", input="hello from python", instructions="Be an echo.")
    expect(r.object == "response" and r.id.startswith("resp_"), r.id)
    expect(r.status == "completed", r.status)
    expect(r.output_text == "Echo: hello from python", r.output_text)
    expect(r.usage is not None and r.usage.total_tokens == 10, r.usage)
    expect(r._request_id, "no request id")


@check
def stream():
    events = list(client.responses.create(model="demo/echo", input="one two", stream=True))
    expect([e.sequence_number for e in events] == list(range(len(events))), "sequence numbers")
    expect(events[0].type == "response.created" and events[-1].type == "response.completed", [e.type for e in events])
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    expect(text == "Echo: one two", text)
    with client.responses.stream(model="demo/echo", input="via the helper") as s:
        for _ in s:
            pass
        final = s.get_final_response()
    expect(final.output_text == "Echo: via the helper", final.output_text)


@check
def tool_round_trip():
    first = client.responses.create(model=PROXY, input="Weather in Paris?", tools=[WEATHER])
    call = next(item for item in first.output if item.type == "function_call")
    expect((call.name, call.call_id, call.arguments) == ("get_weather", "call_weather_1", '{"city":"Paris"}'), call)
    second = client.responses.create(
        model=PROXY, tools=[WEATHER],
        input=[{"role": "user", "content": "Weather in Paris?"}, *first.output,
               {"type": "function_call_output", "call_id": call.call_id, "output": "21 C"}],
    )
    expect(second.output_text == "The tool said: 21 C", second.output_text)
    with client.responses.stream(model=PROXY, input="Weather?", tools=[WEATHER]) as s:
        final = s.get_final_response()
    streamed = next(item for item in final.output if item.type == "function_call")
    expect(streamed.arguments == '{"city":"Paris"}', streamed.arguments)


class Weather(BaseModel):
    city: str
    temp_c: int


@check
def parse():
    parsed = client.responses.parse(model=PROXY, input="Weather as JSON", text_format=Weather)
    expect(parsed.output_parsed == Weather(city="Paris", temp_c=21), parsed.output_parsed)


@check
def previous_retrieve_delete():
    first = client.responses.create(model=PROXY, input="first")
    second = client.responses.create(model=PROXY, input="second", previous_response_id=first.id)
    expect(second.output_text == "Upstream heard: second", second.output_text)
    again = client.responses.retrieve(first.id)
    expect(again.id == first.id and again.output_text == "Upstream heard: first", again)
    items = list(client.responses.input_items.list(second.id))
    expect(len(items) == 1 and items[0].content[0].text == "second", items)
    raises(openai.NotFoundError, lambda: other.responses.retrieve(first.id))
    client.responses.delete(first.id)
    raises(openai.NotFoundError, lambda: client.responses.retrieve(first.id))


@check
def errors():
    e = raises(openai.BadRequestError, lambda: client.responses.create(model="demo/echo", input="x", temperature=5))
    expect(e.body["param"] == "temperature", e.body)
    raises(openai.NotFoundError, lambda: client.responses.create(model="demo/nothing", input="x"))
    e = raises(openai.RateLimitError, lambda: client.responses.create(model=PROXY, input="rate-limited"))
    expect(e.response.headers["retry-after"] == "7", dict(e.response.headers))
    expect(e.response.headers["x-ratelimit-remaining-requests"] == "0", dict(e.response.headers))
    expect(e.code == "rate_limit_exceeded", e.code)


@check
def cut_off_stream():
    # A cut-off upstream ends the stream with an error event: the client raises, never a short answer.
    def drain():
        for _ in client.responses.create(model=PROXY, input="cut-off", stream=True):
            pass
    e = raises(openai.APIError, drain)
    expect("incomplete" in str(e), str(e))


failed = 0
for fn in checks:
    try:
        fn()
        print(json.dumps({"check": fn.__name__, "ok": True}), flush=True)
    except Exception as e:  # noqa: BLE001
        failed += 1
        print(json.dumps({"check": fn.__name__, "ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}), flush=True)
sys.exit(1 if failed else 0)
