"""End to end: the real `google-genai` SDK over HTTP against the running emulator, on v1beta and
on the SDK's default version (v1) — function calls parsed with and without ids, the model
content sent back unchanged with results, dropped or altered signatures and miscounted results
rejected, the closing text under mode NONE, automatic function calling, faults, raw errors."""

from __future__ import annotations

import base64
import json
import textwrap
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from harness.emulator import gemini_validate as gv
from harness.emulator.gemini_api import INTERNAL, OVERLOADED
from harness.emulator.server import Emulator
from harness.emulator.tokens import MARKER
from harness.scenario import load_scenario

MODEL = "gemini-3-flash-preview"
ASK = "Weather in Paris and Oslo?"
ANSWER = "Sunny in both Paris and Oslo."
CLOSING = "I reached the step limit for this answer. Shall I continue?"
PARALLEL = """\
- text: Let me check both cities.
  calls:
    - {name: get_weather, arguments: {city: Paris}}
    - {name: get_weather, arguments: {city: Oslo}}
- answer: Sunny in both Paris and Oslo.
"""
ONE_CALL = """\
- calls: [{name: get_weather, arguments: {city: Paris}}]
- answer: Sunny in both Paris and Oslo.
"""


def scenario_yaml(turns: str, options: str = "") -> str:
    tools = ", ".join(["get_weather"] * turns.count("name: get_weather"))
    return (
        "title: Gemini emulator end-to-end\nrules: [L1]\nsystem: Be brief.\n"
        "tools:\n  - name: get_weather\n    description: Weather for a city.\n"
        "    effect: read\n"
        "    parameters: {type: object, properties: {city: {type: string}}, required: [city]}\n"
        "    result: sunny\n"
        + options
        + f"messages:\n  - text: {ASK}\n    script:\n      turns:\n"
        + textwrap.indent(turns, " " * 8)
        + f"      closing: {CLOSING}\n"
        + "    expect:\n      ending: answer\n      rounds: 1\n"
        + f"      tools: [{tools}]\n"
    )


NO_IDS = "script_options: {gemini: {call_ids: false, thought_signatures: false}}\n"
SCENARIOS = {
    "gem_parallel": scenario_yaml(PARALLEL),
    "gem_parallel_no_ids": scenario_yaml(PARALLEL, NO_IDS),
    "gem_one_call": scenario_yaml(ONE_CALL),
    "gem_rate_limit": scenario_yaml(
        PARALLEL.replace("  calls:", "  fault: {kind: rate_limit, retry_after: 2}\n  calls:", 1)
    ),
    "gem_server_error": scenario_yaml(
        PARALLEL.replace("  calls:", "  fault: {kind: server_error}\n  calls:", 1)
    ),
    "gem_overloaded": scenario_yaml(
        PARALLEL.replace("  calls:", "  fault: {kind: overloaded}\n  calls:", 1)
    ),
    "gem_stream_cut": scenario_yaml(
        PARALLEL.replace("  calls:", "  fault: {kind: stream_cut}\n  calls:", 1)
    ),
    "gem_slow": scenario_yaml(
        PARALLEL.replace("  calls:", "  fault: {kind: slow, delay: 0.2}\n  calls:", 1)
    ),
}


@pytest.fixture(scope="module")
def served(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Emulator:
    folder = tmp_path_factory.mktemp("gemini_scenarios")
    for scenario_id, text in SCENARIOS.items():
        path = Path(folder, f"{scenario_id}.yaml")
        path.write_text(text, "utf-8")
        emulator.add(load_scenario(path))
    return emulator


def client_for(served: Emulator, scenario: str, run: str, version: str | None) -> genai.Client:
    base = served.base_urls(scenario, run)["gemini"]
    options = types.HttpOptions(base_url=base, api_version=version) if version else None
    return genai.Client(api_key="test", http_options=options or types.HttpOptions(base_url=base))


DECLARATION = types.FunctionDeclaration(
    name="get_weather",
    description="Weather for a city.",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def config(mode: str | None = None) -> types.GenerateContentConfig:
    tool_config = None
    if mode:
        calling = types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode(mode))
        tool_config = types.ToolConfig(function_calling_config=calling)
    return types.GenerateContentConfig(
        system_instruction="Be brief.",
        tools=[types.Tool(function_declarations=[DECLARATION])],
        tool_config=tool_config,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def ask() -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=ASK)])]


def generate(
    client: genai.Client, contents: list[types.Content], stream: bool, **kw: Any
) -> types.Content:
    """One model turn as a loop keeps it: the candidate content, or a stream's parts merged."""
    cfg = config(**kw)
    if not stream:
        response = client.models.generate_content(model=MODEL, contents=contents, config=cfg)
        assert response.candidates and response.candidates[0].content
        return response.candidates[0].content
    parts: list[types.Part] = []
    for chunk in client.models.generate_content_stream(model=MODEL, contents=contents, config=cfg):
        assert chunk.candidates and chunk.candidates[0].content
        parts += chunk.candidates[0].content.parts or []
    return types.Content(role="model", parts=parts)


