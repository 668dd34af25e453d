"""Anthropic Messages: the rejections the real `POST /v1/messages` gives, in the order it checks.

Each quirk is a named constant with the real wording and where it was seen. Wording marked
"unconfirmed" follows the confirmed pydantic-style siblings (`max_tokens: Field required`,
`tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted`) but was not seen
verbatim. Block type names are read case-sensitively, as the API does.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from harness.emulator.tokens import Minter, Verdict, decode_b64, verify
from harness.emulator.wire import ApiError, text_of

INVALID_REQUEST = "invalid_request_error"
THINKING_TOKEN_KIND = "anthropic.thinking"  # minted by anthropic_render, bound to the text

# missing_field: "max_tokens: Field required" (https://github.com/testomatio/app/issues/1194,
# also Bedrock's Anthropic endpoint in immersive-translate/immersive-translate#3993).
FIELD_REQUIRED = "{path}: Field required"
REQUIRED_FIELDS = ("max_tokens", "messages", "model")  # the API reference lists them in this order
# invalid_field (unconfirmed): pydantic v2 wording, as the API's other field errors.
NOT_A_LIST = "{path}: Input should be a valid list"
NOT_AN_INTEGER = "{path}: Input should be a valid integer"
NOT_A_DICT = "{path}: Input should be a valid dictionary"
NOT_A_STRING = "{path}: Input should be a valid string"
BAD_ROLE = "{path}: Input should be 'user' or 'assistant'"
# system_role: https://github.com/ianarawjo/ChainForge/issues/271 (a system prompt sent as a
# message, the usual slip when porting an OpenAI loop).
SYSTEM_ROLE = (
    'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
    'parameter, not "system" as an input message role.'
)
# no_messages (unconfirmed beyond its first words "messages: at l…", hinthornw/promptimizer#19).
NO_MESSAGES = "messages: at least one message is required"
# empty_content: https://github.com/anthropics/claude-code/issues/6795 (also #4416).
EMPTY_CONTENT = (
    "messages.{n}: all messages must have non-empty content except for the optional final "
    "assistant message"
)
# Not rejected, on purpose: "first message must use the user role" and "roles must alternate"
# were real 400s in 2024 (lobehub/lobehub#1601, #1496) but the API now accepts both and merges
# consecutive same-role turns (anthropics/courses#79, 2025-03: the documented "mistakes" return
# 200). Tool pairing (E2/E3) is still checked message by message, as its wording says.

# E1: https://github.com/anthropics/anthropic-sdk-python/issues/494 (newer copies put the block
# names in backticks; this is the wording seen in full).
E1_TOOLS_REQUIRED = "Requests which include tool_use or tool_result blocks must define tools."
# E2: https://github.com/anthropics/claude-code/issues/2697, #6262 (several ids: ", "-joined).
E2_UNANSWERED = (
    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
# E2, for a server-tool call resent as a plain `tool_use` and followed by text blocks in the
# same assistant message: realwire2
# `pydantic-ai__error_400_tool_use_without_tool_result__claude-3-5-sonnet` (2025-05) got
# E2_UNANSWERED ("messages.1: … srvtoolu_01ALRFK59SkK8D9e1Xj2exhq. …") although the very next
# message starts with the tool_result for that id. The request had two oddities at once and the
# recording cannot tell which one the API objected to. Open readings: (a) a block after a
# tool_use in its own message means no result comes "immediately after" it, whatever the id;
# (b) an id minted for a server tool (`srvtoolu_`) is never answered by a client tool_result;
# (c) only the two together. The emulator rejects that exact shape only (both together), so it
# refuses no request on a reading the recording does not settle.
SERVER_TOOL_ID_PREFIX = "srvtoolu_"
# E3: https://github.com/anthropics/claude-code/issues/14643 , router-for-me/CLIProxyAPI#497.
E3_UNKNOWN_RESULT = (
    "messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message."
)
# duplicate_result: sipeed/picoclaw#1793, QwenLM/qwen-code#8163, RooCodeInc/Roo-Code#9248 (the
# sentence is quoted alike in all three; its `messages.N.content.K:` prefix is unconfirmed and
# follows E3's form).
DUPLICATE_RESULT = (
    "messages.{n}.content.{k}: each tool_use must have a single result. Found multiple "
    "`tool_result` blocks with id: {id}"
)
# E5: deepset-ai/haystack-core-integrations#2146; full text in lbjlaq/Antigravity-Manager#139.
E5_THINKING_DROPPED = (
    "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
# thinking_signature_invalid: https://github.com/ding113/claude-code-hub/issues/518 ,
# lbjlaq/Antigravity-Manager#498 (and code-yeongyu/oh-my-openagent#2775 for a forged block).
SIGNATURE_INVALID = "messages.{n}.content.{k}: Invalid `signature` in `thinking` block"
# thinking_signature_missing: https://github.com/justlovemaki/AIClient2API/issues/437 .
SIGNATURE_REQUIRED = "messages.{n}.content.{k}.thinking.signature: Field required"
# redacted_thinking_data_invalid: https://github.com/anthropics/claude-code/issues/56708
# ("messages.23.content.2: Invalid `data` in `redacted_thinking` block").
REDACTED_DATA_INVALID = "messages.{n}.content.{k}: Invalid `data` in `redacted_thinking` block"
# redacted_thinking_data_missing (unconfirmed): the pydantic form of SIGNATURE_REQUIRED.
REDACTED_DATA_REQUIRED = "messages.{n}.content.{k}.redacted_thinking.data: Field required"
# The string Anthropic documents for testing redacted thinking: a request holding it gets its
# thinking as `redacted_thinking` blocks (realwire2 `pydantic-ai__*redacted_thinking*`).
REDACTED_MAGIC = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
    "46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)
REDACTED_TOKEN_KIND = "anthropic.redacted_thinking"
_REDACTED_NONCE_BYTES = 24
_REDACTED_PADDING = 320

# tool_choice_bad_type: decolua/9router#1593 ("Input tag 'function' does not match …").
TOOL_CHOICE_TYPES = ("auto", "any", "tool", "none")
TOOL_CHOICE_BAD_TYPE = (
    "tool_choice: Input tag '{tag}' does not match expected tags: 'auto','any','tool','none'"
)
# tool_choice_unknown_tool: decolua/9router#1593 ("Tool 'todo_write' not found in provided
# tools"), also a recorded body in the index: {"message":"Tool 'web_search' not found in …"}.
TOOL_CHOICE_UNKNOWN_TOOL = "Tool '{name}' not found in provided tools"
# tool_choice_no_name (unconfirmed): pydantic wording, path as in the confirmed none rule below.
TOOL_CHOICE_NO_NAME = "tool_choice.tool.name: Field required"
# tool_choice_none_parallel: disable_parallel_tool_use exists on auto/any/tool only;
# QuantumNous/new-api#2763 and zed-industries/zed#35341 (relayed Anthropic 400).
TOOL_CHOICE_NONE_PARALLEL = (
    "tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted"
)
# tool_choice_without_tools: ai365vip/chat-api#82 (2024). Not applied to "none", which asks for
# no tool anyway (unconfirmed either way).
TOOL_CHOICE_WITHOUT_TOOLS = "tool_choice may only be specified while providing tools."

# thinking_forced_tool: https://github.com/mastra-ai/mastra/issues/7507 , can1357/oh-my-pi#341.
THINKING_FORCED_TOOL = "Thinking may not be enabled when tool_choice forces tool use."
# thinking_budget_over_max: https://github.com/ProfSynapse/nexus/issues/17 .
THINKING_BUDGET_OVER_MAX = (
    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
    "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    "#max-tokens-and-context-window-size"
)
# thinking_budget_too_small (unconfirmed wording; the minimum 1024 is in the SDK docstring).
THINKING_BUDGET_MIN = 1024
THINKING_BUDGET_TOO_SMALL = (
    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
)
THINKING_ON = ("enabled", "adaptive")
# E5 and thinking_forced_tool are enforced for manual thinking ("enabled") only: with
# "adaptive" the model may skip thinking on a turn, so a turn without a thinking block can be
# genuine (unconfirmed whether the API checks adaptive requests at all).
THINKING_STRICT = "enabled"

# effort_unsupported: realwire pydantic-ai__error_400_invalid_request__claude-opus-4-6 (levels
# listed alphabetically); per-model levels from SkillfulAgents/SuperAgent#1142 (live-checked) and
# charmbracelet/catwalk#280. Models not listed here accept every level.
EFFORT_UNSUPPORTED = (
    "This model does not support effort level '{level}'. Supported levels: {levels}."
)
EFFORT_LEVELS = {
    "claude-opus-4-5": ("low", "medium", "high"),
    "claude-opus-4-6": ("low", "medium", "high", "max"),
    "claude-sonnet-4-6": ("low", "medium", "high", "max"),
}

Body = Mapping[str, Any]
Rule = Callable[[Body], ApiError | None]


def invalid(message: str, rule: str) -> ApiError:
    return ApiError(status=400, message=message, kind=INVALID_REQUEST, rule=rule)


def validate_request(body: Body) -> ApiError | None:
    """The first rejection the real API gives this request, or None when it accepts it."""
    for rule in RULES:
        problem = rule(body)
        if problem is not None:
            return problem
    return None


# --- shape -------------------------------------------------------------------------------


def required_fields(body: Body) -> ApiError | None:
    for name in REQUIRED_FIELDS:
        if name not in body:
            return invalid(FIELD_REQUIRED.format(path=name), "missing_field")
    return None


def field_types(body: Body) -> ApiError | None:
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        return invalid(NOT_AN_INTEGER.format(path="max_tokens"), "invalid_field")
    if not isinstance(body["messages"], list):
        return invalid(NOT_A_LIST.format(path="messages"), "invalid_field")
    if not body["messages"]:
        return invalid(NO_MESSAGES, "no_messages")
    return None


def message_shapes(body: Body) -> ApiError | None:
    for n, msg in enumerate(body["messages"]):
        problem = _message_shape(n, msg)
        if problem is not None:
            return problem
    return None


def _message_shape(n: int, msg: Any) -> ApiError | None:
    where = f"messages.{n}"
    if not isinstance(msg, dict):
        return invalid(NOT_A_DICT.format(path=where), "invalid_field")
    for name in ("role", "content"):
        if name not in msg:
            return invalid(FIELD_REQUIRED.format(path=f"{where}.{name}"), "missing_field")
    if msg["role"] == "system":
        return invalid(SYSTEM_ROLE, "system_role")
    if msg["role"] not in ("user", "assistant"):
        return invalid(BAD_ROLE.format(path=f"{where}.role"), "invalid_field")
    content = msg["content"]
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return invalid(NOT_A_LIST.format(path=f"{where}.content"), "invalid_field")
    for k, block in enumerate(content):
        problem = _block_shape(f"{where}.content.{k}", block)
        if problem is not None:
            return problem
    return None


# The string fields the pairing checks compare, per block type (pydantic checks types first).
_STRING_FIELDS = {"tool_use": ("id", "name"), "tool_result": ("tool_use_id",)}


def _block_shape(where: str, block: Any) -> ApiError | None:
    if not isinstance(block, dict):
        return invalid(NOT_A_DICT.format(path=where), "invalid_field")
    for name in _STRING_FIELDS.get(text_of(block.get("type")) or "", ()):
        if name in block and not isinstance(block[name], str):
            return invalid(NOT_A_STRING.format(path=f"{where}.{name}"), "invalid_field")
    return None


# --- tools and tool_choice ----------------------------------------------------------------


def tools_declared(body: Body) -> ApiError | None:
    """E1: tool blocks anywhere in the history need `tools`, even when tools are forbidden."""
    if _tool_names(body):
        return None
    for msg in body["messages"]:
        if any(b.get("type") in ("tool_use", "tool_result") for b in blocks_of(msg)):
            return invalid(E1_TOOLS_REQUIRED, "E1")
    return None


def tool_choice_valid(body: Body) -> ApiError | None:
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not isinstance(choice, dict):
        return invalid(NOT_A_DICT.format(path="tool_choice"), "invalid_field")
    kind = choice.get("type")
    if kind not in TOOL_CHOICE_TYPES:
        return invalid(TOOL_CHOICE_BAD_TYPE.format(tag=kind), "tool_choice_bad_type")
    if kind == "none":
        if "disable_parallel_tool_use" in choice:
            return invalid(TOOL_CHOICE_NONE_PARALLEL, "tool_choice_none_parallel")
        return None
    names = _tool_names(body)
    if not names:
        return invalid(TOOL_CHOICE_WITHOUT_TOOLS, "tool_choice_without_tools")
    if kind == "tool":
        if "name" not in choice:
            return invalid(TOOL_CHOICE_NO_NAME, "missing_field")
        if text_of(choice["name"]) not in names:
            message = TOOL_CHOICE_UNKNOWN_TOOL.format(name=choice["name"])
            return invalid(message, "tool_choice_unknown_tool")
    return None


def _tool_names(body: Body) -> set[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return set()
    return {str(t["name"]) for t in tools if isinstance(t, dict) and "name" in t}


# --- thinking and effort ------------------------------------------------------------------


def thinking_on(body: Body) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in THINKING_ON


def thinking_strict(body: Body) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") == THINKING_STRICT


def thinking_display(body: Body) -> str | None:
    thinking = body.get("thinking")
    return thinking.get("display") if isinstance(thinking, dict) else None


def thinking_config(body: Body) -> ApiError | None:
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if isinstance(budget, int) and budget < THINKING_BUDGET_MIN:
        return invalid(THINKING_BUDGET_TOO_SMALL, "thinking_budget_too_small")
    if isinstance(budget, int) and body["max_tokens"] <= budget:
        return invalid(THINKING_BUDGET_OVER_MAX, "thinking_budget_over_max")
    return None


def thinking_with_forced_tool(body: Body) -> ApiError | None:
    choice = body.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    if forced and thinking_strict(body):
        return invalid(THINKING_FORCED_TOOL, "thinking_forced_tool")
    return None


def effort_supported(body: Body) -> ApiError | None:
    config = body.get("output_config")
    level = config.get("effort") if isinstance(config, dict) else None
    if level is None:
        return None
    model = str(body["model"])
    for prefix, levels in EFFORT_LEVELS.items():
        if model.startswith(prefix) and level not in levels:
            message = EFFORT_UNSUPPORTED.format(level=level, levels=", ".join(sorted(levels)))
            return invalid(message, "effort_unsupported")
    return None


# --- the history, message by message ------------------------------------------------------


def history(body: Body) -> ApiError | None:
    messages: list[dict[str, Any]] = body["messages"]
    for n in range(len(messages)):
        for check in (
            non_empty,
            thinking_signatures,
            redacted_blocks,
            server_call_then_text,
            results_follow_uses,
            results_answer_uses,
        ):
            problem = check(messages, n)
            if problem is not None:
                return problem
    return None


def non_empty(messages: Sequence[dict[str, Any]], n: int) -> ApiError | None:
    msg = messages[n]
    final_assistant = n == len(messages) - 1 and msg["role"] == "assistant"
    if msg["content"] in ("", []) and not final_assistant:
        return invalid(EMPTY_CONTENT.format(n=n), "empty_content")
    return None


def thinking_signatures(messages: Sequence[dict[str, Any]], n: int) -> ApiError | None:
    """A thinking block must come back with its signature, both unchanged. Our signatures are
    bound to the thinking text; a real API's signature (realwire) is FOREIGN and accepted."""
    if messages[n]["role"] != "assistant":
        return None
    for k, block in enumerate(blocks_of(messages[n])):
        if block.get("type") != "thinking":
            continue
        if "signature" not in block:
            return invalid(SIGNATURE_REQUIRED.format(n=n, k=k), "thinking_signature_missing")
        if not signature_accepted(str(block.get("thinking", "")), block["signature"]):
            return invalid(SIGNATURE_INVALID.format(n=n, k=k), "thinking_signature_invalid")
    return None


