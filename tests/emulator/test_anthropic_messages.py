"""The emulated Anthropic Messages API: validation (each rejection and its corrected request)
and position. Rendering, errors and faults: test_anthropic_render.py."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from harness.emulator import anthropic_validate as v
from harness.emulator.anthropic_messages import API
from harness.emulator.anthropic_render import thinking_block
from harness.emulator.apis import wire_api
from tests.emulator.anthropic_fixtures import (
    ASK,
    MINTER,
    THINKING,
    THOUGHT,
    assistant,
    ctx,
    request,
    result,
    round_two,
    text,
    use,
    user,
    without,
)

E5_TAIL = (
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable "
    "`thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def tampered(signature: str) -> str:
    raw = bytearray(base64.b64decode(signature))
    raw[10] ^= 0xFF
    return base64.b64encode(bytes(raw)).decode()


def thought(text_: str = THOUGHT, signature: str | None = None) -> dict[str, Any]:
    block = thinking_block(THOUGHT, MINTER)
    block["thinking"] = text_
    if signature is not None:
        block["signature"] = signature
    return block


SIGNED = thinking_block(THOUGHT, MINTER)

# (rule, rejected request, message, corrected request)
CASES: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("missing_field", without(request(), "model"), "model: Field required", request()),
    ("missing_field", without(request(), "max_tokens"), "max_tokens: Field required", request()),
    ("missing_field", without(request(), "messages"), "messages: Field required", request()),
    ("no_messages", {**request(), "messages": []}, v.NO_MESSAGES, request()),
    (
        "system_role",
        request({"role": "system", "content": "Be brief."}, ASK),
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
        'parameter, not "system" as an input message role.',
        request(ASK, system="Be brief."),
    ),
    (
        "invalid_field",
        request({"role": "tool", "content": "x"}, ASK),
        "messages.0.role: Input should be 'user' or 'assistant'",
        request(),
    ),
    (
        "E1",
        without(round_two(), "tools"),
        "Requests which include tool_use or tool_result blocks must define tools.",
        round_two(),
    ),
    (
        "E1",
        round_two(tools=[], tool_choice=None),
        "Requests which include tool_use or tool_result blocks must define tools.",
        round_two(tool_choice={"type": "none"}),
    ),
    (
        "E2",
        request(ASK, assistant(text("Checking."), use("toolu_01A")), user(text("and?"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.",
        request(ASK, assistant(text("Checking."), use("toolu_01A")), user(result("toolu_01A"))),
    ),
    (
        "E2",  # a text block before the results (hermes-agent#65369)
        request(ASK, assistant(use("toolu_01A")), user(text("here"), result("toolu_01A"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.",
        request(ASK, assistant(use("toolu_01A")), user(result("toolu_01A"), text("here"))),
    ),
    (
        "E2",  # parallel results split over two user messages
        request(
            ASK,
            assistant(use("toolu_01A"), use("toolu_01B", "Oslo")),
            user(result("toolu_01A")),
            user(result("toolu_01B")),
        ),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01B. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.",
        request(
            ASK,
            assistant(use("toolu_01A"), use("toolu_01B", "Oslo")),
            user(result("toolu_01A"), result("toolu_01B")),
        ),
    ),
    (
        "E2",  # the call turn is the last message: nothing answers it
        request(ASK, assistant(use("toolu_01A"), use("toolu_01B"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01A, toolu_01B. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message.",
        request(ASK, assistant(text("Let me check."))),
    ),
    (
        "E3",
        request(ASK, assistant(text("Sunny.")), user(result("toolu_01Z"))),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_01Z. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message.",
        request(ASK, assistant(text("Sunny.")), user(text("Thanks"))),
    ),
    (
        "E3",
        request(user(result("toolu_01Z"), text("Weather?"))),
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_01Z. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message.",
        request(user(text("Weather?"))),
    ),
    (
        "duplicate_result",
        request(ASK, assistant(use("toolu_01A")), user(result("toolu_01A"), result("toolu_01A"))),
        "messages.2.content.1: each tool_use must have a single result. Found multiple "
        "`tool_result` blocks with id: toolu_01A",
        request(ASK, assistant(use("toolu_01A")), user(result("toolu_01A"))),
    ),
    (
        "E5",
        round_two(thinking=THINKING),
        f"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`tool_use`. {E5_TAIL}",
        round_two(thinking=THINKING, with_thinking=True),
    ),
    (
        "E5",
        request(
            ASK,
            assistant(text("Checking."), use("toolu_01A")),
            user(result("toolu_01A")),
            thinking=THINKING,
        ),
        f"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`text`. {E5_TAIL}",
        request(
            ASK,
            assistant(SIGNED, text("Checking."), use("toolu_01A")),
            user(result("toolu_01A")),
            thinking=THINKING,
        ),
    ),
    (
        "thinking_signature_invalid",  # the thinking text was edited
        request(
            ASK,
            assistant(thought("I will call it."), use("toolu_01A")),
            user(result("toolu_01A")),
            thinking=THINKING,
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        round_two(thinking=THINKING, with_thinking=True),
    ),
    (
        "thinking_signature_invalid",  # the signature bytes were edited
        request(
            ASK,
            assistant(thought(signature=tampered(SIGNED["signature"])), use("toolu_01A")),
            user(result("toolu_01A")),
            thinking=THINKING,
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        round_two(thinking=THINKING, with_thinking=True),
    ),
    (
        "thinking_signature_invalid",  # an empty signature
        request(
            ASK,
            assistant(thought(signature=""), use("toolu_01A")),
            user(result("toolu_01A")),
            thinking=THINKING,
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        round_two(thinking=THINKING, with_thinking=True),
    ),
    (
        "thinking_signature_missing",
        request(
            ASK,
            assistant({"type": "thinking", "thinking": THOUGHT}, use("toolu_01A")),
            user(result("toolu_01A")),
            thinking=THINKING,
        ),
        "messages.1.content.0.thinking.signature: Field required",
        round_two(thinking=THINKING, with_thinking=True),
    ),
    (
        "tool_choice_unknown_tool",
        request(tool_choice={"type": "tool", "name": "get_wether"}),
        "Tool 'get_wether' not found in provided tools",
        request(tool_choice={"type": "tool", "name": "get_weather"}),
    ),
    (
        "tool_choice_none_parallel",
        round_two(tool_choice={"type": "none", "disable_parallel_tool_use": True}),
        "tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted",
        round_two(tool_choice={"type": "none"}),
    ),
    (
        "tool_choice_bad_type",
        request(tool_choice={"type": "function", "function": {"name": "get_weather"}}),
        "tool_choice: Input tag 'function' does not match expected tags: "
        "'auto','any','tool','none'",
        request(tool_choice={"type": "tool", "name": "get_weather"}),
    ),
    (
        "tool_choice_without_tools",
        without(request(tool_choice={"type": "any"}), "tools"),
        "tool_choice may only be specified while providing tools.",
        request(tool_choice={"type": "any"}),
    ),
    (
        "thinking_forced_tool",
        request(tool_choice={"type": "any"}, thinking=THINKING),
        "Thinking may not be enabled when tool_choice forces tool use.",
        request(tool_choice={"type": "auto"}, thinking=THINKING),
    ),
    (
        "thinking_budget_over_max",
        request(max_tokens=1024, thinking=THINKING),
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
        "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        "#max-tokens-and-context-window-size",
        request(max_tokens=1025, thinking=THINKING),
    ),
    (
        "effort_unsupported",
        request(model="claude-opus-4-6", output_config={"effort": "xhigh"}),
        "This model does not support effort level 'xhigh'. Supported levels: high, low, max, "
        "medium.",
        request(model="claude-opus-4-6", output_config={"effort": "max"}),
    ),
    (
        "empty_content",
        request(ASK, assistant(), user(text("again?"))),
        "messages.1: all messages must have non-empty content except for the optional final "
        "assistant message",
        request(ASK, assistant(text("Hi.")), user(text("again?"))),
    ),
    ("invalid_body", [request()], "Input should be a valid dictionary", request()),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("rule", "bad", "message", "fixed"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_rejection_and_correction(
    rule: str, bad: dict[str, Any], message: str, fixed: dict[str, Any]
) -> None:
    err = API.validate(bad, ctx())
    assert err is not None, "the real API rejects this request"
    assert (err.status, err.kind, err.rule) == (400, "invalid_request_error", rule)
    assert err.message == message
    assert API.validate(fixed, ctx()) is None


@pytest.mark.parametrize(
    "body",
    [
        request({"role": "assistant", "content": "Hello!"}, ASK),  # assistant first: merged now
        request(ASK, user(text("Also Oslo?"))),  # consecutive user turns are merged
        request(ASK, assistant()),  # an empty final assistant message (prefill)
        request(ASK, assistant(use("toolu_01A")), user(result("toolu_01A")), user(text("go"))),
        round_two(tool_choice={"type": "none"}),  # the step-limit call keeps its tools
        request(tool_choice={"type": "none"}, tools=[]),
        request(tool_choice={"type": "auto", "disable_parallel_tool_use": True}),
        round_two(thinking={"type": "disabled"}),  # thinking off: dropped blocks are fine
        # thinking on: only the turn the last message answers must keep its thinking block
        request(
            ASK,
            assistant(use("toolu_01A")),
            user(result("toolu_01A")),
            assistant(text("Sunny.")),
            user(text("And Oslo?")),
            thinking=THINKING,
        ),
        request(model="claude-opus-4-7", output_config={"effort": "xhigh"}),
        # adaptive thinking may skip a turn's thinking, and may go with a forced tool
        round_two(thinking={"type": "adaptive"}),
        request(tool_choice={"type": "any"}, thinking={"type": "adaptive"}),
    ],
)
def test_accepts_what_the_real_api_accepts(body: dict[str, Any]) -> None:
    assert API.validate(body, ctx()) is None


def test_a_real_apis_signature_is_accepted() -> None:
    foreign = base64.b64encode(b"EoQDCm0IDhgCKkCDzGs2kL2Pgn" * 8).decode()
    body = request(
        ASK,
        assistant(thought("anything at all", foreign), use("toolu_01A")),
        user(result("toolu_01A")),
        thinking=THINKING,
    )
    assert API.validate(body, ctx()) is None


def _after_thinking(signature: str, thinking_text: str = THOUGHT) -> dict[str, Any]:
    return request(
        ASK,
        assistant(thought(thinking_text, signature), use("toolu_01A")),
        user(result("toolu_01A")),
        thinking=THINKING,
    )


def test_a_forged_signature_in_this_runs_turns_is_rejected_when_the_scenario_thinks() -> None:
    """The scenario's own turns were signed by us: a signature that is not ours there is forged
    (or from another conversation) and the real API rejects it."""
    forged = base64.b64encode(b"EoQDCm0IDhgCKkCDzGs2kL2Pgn" * 8).decode()
    err = API.validate(_after_thinking(forged, "anything at all"), ctx(thinking=True))
    assert err is not None and err.rule == "thinking_signature_invalid"
    assert err.message == "messages.1.content.0: Invalid `signature` in `thinking` block"
    assert API.validate(_after_thinking(SIGNED["signature"]), ctx(thinking=True)) is None
    # Without the scenario's thinking option (realwire, replayed real chats) it stays accepted.
    assert API.validate(_after_thinking(forged, "anything at all"), ctx()) is None


def test_a_real_signature_before_the_last_user_message_stays_accepted() -> None:
    foreign = base64.b64encode(b"EoQDCm0IDhgCKkCDzGs2kL2Pgn" * 8).decode()
    saved = _after_thinking(foreign, "from a saved chat")["messages"]
    body = request(*saved, assistant(text("Sunny.")), user(text("And Oslo?")), thinking=THINKING)
    assert API.validate(body, ctx(thinking=True)) is None


def test_empty_body_is_malformed_json() -> None:
    err = API.validate(None, ctx())
    assert err is not None and err.rule == "malformed_json"
    assert err.message == (
        "The request body is not valid JSON: unexpected end of data: line 1 column 1 (char 0)"
    )


@pytest.mark.parametrize(
    ("detail", "message"),
    [
        (
            "Expecting value: line 1 column 1 (char 0)",
            "The request body is not valid JSON: unexpected character: line 1 column 1 (char 0)",
        ),
        (
            "Unterminated string starting at: line 1 column 9 (char 8)",
            "The request body is not valid JSON: unexpected end of data: line 1 column 9 (char 8)",
        ),
    ],
)
def test_malformed_json_wording(detail: str, message: str) -> None:
    err = API.malformed(detail)
    assert (err.status, err.kind, err.rule, err.message) == (
        400,
        "invalid_request_error",
        "malformed_json",
        message,
    )


# --- position -------------------------------------------------------------------------------


def test_position_of_a_first_request() -> None:
    pos = API.position(request())
    assert (pos.user_text, pos.model_turns, pos.tools_forbidden) == ("Weather in Paris?", 0, False)


def test_position_skips_tool_result_messages_and_counts_model_turns() -> None:
    body = request(
        user(text("Old question")),
        assistant(text("Old answer")),
        user(text("Weather in"), text("Paris?")),
        assistant(use("toolu_01A")),
        user(result("toolu_01A")),
        assistant(use("toolu_01B")),
        user(result("toolu_01B"), text("keep going")),
        tool_choice={"type": "none"},
    )
    pos = API.position(body)
    assert (pos.user_text, pos.model_turns, pos.tools_forbidden) == ("Weather in\nParis?", 2, True)


def test_the_registry_serves_this_module() -> None:
    assert wire_api("anthropic") is API and API.name == "anthropic"
