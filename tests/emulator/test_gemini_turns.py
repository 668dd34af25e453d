"""The emulated Gemini API without HTTP, function-call turns and thought signatures: G1, G2,
G3, G4 and altered signatures against their corrected requests, where signatures are required,
and how a request's position in the script is read."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from harness.emulator import gemini_validate as gv
from harness.emulator.gemini_api import API
from harness.emulator.wire import Position
from tests.emulator.gemini_fixtures import (
    ASK,
    FLASH,
    GEMINI3,
    Body,
    answers,
    call,
    ctx_for,
    model_calls,
    request,
    round_two,
    user,
)

G3_TEXT = gv.G3.format(name="get_weather", position=2)

TURN_CASES: list[tuple[str, str, Callable[[], Body], Callable[[], Body], str, str]] = [
    # (id, model, broken, corrected, rule, message)
    (
        "G1_one_response_for_two_calls",
        FLASH,
        lambda: request(user(), model_calls(call("Paris"), call("Oslo")), answers(None)),
        lambda: request(user(), model_calls(call("Paris"), call("Oslo")), answers(None, None)),
        "G1",
        gv.G1,
    ),
    (
        "G1_calls_never_answered",
        FLASH,
        lambda: request(user(), model_calls(call("Paris")), user("never mind")),
        lambda: request(
            user(),
            model_calls(call("Paris")),
            answers(None),
            {"role": "model", "parts": [{"text": "Sunny."}]},
            user("never mind"),
        ),
        "G1",
        gv.G1,
    ),
    (
        "G2_history_starts_with_call",
        FLASH,
        lambda: request(model_calls(call("Paris")), answers(None)),
        lambda: request(user(), model_calls(call("Paris")), answers(None)),
        "G2",
        gv.G2_CALL,
    ),
    (
        "G2_call_after_model_turn",
        FLASH,
        lambda: request(
            user(),
            {"role": "model", "parts": [{"text": "Checking."}]},
            model_calls(call("Paris")),
            answers(None),
        ),
        lambda: request(user(), model_calls({"text": "Checking."}, call("Paris")), answers(None)),
        "G2",
        gv.G2_CALL,
    ),
    (
        "G2_response_without_call",
        FLASH,
        lambda: request(user(), {"role": "model", "parts": [{"text": "Checking."}]}, answers(None)),
        lambda: request(user(), model_calls(call("Paris")), answers(None)),
        "G2",
        gv.G2_RESPONSE,
    ),
    (
        "G4_response_id_mismatch",
        FLASH,
        lambda: request(
            user(), model_calls(call("Paris", "a1"), call("Oslo", "b2")), answers("a1", "zz")
        ),
        lambda: request(
            user(), model_calls(call("Paris", "a1"), call("Oslo", "b2")), answers("b2", "a1")
        ),
        "G4",
        gv.G4.format(n=2, k=1, got="zz", m=1, ids='"a1", "b2"'),
    ),
    (
        "G3_signature_dropped",
        GEMINI3,
        lambda: request(
            user(), model_calls(call("Paris"), call("Oslo"), sign=False), answers(None, None)
        ),
        lambda: request(
            user(), model_calls(call("Paris"), call("Oslo"), model=GEMINI3), answers(None, None)
        ),
        "G3",
        G3_TEXT,
    ),
    (
        "G3_later_step_unsigned",
        GEMINI3,
        lambda: request(
            user(),
            model_calls(call("Paris"), model=GEMINI3),
            answers(None),
            model_calls({"text": "And Oslo."}, call("Oslo"), sign=False),
            answers(None),
        ),
        lambda: request(
            user(),
            model_calls(call("Paris"), model=GEMINI3),
            answers(None),
            model_calls({"text": "And Oslo."}, call("Oslo"), model=GEMINI3),
            answers(None),
        ),
        "G3",
        gv.G3.format(name="get_weather", position=4),
    ),
    (
        "signature_args_changed",
        GEMINI3,
        lambda: _edited(round_two(GEMINI3), "contents.1.parts.0.functionCall.args.city", "Lyon"),
        lambda: round_two(GEMINI3),
        "signature_tampered",
        "Corrupted thought signature.",
    ),
    (
        "signature_moved_to_other_call",
        GEMINI3,
        lambda: _rebound_signature(_two_steps()),
        lambda: _two_steps(),
        "signature_tampered",
        "Corrupted thought signature.",
    ),
    (
        "signature_bytes_changed",
        FLASH,
        lambda: _flipped_signature(round_two(FLASH)),
        lambda: round_two(FLASH),
        "signature_tampered",
        "Corrupted thought signature.",
    ),
    (
        "signature_from_other_model",
        "gemini-3-pro-preview",
        lambda: round_two(GEMINI3),
        lambda: round_two("gemini-3-pro-preview"),
        "signature_tampered",
        "Corrupted thought signature.",
    ),
]


def _set(path: str, value: Any) -> Callable[[Body], None]:
    def edit(body: Body) -> None:
        *head, last = path.split(".")
        target: Any = body
        for key in head:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value

    return edit


def _edited(body: Body, path: str, value: Any) -> Body:
    _set(path, value)(body)
    return body


def _two_steps() -> Body:
    return request(
        user(),
        model_calls(call("Paris"), model=GEMINI3),
        answers(None),
        model_calls(call("Oslo"), model=GEMINI3),
        answers(None),
    )


def _rebound_signature(body: Body) -> Body:
    """Step 1's signature put on step 2's call (a loop that rebuilt its parts)."""
    first, second = body["contents"][1]["parts"][0], body["contents"][3]["parts"][0]
    second["thoughtSignature"] = first["thoughtSignature"]
    return body


def _flipped_signature(body: Body) -> Body:
    part = body["contents"][1]["parts"][0]
    raw = bytearray(base64.b64decode(part["thoughtSignature"]))
    raw[8] ^= 0x01  # inside the MAC
    part["thoughtSignature"] = base64.urlsafe_b64encode(bytes(raw)).decode()
    return body


def _signature_text_changed(body: Body, where: str) -> Body:
    """One base64 character of the signature as sent replaced: the first, middle or last."""
    part = body["contents"][1]["parts"][0]
    text = part["thoughtSignature"]
    index = {"first": 0, "middle": len(text) // 2, "last": len(text.rstrip("=")) - 1}[where]
    swapped = "B" if text[index] == "A" else "A"
    part["thoughtSignature"] = text[:index] + swapped + text[index + 1 :]
    return body


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_signature_altered_anywhere_is_corrupted(where: str) -> None:
    """The real API answers "Corrupted thought signature." to a signature altered in its
    first bytes as anywhere else (issue 11); the unaltered one passes."""
    ctx = ctx_for(GEMINI3)
    err = API.validate(_signature_text_changed(round_two(GEMINI3), where), ctx)
    assert err is not None
    assert (err.status, err.rule, err.message) == (
        400,
        "signature_tampered",
        gv.CORRUPTED_SIGNATURE,
    )
    assert API.validate(round_two(GEMINI3), ctx) is None


def test_a_signature_we_did_not_mint_is_still_accepted() -> None:
    """A real API's signature (recorded traffic) cannot be checked here: accepted as it is."""
    body = round_two(GEMINI3)
    body["contents"][1]["parts"][0]["thoughtSignature"] = base64.b64encode(
        bytes(range(117))
    ).decode()
    assert API.validate(body, ctx_for(GEMINI3)) is None


