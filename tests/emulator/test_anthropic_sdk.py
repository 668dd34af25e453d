"""End to end: the real `anthropic` SDK over HTTP against the running emulator — tool calls,
results sent back, parallel calls, the closing text, thinking passback, faults, raw errors."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from harness.emulator.server import Emulator
from harness.scenario import load_scenario
from tests.emulator.anthropic_fixtures import THINKING, WEATHER

MODEL = "claude-sonnet-4-6"
TIME = {
    "name": "get_time",
    "description": "The time.",
    "input_schema": {"type": "object", "properties": {}},
}
TOOLS: list[Any] = [WEATHER, TIME]
SYSTEM = "You are a test assistant."
ASK = "Weather in Paris?"
ANSWER = "It is sunny in Paris."
CLOSING = "I reached the step limit for this answer. Shall I continue?"

TOOLS_YAML = """\
tools:
  - name: get_weather
    description: Weather for a city.
    effect: read
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    result: sunny
  - name: get_time
    description: The time.
    effect: read
    parameters: {type: object, properties: {}}
    result: "12:00"
"""


def scenario_yaml(turns: str, tools: str, options: str = "") -> str:
    return (
        "title: Anthropic emulator end-to-end\nrules: [L1]\nsystem: You are a test assistant.\n"
        + TOOLS_YAML
        + options
        + "messages:\n  - text: Weather in Paris?\n    script:\n      turns:\n"
        + textwrap.indent(textwrap.dedent(turns), " " * 8)
        + f"      closing: {CLOSING}\n"
        + f"    expect:\n      ending: answer\n      rounds: 1\n      tools: [{tools}]\n"
    )


ONE_CALL = """\
- text: Let me check.
  calls: [{name: get_weather, arguments: {city: Paris}}]
- answer: It is sunny in Paris.
"""
PARALLEL = """\
- calls:
    - {name: get_weather, arguments: {city: Paris}}
    - {name: get_weather, arguments: {city: Oslo}}
    - {name: get_time}
- answer: It is sunny in Paris.
"""


def one_call_with_fault(fault: str) -> str:
    return f"""\
- text: Let me check.
  calls: [{{name: get_weather, arguments: {{city: Paris}}}}]
  fault: {fault}
- answer: It is sunny in Paris.
"""


Serve = Callable[..., anthropic.Anthropic]


@pytest.fixture
def serve(emulator: Emulator, tmp_path: Path, run_id: str) -> Serve:
    """Write a scenario, serve it, and return an SDK client bound to it and to this test's run."""

    def make(
        name: str, turns: str = ONE_CALL, tools: str = "get_weather", options: str = ""
    ) -> anthropic.Anthropic:
        path = tmp_path / f"anthropic_e2e_{name}.yaml"
        path.write_text(scenario_yaml(turns, tools, options), "utf-8")
        scenario = load_scenario(path)
        emulator.add(scenario)
        url = emulator.base_urls(scenario.id, run_id)["anthropic"]
        return anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)

    return make


def ask(client: anthropic.Anthropic, messages: list[Any], stream: bool, **extra: Any) -> Any:
    params: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 2048,
        "system": SYSTEM,
        "tools": TOOLS,
        "messages": messages,
    }
    params.update(extra)
    if stream:
        with client.messages.stream(**params) as s:
            return s.get_final_message()
    return client.messages.create(**params)


def results(msg: Any, contents: dict[str, str] | None = None) -> dict[str, Any]:
    blocks = [
        {"type": "tool_result", "tool_use_id": b.id, "content": (contents or {}).get(b.id, "sunny")}
        for b in msg.content
        if b.type == "tool_use"
    ]
    return {"role": "user", "content": blocks}


def statuses(emulator: Emulator, run_id: str) -> list[int]:
    return [e.status for e in emulator.log(run_id)]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_one_call_then_the_answer(
    serve: Serve, emulator: Emulator, run_id: str, stream: bool
) -> None:
    client = serve("one_call")
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = ask(client, messages, stream)
    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert first.content[0].text == "Let me check."
    call = first.content[1]
    assert (call.name, call.input) == ("get_weather", {"city": "Paris"})
    assert call.id.startswith("toolu_01") and first.id.startswith("msg_01")
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0

    messages += [first.to_param(), results(first)]
    second = ask(client, messages, stream)
    assert (second.stop_reason, second.content[0].text) == ("end_turn", ANSWER)
    assert statuses(emulator, run_id) == [200, 200]
    assert [e.step.turn_index for e in emulator.log(run_id) if e.step] == [0, 1]