def redacted_data(minter: Minter, where: str) -> str:
    """Opaque `data` for a redacted_thinking block: a nonce, then a token bound to it, so any
    change to the blob is detected from the blob alone."""
    nonce = bytes.fromhex(minter.hex("anthropic.redacted", where, length=_REDACTED_NONCE_BYTES * 2))
    token = minter.token(REDACTED_TOKEN_KIND, nonce.hex(), padding=_REDACTED_PADDING)
    return base64.b64encode(nonce + token).decode()


def redacted_verdict(data: str) -> Verdict:
    raw = decode_b64(data)
    if not raw:
        return Verdict.TAMPERED  # empty, or not base64: no real blob looks like that
    nonce, token = raw[:_REDACTED_NONCE_BYTES], raw[_REDACTED_NONCE_BYTES:]
    return verify(REDACTED_TOKEN_KIND, nonce.hex(), token)


def redacted_blocks(messages: Sequence[dict[str, Any]], n: int) -> ApiError | None:
    """A redacted_thinking block must come back with its `data` unchanged; a real API's blob
    (realwire2) is FOREIGN and accepted."""
    if messages[n]["role"] != "assistant":
        return None
    for k, block in enumerate(blocks_of(messages[n])):
        if block.get("type") != "redacted_thinking":
            continue
        data = block.get("data")
        if data is None:
            return invalid(REDACTED_DATA_REQUIRED.format(n=n, k=k), "redacted_data_missing")
        if not isinstance(data, str) or redacted_verdict(data) is Verdict.TAMPERED:
            return invalid(REDACTED_DATA_INVALID.format(n=n, k=k), "redacted_data_invalid")
    return None


