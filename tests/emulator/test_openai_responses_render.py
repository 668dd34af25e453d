"""The emulated Responses API's answer: the Response object (fields, items, echo, usage)
and its event stream (order, sequence numbers, deltas that add up to the final items)."""

from __future__ import annotations

import json
from typing import Any

from harness.emulator.openai_responses import API
from harness.emulator.wire import Step
from harness.scenario.model import ScriptedCall, ScriptedTurn
from tests.emulator.openai_fixtures import ctx, responses_request, user, without

TURN = ScriptedTurn(
    text="Checking.",
    calls=(
        ScriptedCall(name="get_weather", arguments={"city": "Paris"}),
        ScriptedCall(name="get_weather", arguments={"city": "Oslo"}),
    ),
)
STEP = Step(turn=TURN, user_index=0, turn_index=0)


def rendered(body: dict[str, Any], *, reasoning: bool, stream: bool = False) -> Any:
    reply = API.render(STEP, body, ctx(reasoning=reasoning, stream=stream))
    assert reply.status == 200
    return reply


def test_response_object_shape() -> None:
    body = responses_request(user(), instructions="Be brief.", tool_choice="auto")
    resp = json.loads(b"".join(rendered(body, reasoning=True).chunks))
    assert resp["object"] == "response" and resp["status"] == "completed"
    assert resp["id"].startswith("resp_") and len(resp["id"]) == 55
    assert (resp["model"], resp["instructions"], resp["store"]) == ("gpt-5.5", "Be brief.", False)
    assert (resp["tool_choice"], resp["parallel_tool_calls"]) == ("auto", True)
    assert resp["tools"] == [
        {
            "type": "function",
            "description": "Weather for a city",
            "name": "get_weather",
            "parameters": {**body["tools"][0]["parameters"], "additionalProperties": False},
            "strict": True,
        }
    ]
    reasoning, message, *calls = resp["output"]
    assert reasoning["type"] == "reasoning" and reasoning["summary"] == []
    assert reasoning["encrypted_content"].startswith("gAAAAAB")
    assert message == {
        "id": message["id"],
        "type": "message",
        "status": "completed",
        "content": [
            {"type": "output_text", "annotations": [], "logprobs": [], "text": "Checking."}
        ],
        "phase": "commentary",
        "role": "assistant",
    }
    assert [(c["name"], json.loads(c["arguments"]), c["status"]) for c in calls] == [
        ("get_weather", {"city": "Paris"}, "completed"),
        ("get_weather", {"city": "Oslo"}, "completed"),
    ]
    assert all(c["call_id"].startswith("call_") and len(c["call_id"]) == 29 for c in calls)
    assert all(c["id"].startswith("fc_") for c in calls)
    usage = resp["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert usage["output_tokens_details"]["reasoning_tokens"] > 0
    assert usage["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": 0}


def test_ids_share_their_response_segments() -> None:
    resp = json.loads(b"".join(rendered(responses_request(), reasoning=True).chunks))
    shared = resp["id"][len("resp_") :][:26]  # prefix, "01", created_at in hex
    assert all(item["id"].split("_", 1)[1][:26] == shared for item in resp["output"])
    assert int(shared[18:26], 16) == resp["created_at"]


def test_encrypted_content_only_when_included() -> None:
    resp = json.loads(
        b"".join(rendered(without(responses_request(), "include"), reasoning=True).chunks)
    )
    assert "encrypted_content" not in resp["output"][0]


def test_no_reasoning_item_without_the_option() -> None:
    resp = json.loads(b"".join(rendered(responses_request(), reasoning=False).chunks))
    assert [i["type"] for i in resp["output"]] == ["message", "function_call", "function_call"]
    assert "phase" not in resp["output"][0]
    assert resp["usage"]["output_tokens_details"]["reasoning_tokens"] == 0


def test_rendering_is_deterministic() -> None:
    first = rendered(responses_request(), reasoning=True).chunks
    assert rendered(responses_request(), reasoning=True).chunks == first


def events(reply: Any) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in reply.chunks:
        event_line, data_line = frame.decode().rstrip("\n").split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        payload = json.loads(data_line[len("data: ") :])
        assert payload["type"] == event_line[len("event: ") :]
        out.append((payload["type"], payload))
    return out


def test_stream_events_in_order() -> None:
    reply = rendered(responses_request(stream=True), reasoning=True, stream=True)
    assert reply.streamed and reply.headers["content-type"].startswith("text/event-stream")
    evs = events(reply)
    assert [p["sequence_number"] for _, p in evs] == list(range(len(evs)))
    names = [n for n, _ in evs]
    call_events = [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ]
    text_deltas = names.count("response.output_text.delta")
    assert text_deltas >= 2
    compact: list[str] = []
    for name in names:  # collapse runs of deltas
        if not (compact and name == compact[-1] and name.endswith(".delta")):
            compact.append(name)
    assert compact == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.output_item.done",  # reasoning
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        *call_events,
        *call_events,
        "response.completed",
    ]
    assert b"[DONE]" not in b"".join(reply.chunks)


def test_stream_deltas_add_up_and_match_the_final_response() -> None:
    evs = events(rendered(responses_request(stream=True), reasoning=True, stream=True))
    final = evs[-1][1]["response"]
    assert (
        evs[0][1]["response"]["status"] == "in_progress" and evs[0][1]["response"]["output"] == []
    )
    assert final["status"] == "completed"
    for item in final["output"]:
        if item["type"] == "function_call":
            deltas = [
                p["delta"]
                for n, p in evs
                if n == "response.function_call_arguments.delta" and p["item_id"] == item["id"]
            ]
            assert "".join(deltas) == item["arguments"]
            assert all("obfuscation" in p for n, p in evs if n.endswith(".delta"))
        if item["type"] == "message":
            deltas = [p["delta"] for n, p in evs if n == "response.output_text.delta"]
            assert "".join(deltas) == item["content"][0]["text"]
    done = [p["item"] for n, p in evs if n == "response.output_item.done"]
    assert done == final["output"]


def test_closing_turn_renders_a_final_answer() -> None:
    step = Step(turn=ScriptedTurn(text="Step limit reached."), user_index=0, turn_index=-1)
    reply = API.render(step, responses_request(tool_choice="none"), ctx(reasoning=True))
    resp = json.loads(b"".join(reply.chunks))
    assert [i["type"] for i in resp["output"]] == ["reasoning", "message"]
    assert resp["output"][1]["phase"] == "final_answer"
    assert resp["output"][1]["content"][0]["text"] == "Step limit reached."