@pytest.mark.parametrize(
    ("model", "broken", "corrected", "rule", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in TURN_CASES],
)
def test_turn_error_and_its_correction(
    model: str,
    broken: Callable[[], Body],
    corrected: Callable[[], Body],
    rule: str,
    message: str,
) -> None:
    ctx = ctx_for(model)
    err = API.validate(broken(), ctx)
    assert err is not None
    assert (err.status, err.kind, err.rule) == (400, "INVALID_ARGUMENT", rule)
    assert err.message == message
    assert API.validate(corrected(), ctx) is None


def test_signatures_checked_only_where_required() -> None:
    unsigned = request(user(), model_calls(call("Paris"), sign=False), answers(None))
    assert API.validate(unsigned, ctx_for(FLASH)) is None  # 2.5: no G3
    assert API.validate(unsigned, ctx_for(GEMINI3, signatures=False)) is None  # script option
    older_turn = request(
        *unsigned["contents"],
        {"role": "model", "parts": [{"text": "Sunny."}]},
        user("And tomorrow?"),
    )
    assert API.validate(older_turn, ctx_for(GEMINI3)) is None  # outside the current turn
    skip = request(
        user(),
        {
            "role": "model",
            "parts": [{**call("Paris"), "thoughtSignature": "skip_thought_signature_validator"}],
        },
        answers(None),
    )
    assert API.validate(skip, ctx_for(GEMINI3)) is None  # the documented dummy


def test_model_ids_optional_and_client_ids_accepted() -> None:
    no_ids = request(user(), model_calls(call("Paris"), call("Oslo")), answers(None, None))
    assert API.validate(no_ids, ctx_for()) is None
    own_ids = request(user(), model_calls(call("Paris"), call("Oslo")), answers("x1", "x2"))
    assert API.validate(own_ids, ctx_for()) is None  # calls had none: nothing to match
    sdk_afc = request(user(), model_calls(call("Paris", "a1")), answers(None))
    assert API.validate(sdk_afc, ctx_for()) is None  # AFC answers without the id


# --- position ------------------------------------------------------------------------------


def test_position_counts_model_turns_after_the_last_user_text() -> None:
    body = request(
        user("first question"),
        {"role": "model", "parts": [{"text": "answer"}]},
        user(ASK),
        model_calls(call("Paris")),
        answers(None),
        model_calls(call("Oslo")),
        answers(None),
        mode="NONE",
    )
    assert API.position(body) == Position(user_text=ASK, model_turns=2, tools_forbidden=True)
    snake = {
        "contents": [
            {"role": "user", "parts": [{"text": ASK}]},
            {"role": "model", "parts": [{"function_call": {"name": "f"}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {}}}]},
        ],
        "tools": [{"function_declarations": [{"name": "f"}]}],
    }
    assert API.position(snake) == Position(user_text=ASK, model_turns=1, tools_forbidden=False)
    # A model given no function declaration cannot call one: the closing text is played.
    del snake["tools"]
    assert API.position(snake) == Position(user_text=ASK, model_turns=1, tools_forbidden=True)


def test_url_safe_signatures_verify_whatever_their_alphabet() -> None:
    """The SDK sends signatures back URL-safe; every one of them must verify, including those
    whose `-`/`_` count a lenient standard decoder would silently drop in fours."""
    risky = 0
    for n in range(40):
        body = request(user(), model_calls(call(f"City {n}")), answers(None))
        part = body["contents"][1]["parts"][0]
        raw = base64.b64decode(part["thoughtSignature"])
        part["thoughtSignature"] = base64.urlsafe_b64encode(raw).decode()
        special = sum(part["thoughtSignature"].count(c) for c in "-_")
        risky += special > 0 and special % 4 == 0
        assert API.validate(body, ctx_for()) is None, part["thoughtSignature"]
    assert risky > 0  # the case that once slipped through is among them