def own_signatures(messages: Sequence[dict[str, Any]], since: int | None) -> ApiError | None:
    """With the scenario's thinking on, this run's turns (after the last genuine user message)
    were all answered by us, so each of their thinking blocks must carry the signature we
    minted for its text. A FOREIGN one there is forged or from another conversation, and the
    real API rejects it as invalid. Earlier turns (a saved chat) and requests from scenarios
    without thinking may hold a real API's signature, which stays accepted."""
    for n in range(0 if since is None else since + 1, len(messages)):
        if messages[n]["role"] != "assistant":
            continue
        for k, block in enumerate(blocks_of(messages[n])):
            if block.get("type") == "thinking" and not _signed_by_us(block):
                return invalid(SIGNATURE_INVALID.format(n=n, k=k), "thinking_signature_invalid")
            data = block.get("data")
            if block.get("type") == "redacted_thinking" and not (
                isinstance(data, str) and redacted_verdict(data) is Verdict.VALID
            ):
                return invalid(REDACTED_DATA_INVALID.format(n=n, k=k), "redacted_data_invalid")
    return None


def _signed_by_us(block: Mapping[str, Any]) -> bool:
    signature = block.get("signature")
    raw = decode_b64(signature) if isinstance(signature, str) else None
    text = str(block.get("thinking", ""))
    return bool(raw) and verify(THINKING_TOKEN_KIND, text, raw or b"") is Verdict.VALID