def results_for(content: types.Content) -> types.Content:
    calls = [p.function_call for p in content.parts or [] if p.function_call]
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=c.id, name=c.name, response={"output": "sunny"}
                )
            )
            for c in calls
        ],
    )


def text_of(content: types.Content) -> str:
    return "".join(p.text or "" for p in content.parts or [] if not p.function_call)


def statuses(served: Emulator, run: str) -> list[int]:
    return [entry.status for entry in served.log(run)]


def rules(served: Emulator, run: str) -> list[str]:
    return [entry.error.rule if entry.error else "" for entry in served.log(run)]


VERSIONS = [pytest.param("v1beta", id="v1beta"), pytest.param(None, id="default_v1")]
STREAMS = [pytest.param(False, id="json"), pytest.param(True, id="sse")]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("stream", STREAMS)
def test_parallel_calls_then_answer(
    served: Emulator, run_id: str, version: str | None, stream: bool
) -> None:
    client = client_for(served, "gem_parallel", run_id, version)
    contents = ask()
    turn = generate(client, contents, stream)
    calls = [p.function_call for p in turn.parts or [] if p.function_call]
    assert [(c.name, c.args) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert all(c.id and len(c.id) == 8 for c in calls)
    signed = [p.thought_signature for p in turn.parts or [] if p.function_call]
    assert signed[0] and signed[1] is None  # the first call part only
    assert text_of(turn) == "Let me check both cities."
    contents += [turn, results_for(turn)]
    assert text_of(generate(client, contents, stream)) == ANSWER
    assert statuses(served, run_id) == [200, 200]
    expected_path = f"/{version or 'v1'}/models/{MODEL}:"
    assert all(e.path.startswith(expected_path) for e in served.log(run_id))
    if stream:
        assert all(e.query == {"alt": "sse"} for e in served.log(run_id))


@pytest.mark.parametrize("stream", STREAMS)
def test_calls_without_ids_or_signatures(served: Emulator, run_id: str, stream: bool) -> None:
    client = client_for(served, "gem_parallel_no_ids", run_id, "v1beta")
    contents = ask()
    turn = generate(client, contents, stream)
    calls = [p for p in turn.parts or [] if p.function_call]
    assert [(p.function_call.id, p.thought_signature) for p in calls] == [(None, None)] * 2
    contents += [turn, results_for(turn)]
    assert text_of(generate(client, contents, stream)) == ANSWER
    assert statuses(served, run_id) == [200, 200]


@pytest.mark.parametrize("stream", STREAMS)
def test_closing_text_under_mode_none(served: Emulator, run_id: str, stream: bool) -> None:
    client = client_for(served, "gem_parallel", run_id, "v1beta")
    contents = ask()
    turn = generate(client, contents, stream)
    contents += [turn, results_for(turn)]
    assert text_of(generate(client, contents, stream, mode="NONE")) == CLOSING
    assert statuses(served, run_id) == [200, 200]


def _round_two(served: Emulator, run: str) -> tuple[genai.Client, list[types.Content]]:
    client = client_for(served, "gem_parallel", run, "v1beta")
    contents = ask()
    turn = generate(client, contents, False)
    return client, [*contents, turn, results_for(turn)]


def _rejected(client: genai.Client, contents: list[types.Content]) -> errors.ClientError:
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model=MODEL, contents=contents, config=config())
    assert (caught.value.code, caught.value.status) == (400, "INVALID_ARGUMENT")
    return caught.value


def test_dropped_signature_is_rejected(served: Emulator, run_id: str) -> None:
    client, contents = _round_two(served, run_id)
    parts = contents[1].parts or []
    parts[1] = parts[1].model_copy(update={"thought_signature": None})
    error = _rejected(client, contents)
    assert error.message == gv.G3.format(name="get_weather", position=2)
    assert rules(served, run_id) == ["", "G3"]


def test_altered_signature_is_rejected(served: Emulator, run_id: str) -> None:
    client, contents = _round_two(served, run_id)
    parts = contents[1].parts or []
    signature = bytearray(parts[1].thought_signature or b"")
    signature[10] ^= 0x40
    parts[1] = parts[1].model_copy(update={"thought_signature": bytes(signature)})
    assert _rejected(client, contents).message == gv.CORRUPTED_SIGNATURE
    assert rules(served, run_id) == ["", "signature_tampered"]


def test_rebuilt_call_with_other_arguments_is_rejected(served: Emulator, run_id: str) -> None:
    client, contents = _round_two(served, run_id)
    parts = contents[1].parts or []
    call = parts[1].function_call
    assert call is not None
    moved = call.model_copy(update={"args": {"city": "Lyon"}})
    parts[1] = parts[1].model_copy(update={"function_call": moved})
    assert _rejected(client, contents).message == gv.CORRUPTED_SIGNATURE