def test_raw_stream_events(serve: Serve) -> None:
    client = serve("one_call")
    events = list(
        client.messages.create(
            model=MODEL,
            max_tokens=1024,
            tools=TOOLS,
            stream=True,
            messages=[{"role": "user", "content": ASK}],
        )
    )
    names = [e.type for e in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    parts = [
        e.delta.partial_json
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    ]
    assert parts[0] == "" and json.loads("".join(parts)) == {"city": "Paris"}


def test_beta_client_and_beta_query(serve: Serve, emulator: Emulator, run_id: str) -> None:
    """`client.beta.messages` works; some clients add `?beta=true` (realwire), also served."""
    client = serve("one_call")
    msg = client.beta.messages.create(
        model=MODEL, max_tokens=1024, tools=TOOLS, messages=[{"role": "user", "content": ASK}]
    )
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert getattr(msg.content[1], "name", None) == "get_weather"
    body = {
        "model": MODEL,
        "max_tokens": 1024,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": ASK}],
    }
    reply = httpx2.post(f"{messages_url(client)}?beta=true", json=body)
    assert reply.status_code == 200 and reply.json()["content"][1]["name"] == "get_weather"
    assert [e.query for e in emulator.log(run_id)] == [{}, {"beta": "true"}]


def messages_url(client: anthropic.Anthropic) -> str:
    return str(client.base_url).rstrip("/") + "/v1/messages"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_parallel_calls(serve: Serve, emulator: Emulator, run_id: str, stream: bool) -> None:
    client = serve("parallel", PARALLEL, "get_weather, get_weather, get_time")
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = ask(client, messages, stream)
    calls = [b for b in first.content if b.type == "tool_use"]
    assert [(c.name, c.input) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
        ("get_time", {}),
    ]
    assert len({c.id for c in calls}) == 3

    split = [{"role": "user", "content": [r]} for r in results(first)["content"]]
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, [*messages, first.to_param(), *split], stream)
    assert caught.value.status_code == 400
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["message"].startswith("messages.1: `tool_use` ids were found without")
    assert f"{calls[1].id}, {calls[2].id}." in error["message"]

    second = ask(client, [*messages, first.to_param(), results(first)], stream)
    assert second.content[0].text == ANSWER
    log = emulator.log(run_id)
    assert [e.status for e in log] == [200, 400, 200]
    assert log[1].error is not None and log[1].error.rule == "E2"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_closing_text_when_tools_are_forbidden(
    serve: Serve, emulator: Emulator, run_id: str, stream: bool
) -> None:
    client = serve("one_call")
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = ask(client, messages, stream)
    messages += [first.to_param(), results(first, {first.content[1].id: "Not executed: limit"})]
    closing = ask(client, messages, stream, tool_choice={"type": "none"})
    assert (closing.stop_reason, [b.type for b in closing.content]) == ("end_turn", ["text"])
    assert closing.content[0].text == CLOSING
    log = emulator.log(run_id)
    assert [e.status for e in log] == [200, 200]
    assert log[1].step is not None and log[1].step.turn_index == -1