def signature_accepted(text: str, signature: Any) -> bool:
    if not isinstance(signature, str):
        return False
    raw = decode_b64(signature)
    if not raw:  # empty, or not base64: no real signature looks like that
        return False
    return verify(THINKING_TOKEN_KIND, text, raw) is not Verdict.TAMPERED


def server_call_then_text(messages: Sequence[dict[str, Any]], n: int) -> ApiError | None:
    """E2 for the recorded shape (SERVER_TOOL_ID_PREFIX): a `tool_use` carrying a server-tool id
    with text after it in the same assistant message."""
    if messages[n]["role"] != "assistant":
        return None
    blocks = blocks_of(messages[n])
    flagged = [
        str(b.get("id"))
        for k, b in enumerate(blocks)
        if b.get("type") == "tool_use"
        and str(b.get("id")).startswith(SERVER_TOOL_ID_PREFIX)
        and any(later.get("type") == "text" for later in blocks[k + 1 :])
    ]
    if flagged:
        return invalid(E2_UNANSWERED.format(n=n, ids=", ".join(flagged)), "E2")
    return None


def results_follow_uses(messages: Sequence[dict[str, Any]], n: int) -> ApiError | None:
    """E2: every tool_use id is answered by the leading tool_result blocks of the very next
    message; a text block first, or a result in a later message, leaves ids unanswered."""
    if messages[n]["role"] != "assistant":
        return None
    used = tool_use_ids(messages[n])
    if not used:
        return None
    nxt = messages[n + 1] if n + 1 < len(messages) else None
    answered = set(leading_result_ids(nxt)) if nxt and nxt["role"] == "user" else set()
    missing = [i for i in used if i not in answered]
    if missing:
        return invalid(E2_UNANSWERED.format(n=n, ids=", ".join(missing)), "E2")
    return None