def test_wrong_result_count_is_rejected(served: Emulator, run_id: str) -> None:
    client, contents = _round_two(served, run_id)
    contents[2] = types.Content(role="user", parts=(contents[2].parts or [])[:1])
    assert _rejected(client, contents).message == gv.G1
    assert rules(served, run_id) == ["", "G1"]


def test_signature_goes_back_url_safe_and_is_accepted(served: Emulator, run_id: str) -> None:
    client, contents = _round_two(served, run_id)
    client.models.generate_content(model=MODEL, contents=contents, config=config())
    sent = served.log(run_id)[1].body["contents"][1]["parts"][1]["thoughtSignature"]
    assert "+" not in sent and "/" not in sent  # the API sent standard base64
    assert base64.urlsafe_b64decode(sent).startswith(MARKER)
    assert statuses(served, run_id) == [200, 200]


def test_automatic_function_calling_runs(served: Emulator, run_id: str) -> None:
    """The SDK runs Python callables itself and asks again; its results carry no ids."""

    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    client = client_for(served, "gem_parallel", run_id, "v1beta")
    response = client.models.generate_content(
        model=MODEL, contents=ASK, config=types.GenerateContentConfig(tools=[get_weather])
    )
    assert response.text == ANSWER
    assert statuses(served, run_id) == [200, 200]


# --- faults and raw errors ----------------------------------------------------------------


def test_rate_limit(served: Emulator, run_id: str) -> None:
    client = client_for(served, "gem_rate_limit", run_id, "v1beta")
    with pytest.raises(errors.ClientError) as caught:
        generate(client, ask(), False)
    error = caught.value
    assert (error.code, error.status) == (429, "RESOURCE_EXHAUSTED")
    assert error.message and error.message.endswith("Please retry in 2s.")
    retry = [d for d in error.details["error"]["details"] if d["@type"].endswith("RetryInfo")]
    assert retry == [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]
    assert "retry-after" not in error.response.headers
    assert len(generate(client, ask(), False).parts or []) == 3  # served once, then the turn


@pytest.mark.parametrize(
    ("scenario", "code", "status", "message"),
    [
        ("gem_server_error", 500, "INTERNAL", INTERNAL),
        ("gem_overloaded", 503, "UNAVAILABLE", OVERLOADED),
    ],
)
def test_server_faults(
    served: Emulator, run_id: str, scenario: str, code: int, status: str, message: str
) -> None:
    client = client_for(served, scenario, run_id, "v1beta")
    with pytest.raises(errors.ServerError) as caught:
        generate(client, ask(), True)
    assert (caught.value.code, caught.value.status, caught.value.message) == (code, status, message)


def test_stream_cut_mid_event_raises(served: Emulator, run_id: str) -> None:
    client = client_for(served, "gem_stream_cut", run_id, "v1beta")
    with pytest.raises((httpx2.HTTPError, json.JSONDecodeError, errors.APIError)):
        generate(client, ask(), True)
    assert served.log(run_id)[0].fault == "stream_cut"


def test_slow_reply_still_arrives(served: Emulator, run_id: str) -> None:
    client = client_for(served, "gem_slow", run_id, "v1beta")
    assert text_of(generate(client, ask(), True)) == "Let me check both cities."
    assert served.log(run_id)[0].fault == "slow"


def _post(served: Emulator, run: str, path: str, body: bytes) -> httpx2.Response:
    base = served.base_urls("gem_one_call", run)["gemini"]
    return httpx2.post(f"{base}{path}", content=body, headers={"x-goog-api-key": "test"})


def test_raw_json_array_stream(served: Emulator, run_id: str) -> None:
    tools = [{"functionDeclarations": [{"name": "get_weather", "description": "Weather"}]}]
    request = {"contents": [{"role": "user", "parts": [{"text": ASK}]}], "tools": tools}
    body = json.dumps(request).encode()
    reply = _post(served, run_id, f"/v1beta/models/{MODEL}:streamGenerateContent", body)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json; charset=UTF-8"
    chunks = json.loads(reply.content)
    assert (
        chunks[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "get_weather"
    )
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_raw_malformed_body(served: Emulator, run_id: str) -> None:
    reply = _post(served, run_id, f"/v1beta/models/{MODEL}:generateContent", b'{"contents": [')
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"].startswith("Invalid JSON payload received. ")
    assert served.log(run_id)[0].error.rule == "malformed_json"  # type: ignore[union-attr]


def test_raw_unknown_field(served: Emulator, run_id: str) -> None:
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": ASK}]}], "foo": 1})
    reply = _post(served, run_id, f"/v1/models/{MODEL}:generateContent", body.encode())
    assert reply.status_code == 400
    assert reply.json()["error"] == {
        "code": 400,
        "message": 'Invalid JSON payload received. Unknown name "foo": Cannot find field.',
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {
                        "description": 'Invalid JSON payload received. Unknown name "foo": '
                        "Cannot find field."
                    }
                ],
            }
        ],
    }
