"""The emulator's server core: routing by URL prefix, isolation of runs, the log, faults,
clean start and stop. Provider wire details are tested per provider module."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx2
import pytest

from harness.emulator.server import Emulator
from harness.errors import EmulatorError
from harness.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
ONE_TOOL = load_scenario(ROOT / "scenarios" / "one_tool_then_answer.yaml")
FIRST_CALL = {
    "model": "claude-test",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": ONE_TOOL.messages[0].text}],
    "tools": [
        {
            "name": "get_workout_history",
            "description": "d",
            "input_schema": {"type": "object", "properties": {}},
        }
    ],
}


def post(url: str, body: object, headers: dict[str, str] | None = None) -> httpx2.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(
        url,
        content=data,
        headers={"content-type": "application/json", **(headers or {})},
        timeout=10,
    )


@pytest.fixture
def emu() -> Emulator:
    with Emulator([ONE_TOOL]) as emulator:
        yield emulator  # type: ignore[misc]


def test_base_urls_per_sdk(emu: Emulator) -> None:
    urls = emu.base_urls(ONE_TOOL.id, "r1")
    root = f"http://127.0.0.1:{emu.port}/s/{ONE_TOOL.id}/r/r1"
    assert urls == {"anthropic": root, "openai": f"{root}/v1", "gemini": root}
    with pytest.raises(EmulatorError, match="does not serve"):
        emu.base_urls("nope")


def test_unknown_path_and_unknown_scenario_are_404_with_a_hint(emu: Emulator) -> None:
    bad_path = post(f"{emu.root}/v1/chat/nowhere", FIRST_CALL)
    assert bad_path.status_code == 404 and "/s/<scenario>/r/<run>" in bad_path.text
    # without a run prefix, and no run opened for the provider: nowhere to place it
    no_run = post(f"{emu.root}/v1/messages", FIRST_CALL)
    assert no_run.status_code == 409 and "/s/<scenario>/r/<run>" in no_run.text
    bad_sid = post(f"{emu.root}/s/other/r/x/v1/messages", FIRST_CALL)
    assert bad_sid.status_code == 404 and "one_tool_then_answer" in bad_sid.text


def test_runs_are_isolated_by_prefix_and_logged_without_secrets(emu: Emulator) -> None:
    for run in ("a", "b", "b"):
        url = emu.base_urls(ONE_TOOL.id, run)["anthropic"] + "/v1/messages"
        reply = post(url, FIRST_CALL, {"x-api-key": "sk-ant-secret", "authorization": "Bearer k"})
        assert reply.status_code == 200
    assert len(emu.log("a")) == 1 and len(emu.log("b")) == 2 and emu.log("c") == []
    entry = emu.log("a")[0]
    assert entry.api == "anthropic" and entry.status == 200 and entry.error is None
    assert entry.step is not None and entry.step.turn_index == 0
    assert "x-api-key" not in entry.headers and "authorization" not in entry.headers
    assert entry.body == FIRST_CALL


def test_malformed_json_is_rejected_and_logged(emu: Emulator) -> None:
    url = emu.base_urls(ONE_TOOL.id, "m")["anthropic"] + "/v1/messages"
    reply = post(url, b"{not json")
    assert reply.status_code == 400
    assert reply.json()["type"] == "error"
    entry = emu.log("m")[0]
    assert entry.error is not None and entry.error.rule == "malformed_json"


@pytest.mark.parametrize(("alt", "wrapped"), [("", True), ("?alt=sse", False)])
def test_malformed_json_on_the_gemini_array_stream_is_array_wrapped(
    emu: Emulator, alt: str, wrapped: bool
) -> None:
    """Like every other error on `streamGenerateContent` without `alt=sse`, the envelope comes
    in a one-element array."""
    base = emu.base_urls(ONE_TOOL.id, "g")["gemini"]
    reply = post(f"{base}/v1beta/models/gemini-2.5-flash:streamGenerateContent{alt}", b"{oops")
    assert reply.status_code == 400
    payload = reply.json()
    envelope = payload[0] if wrapped else payload
    assert isinstance(payload, list) is wrapped and len(payload) == 1
    assert envelope["error"]["status"] == "INVALID_ARGUMENT"
    assert emu.log("g")[0].error.rule == "malformed_json"  # type: ignore[union-attr]


def test_every_credential_header_and_query_parameter_is_kept_out_of_the_log(
    emu: Emulator,
) -> None:
    base = emu.base_urls(ONE_TOOL.id, "s")["anthropic"]
    secrets = {"proxy-authorization": "Basic dXNlcjpwYXNz", "x-api-key": "sk-ant-secret"}
    post(f"{base}/v1/messages?api_key=k1&access_token=t1&beta=true", FIRST_CALL, secrets)
    entry = emu.log("s")[0]
    assert entry.status == 200
    assert "proxy-authorization" not in entry.headers and "x-api-key" not in entry.headers
    assert entry.query == {"beta": "true"}


def test_script_overrun_is_answered_and_noted_naming_the_scenario(emu: Emulator) -> None:
    """Past the script the loop still gets a turn (the final answer again, here), and the log
    notes the scenario's limit with status 200: no rejection the real API would not give."""
    url = emu.base_urls(ONE_TOOL.id, "o")["anthropic"] + "/v1/messages"

    def tool_round(call_id: str) -> list[dict[str, object]]:
        use = {"type": "tool_use", "id": call_id, "name": "get_workout_history", "input": {}}
        result = {"type": "tool_result", "tool_use_id": call_id, "content": "r"}
        return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]

    body = dict(FIRST_CALL)
    body["messages"] = [FIRST_CALL["messages"][0], *tool_round("toolu_1"), *tool_round("toolu_2")]
    reply = post(url, body)
    assert reply.status_code == 200
    answer = ONE_TOOL.messages[0].script.turns[-1].text
    assert reply.json()["content"] == [{"type": "text", "text": answer}]
    (entry,) = emu.log("o")
    assert entry.status == 200 and entry.error is not None
    assert (entry.error.rule, entry.error.kind) == ("script.exhausted", "harness_script_note")
    assert "one_tool_then_answer" in entry.error.message and "script has 2" in entry.error.message
    within = dict(FIRST_CALL)
    within["messages"] = [FIRST_CALL["messages"][0], *tool_round("toolu_1")]
    assert post(url, within).status_code == 200
    assert emu.log("o")[-1].error is None  # within the script: no note


def test_faults_are_served_times_then_the_step_succeeds(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "one_tool_then_answer.yaml").read_text()
    text = text.replace(
        "        - text: Let me look at your history.\n",
        "        - text: Let me look at your history.\n"
        "          fault: {kind: rate_limit, times: 2, retry_after: 0}\n",
    )
    path = tmp_path / "faulty.yaml"
    path.write_text(text)
    scenario = load_scenario(path)
    with Emulator([scenario]) as emu:
        url = emu.base_urls("faulty", "f")["anthropic"] + "/v1/messages"
        codes = [post(url, FIRST_CALL).status_code for _ in range(3)]
        other_run = post(emu.base_urls("faulty", "g")["anthropic"] + "/v1/messages", FIRST_CALL)
        assert codes == [429, 429, 200]
        assert other_run.status_code == 429  # fault counters are per run
        assert [e.fault for e in emu.log("f")] == ["rate_limit", "rate_limit", None]


def test_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(EmulatorError, match=f"cannot listen on 127.0.0.1:{port}"):
            Emulator([ONE_TOOL], port=port)


def test_stop_releases_the_port() -> None:
    emu = Emulator([ONE_TOOL]).start()
    port = emu.port
    emu.stop()
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))