def results_answer_uses(messages: Sequence[dict[str, Any]], n: int) -> ApiError | None:
    """E3: a tool_result must answer a tool_use of the message right before it, once."""
    if messages[n]["role"] != "user":
        return None
    prev = messages[n - 1] if n > 0 else None
    known = set(tool_use_ids(prev)) if prev and prev["role"] == "assistant" else set()
    seen: set[Any] = set()
    for k, block in enumerate(blocks_of(messages[n])):
        if block.get("type") != "tool_result":
            continue
        result_id = block.get("tool_use_id")
        if not isinstance(result_id, str):
            path = f"messages.{n}.content.{k}.tool_use_id"
            return invalid(NOT_A_STRING.format(path=path), "invalid_field")
        if result_id not in known:
            return invalid(E3_UNKNOWN_RESULT.format(n=n, k=k, id=result_id), "E3")
        if result_id in seen:
            return invalid(DUPLICATE_RESULT.format(n=n, k=k, id=result_id), "duplicate_result")
        seen.add(result_id)
    return None


def thinking_kept(body: Body) -> ApiError | None:
    """E5: with thinking on, the assistant turn whose tool calls the last message answers must
    still start with its thinking block."""
    if not thinking_strict(body):
        return None
    messages: list[dict[str, Any]] = body["messages"]
    last = messages[-1]
    if len(messages) < 2 or last["role"] != "user" or not leading_result_ids(last):
        return None
    n = len(messages) - 2
    first = blocks_of(messages[n])
    if messages[n]["role"] != "assistant" or not first:
        return None
    found = first[0].get("type")
    if found in ("thinking", "redacted_thinking"):
        return None
    return invalid(E5_THINKING_DROPPED.format(n=n, found=found), "E5")


# --- helpers shared with position() --------------------------------------------------------


def blocks_of(msg: Any) -> list[dict[str, Any]]:
    """The content blocks of a message; a string content is one text block."""
    if not isinstance(msg, dict):
        return []
    content = msg.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def tool_use_ids(msg: Any) -> list[str]:
    return [str(b.get("id")) for b in blocks_of(msg) if b.get("type") == "tool_use"]


def leading_result_ids(msg: Any) -> list[str]:
    return list(_leading_results(blocks_of(msg)))


def _leading_results(blocks: list[dict[str, Any]]) -> Iterator[str]:
    for block in blocks:
        if block.get("type") != "tool_result":
            return
        yield str(block.get("tool_use_id"))


RULES: tuple[Rule, ...] = (
    required_fields,
    field_types,
    message_shapes,
    tools_declared,
    tool_choice_valid,
    thinking_config,
    thinking_with_forced_tool,
    effort_supported,
    history,
    thinking_kept,
)
