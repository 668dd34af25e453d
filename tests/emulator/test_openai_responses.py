"""The emulated Responses API: each rejection (status, envelope, exact message) beside the
corrected request it accepts, position, and the ids and encrypted reasoning it mints (the
reply shapes are in `test_openai_responses_render`)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from harness.emulator import openai_responses_checks as checks
from harness.emulator.apis import wire_api
from harness.emulator.openai_responses import API
from harness.emulator.openai_responses_ids import ResponseIds
from harness.emulator.tokens import Minter
from tests.emulator.openai_fixtures import (
    MINTER,
    call,
    ctx,
    minted,
    output,
    outputs_for,
    responses_request,
    user,
    without,
)

WITH_TEXT = minted("Checking.")  # reasoning, message, function_call
RS, MSG, FC = WITH_TEXT.output
CALL_ONLY = minted(turn_index=1)  # reasoning, function_call
RS2, FC2 = CALL_ONLY.output
FULL = responses_request(user(), RS, MSG, FC, *outputs_for(WITH_TEXT))
FOREIGN_RS = {
    "type": "reasoning",
    "id": "rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23",
    "summary": [],
    "encrypted_content": "gAAAAABoxC3jL8rEbUKD8lpf1c-Nsg3pHMMS",
}


def flipped(blob: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(blob))
    raw[-5] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).decode()


def o5(item: dict[str, Any], kind: str, reasoning: dict[str, Any]) -> str:
    return (
        f"Item '{item['id']}' of type '{kind}' was provided without its required "
        f"'reasoning' item: '{reasoning['id']}'."
    )


def o6(reasoning: dict[str, Any]) -> str:
    return (
        f"Item '{reasoning['id']}' of type 'reasoning' was provided without its required "
        "following item."
    )


def o3(reasoning: dict[str, Any]) -> str:
    return (
        f"Item with id '{reasoning['id']}' not found. Items are not persisted when `store` "
        "is set to false. Try again with `store` set to true, or remove this item from your "
        "input."
    )


NO_BLOB = {k: v for k, v in RS.items() if k != "encrypted_content"}
FOREIGN_NO_BLOB = {k: v for k, v in FOREIGN_RS.items() if k != "encrypted_content"}

# (rule, status, rejected request, message, param, code, corrected request)
CASES: list[tuple[str, int, dict[str, Any], str, str | None, str | None, dict[str, Any]]] = [
    (
        "missing_field",
        400,
        without(FULL, "model"),
        "Missing required parameter: 'model'.",
        "model",
        "missing_required_parameter",
        FULL,
    ),
    (
        "missing_field",
        400,
        without(FULL, "input"),
        "Missing required parameter: 'input'.",
        "input",
        "missing_required_parameter",
        FULL,
    ),
    (
        "missing_field",
        400,
        responses_request(user(), {"type": "reasoning", "summary": []}, FC),
        "Missing required parameter: 'input[1].id'.",
        "input[1].id",
        "missing_required_parameter",
        FULL,
    ),
    (
        "O1",
        400,
        responses_request(user(), call("call_1")),
        "No tool output found for function call call_1.",
        "input",
        None,
        responses_request(user(), call("call_1"), output("call_1")),
    ),
    (
        "O1",
        400,
        responses_request(user(), call("call_1"), call("call_2"), output("call_1")),
        "No tool output found for function call call_2.",
        "input",
        None,
        responses_request(
            user(), call("call_1"), call("call_2"), output("call_1"), output("call_2")
        ),
    ),
    (
        "O2",
        400,
        responses_request(user(), output("call_9")),
        "No tool call found for function call output with call_id call_9.",
        "input",
        None,
        responses_request(user(), call("call_9"), output("call_9")),
    ),
    (
        "O3",
        404,
        responses_request(user(), NO_BLOB, MSG, FC, *outputs_for(WITH_TEXT)),
        o3(RS),
        "input",
        None,
        FULL,
    ),
    (
        "O3",
        404,
        responses_request(user(), FOREIGN_NO_BLOB, call("call_1", "fc_x"), output("call_1")),
        o3(FOREIGN_RS),
        "input",
        None,
        responses_request(
            user(), FOREIGN_NO_BLOB, call("call_1", "fc_x"), output("call_1"), store=True
        ),
    ),
    (
        "O4",
        400,
        {**FULL, "previous_response_id": "resp_0f4809b27460351d0169fab217db3481"},
        "Previous response with id 'resp_0f4809b27460351d0169fab217db3481' not found.",
        "previous_response_id",
        "previous_response_not_found",
        FULL,
    ),
    (
        "O5",
        400,
        responses_request(user(), MSG, FC, *outputs_for(WITH_TEXT)),
        o5(MSG, "message", RS),
        "input",
        None,
        FULL,
    ),
    (
        "O5",
        400,
        responses_request(user(), FC2, *outputs_for(CALL_ONLY)),
        o5(FC2, "function_call", RS2),
        "input",
        None,
        responses_request(user(), RS2, FC2, *outputs_for(CALL_ONLY)),
    ),
    (
        "O6",
        400,
        responses_request(user(), RS, FC, *outputs_for(WITH_TEXT)),
        o6(RS),
        "input",
        None,
        FULL,
    ),
    (
        "O6",
        400,
        responses_request(user(), RS2),
        o6(RS2),
        "input",
        None,
        responses_request(user(), RS2, FC2, *outputs_for(CALL_ONLY)),
    ),
    (
        "O6",
        400,  # a reasoning item before a message rebuilt from text (realwire 400)
        responses_request(
            user(), FOREIGN_RS, {"role": "assistant", "content": "42"}, user("More?")
        ),
        o6(FOREIGN_RS),
        "input",
        None,
        responses_request(user(), {"role": "assistant", "content": "42"}, user("More?")),
    ),
    (
        "tool_choice_unknown_tool",
        400,
        {**FULL, "tool_choice": {"type": "function", "name": "get_time"}},
        "Tool choice 'get_time' not found in 'tools' parameter.",
        "tool_choice",
        None,
        {**FULL, "tool_choice": {"type": "function", "name": "get_weather"}},
    ),
    (
        "invalid_encrypted_content",
        400,
        responses_request(
            user(),
            {**RS, "encrypted_content": flipped(RS["encrypted_content"])},
            MSG,
            FC,
            *outputs_for(WITH_TEXT),
        ),
        f"The encrypted content for item {RS['id']} could not be verified. Reason: Encrypted "
        "content could not be decrypted or parsed.",
        None,
        "invalid_encrypted_content",
        FULL,
    ),
    (
        "invalid_encrypted_content",
        400,  # our blob moved onto another item
        responses_request(
            user(),
            {**FOREIGN_RS, "encrypted_content": RS["encrypted_content"]},
            call("call_1"),
            output("call_1"),
        ),
        f"The encrypted content for item {FOREIGN_RS['id']} could not be verified. Reason: "
        "Encrypted content could not be decrypted or parsed.",
        None,
        "invalid_encrypted_content",
        responses_request(user(), FOREIGN_RS, call("call_1"), output("call_1")),
    ),
]


@pytest.mark.parametrize(
    ("rule", "status", "bad", "message", "param", "code", "good"),
    CASES,
    ids=[f"{c[0]}-{n}" for n, c in enumerate(CASES)],
)
def test_rejection_and_its_correction(
    rule: str,
    status: int,
    bad: dict[str, Any],
    message: str,
    param: str | None,
    code: str | None,
    good: dict[str, Any],
) -> None:
    err = API.validate(bad, ctx())
    assert err is not None
    assert (err.rule, err.status, err.message, err.param, err.code) == (
        rule,
        status,
        message,
        param,
        code,
    )
    reply = API.error(err)
    assert reply.status == status
    envelope = json.loads(b"".join(reply.chunks))
    assert envelope == {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }
    assert API.validate(good, ctx()) is None


def test_tool_choice_none_with_pending_history_is_accepted() -> None:
    assert API.validate({**FULL, "tool_choice": "none"}, ctx()) is None


def test_reasoning_without_blob_is_accepted_when_stored() -> None:
    """With store:true the API keeps items, so an id alone is a valid reference."""
    body = responses_request(user(), NO_BLOB, MSG, FC, *outputs_for(WITH_TEXT), store=True)
    assert API.validate(body, ctx()) is None


def test_a_call_without_id_may_follow_reasoning() -> None:
    """llm sends function_call items without their `fc_` id; the real API accepts that."""
    body = responses_request(user(), RS2, without(FC2, "id"), *outputs_for(CALL_ONLY))
    assert API.validate(body, ctx()) is None


def test_body_that_is_not_an_object_is_malformed() -> None:
    err = API.validate([1, 2], ctx())
    assert err is not None and err.rule == "malformed_json"


# position --------------------------------------------------------------------------------

POSITIONS: list[tuple[dict[str, Any], str | None, int, bool]] = [
    ({"model": "m", "input": "Hi there"}, "Hi there", 0, True),  # no function tool declared
    (responses_request(user()), "Weather in Paris?", 0, False),
    (
        responses_request(
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "a"},
                    {"type": "input_image", "image_url": "x"},
                    {"type": "input_text", "text": "b"},
                ],
            }
        ),
        "ab",
        0,
        False,
    ),
    (FULL, "Weather in Paris?", 1, False),
    (
        responses_request(user(), call("c1"), call("c2"), output("c1"), output("c2")),
        "Weather in Paris?",
        1,
        False,
    ),
    (
        responses_request(
            user(), RS, MSG, FC, output(FC["call_id"]), RS2, FC2, output(FC2["call_id"])
        ),
        "Weather in Paris?",
        2,
        False,
    ),
    (
        responses_request(
            user("first"),
            call("c1"),
            output("c1"),
            {"role": "assistant", "content": "ok"},
            user("second"),
            call("c2"),
            output("c2"),
        ),
        "second",
        1,
        False,
    ),
    ({**FULL, "tool_choice": "none"}, "Weather in Paris?", 1, True),
    (responses_request({"role": "developer", "content": "be brief"}), None, 0, False),
]


@pytest.mark.parametrize(("body", "text", "turns", "forbidden"), POSITIONS)
def test_position(body: dict[str, Any], text: str | None, turns: int, forbidden: bool) -> None:
    pos = API.position(body)
    assert (pos.user_text, pos.model_turns, pos.tools_forbidden) == (text, turns, forbidden)


# ids and tokens --------------------------------------------------------------------------


def test_minted_ids_are_recognised_and_foreign_ones_are_not() -> None:
    ids = ResponseIds(MINTER)
    own = ids.read(FC["id"])
    assert own is not None and own.kind == "fc" and own.key.reasoning
    assert ids.reasoning_of(own.key) == RS["id"]
    own_rs = ids.read(RS["id"])
    assert own_rs is not None and ids.follower_of(own_rs.key) == MSG["id"]
    own_rs2 = ids.read(RS2["id"])
    assert own_rs2 is not None and ids.follower_of(own_rs2.key) == FC2["id"]
    for foreign in (
        "fc_0f4809b27460351d0169fab21a34f08196b14c2bd71a22cd6a",
        "rs_0f4809b27460351d0169fab21897dc8196960e8680fb72a88d",
        "fc_1",
        None,
        7,
    ):
        assert ids.read(foreign) is None
    changed = FC["id"][:-1] + ("0" if FC["id"][-1] != "0" else "1")
    assert ids.read(changed) is None


def test_other_scenarios_ids_are_foreign() -> None:
    assert ResponseIds(Minter("another/openai")).read(FC["id"]) is None


def test_check_order_reports_o6_before_o1() -> None:
    body = responses_request(user(), RS, FC)  # message dropped (O6), call unanswered (O1)
    err = checks.check_request(body, ResponseIds(MINTER))
    assert err is not None and err.rule == "O6"


def test_registry_serves_this_module() -> None:
    assert wire_api("openai-responses") is API
    assert API.name == "openai-responses"