THINKING_OPTIONS = "script_options: {anthropic: {thinking: true}}\n"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_thinking_blocks_must_come_back_unchanged(
    serve: Serve, emulator: Emulator, run_id: str, stream: bool
) -> None:
    client = serve("thinking", options=THINKING_OPTIONS)
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = ask(client, messages, stream, thinking=THINKING)
    assert [b.type for b in first.content] == ["thinking", "text", "tool_use"]
    thought = first.content[0]
    assert thought.thinking and thought.signature

    edited = first.to_param()
    edited["content"] = [b.model_dump(exclude_none=True) for b in first.content]
    edited["content"][0]["thinking"] = thought.thinking.replace("call", "use")
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, [*messages, edited, results(first)], stream, thinking=THINKING)
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    )

    dropped = {"role": "assistant", "content": edited["content"][1:]}
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, [*messages, dropped, results(first)], stream, thinking=THINKING)
    message = caught.value.body["error"]["message"]  # type: ignore[index]
    assert message.startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`."
    )

    second = ask(client, [*messages, first.to_param(), results(first)], stream, thinking=THINKING)
    assert second.content[-1].text == ANSWER
    log = emulator.log(run_id)
    assert [e.status for e in log] == [200, 400, 400, 200]
    assert [e.error.rule for e in log if e.error] == ["thinking_signature_invalid", "E5"]


@pytest.mark.parametrize(
    ("kind", "fault", "error_class", "status", "message"),
    [
        (
            "rate_limit",
            "{kind: rate_limit, retry_after: 2}",
            anthropic.RateLimitError,
            429,
            "This request would exceed your account's rate limit. Please try again later.",
        ),
        (
            "server_error",
            "{kind: server_error}",
            anthropic.InternalServerError,
            500,
            "Internal server error",
        ),
        ("overloaded", "{kind: overloaded}", anthropic.OverloadedError, 529, "Overloaded"),
    ],
    ids=["rate_limit", "server_error", "overloaded"],
)
def test_error_faults(
    serve: Serve,
    emulator: Emulator,
    run_id: str,
    kind: str,
    fault: str,
    error_class: type[anthropic.APIStatusError],
    status: int,
    message: str,
) -> None:
    client = serve(f"fault_{kind}", one_call_with_fault(fault))
    messages: list[Any] = [{"role": "user", "content": ASK}]
    with pytest.raises(error_class) as caught:
        ask(client, messages, False)
    err = caught.value
    assert err.status_code == status
    assert err.body == {
        "type": "error",
        "error": {"type": err.body["error"]["type"], "message": message},  # type: ignore[index]
        "request_id": err.response.headers["request-id"],
    }
    if status == 429:
        assert err.response.headers["retry-after"] == "2"
    assert ask(client, messages, False).stop_reason == "tool_use"  # served once, then it works
    assert [e.fault for e in emulator.log(run_id)] == [kind, None]


def test_stream_cut_mid_event(serve: Serve, emulator: Emulator, run_id: str) -> None:
    client = serve("fault_cut", one_call_with_fault("{kind: stream_cut}"))
    # the SDK lets httpx2.RemoteProtocolError ("incomplete chunked read") through unwrapped
    with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)):
        ask(client, [{"role": "user", "content": ASK}], True)
    assert emulator.log(run_id)[0].fault == "stream_cut"


def test_slow_reply_still_arrives(serve: Serve, emulator: Emulator, run_id: str) -> None:
    client = serve("fault_slow", one_call_with_fault("{kind: slow, delay: 0.2}"))
    msg = ask(client, [{"role": "user", "content": ASK}], True)
    assert msg.content[1].input == {"city": "Paris"}
    assert emulator.log(run_id)[0].fault == "slow"


@pytest.mark.parametrize(
    ("raw", "message", "rule"),
    [
        (
            b'{"model": "m", "max_tokens": 10,',
            "The request body is not valid JSON: unexpected character: line 1 column 33 (char 32)",
            "malformed_json",
        ),
        (
            json.dumps({"model": MODEL, "messages": [{"role": "user", "content": ASK}]}).encode(),
            "max_tokens: Field required",
            "missing_field",
        ),
    ],
    ids=["malformed_json", "missing_max_tokens"],
)
def test_raw_http_errors(
    serve: Serve, emulator: Emulator, run_id: str, raw: bytes, message: str, rule: str
) -> None:
    client = serve("one_call")
    reply = httpx2.post(
        messages_url(client),
        content=raw,
        headers={"content-type": "application/json", "x-api-key": "test"},
    )
    assert reply.status_code == 400
    body = reply.json()
    assert body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": reply.headers["request-id"],
    }
    entry = emulator.log(run_id)[0]
    assert entry.error is not None and entry.error.rule == rule
