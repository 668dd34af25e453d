"""The emulated OpenAI Chat Completions API (`POST /v1/chat/completions`).

Checks are one function per rule (C1–C3, `missing_field`, `tool_choice_*`); the reply shapes
(`chat.completion`, `chat.completion.chunk` frames) live in `openai_chat_render`. The error
envelope, malformed JSON and faults are shared with the Responses API (`openai_common`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.emulator.openai_chat_render import render_completion
from harness.emulator.openai_common import OpenAiErrors, invalid, missing
from harness.emulator.wire import ApiError, Context, Position, Reply, Step

Message = Mapping[str, Any]

# Chat Completions words a missing model in its own, older way (param and code null):
# https://github.com/danielmiessler/Fabric/issues/239 , https://github.com/chain-ml/council/issues/45
# (a curl to /v1/chat/completions without `model`).
MISSING_MODEL = "you must provide a model parameter"
# C1, param `messages.[N].role`, code null: https://github.com/sdcb/chats/pull/132 (full
# envelope), https://github.com/minoism/freecc/issues/2 . Which N the API names, and how it
# joins several ids, are not shown in a public report: we name the message that broke the run
# of tool messages (the last message when the list ends first) and join ids with ", ".
UNANSWERED_CALLS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
# C2, param `messages.[N].role` (N = the tool message), code null; "preceeding" is the API's
# own spelling: https://github.com/smarter-sh/smarter/issues/264 , miurla/morphic#136
ORPHAN_TOOL_MESSAGE = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
# C3, a tool message answering an id the previous assistant message did not ask for:
# https://github.com/dapr/dapr-agents/issues/145 . Its `param` is not shown there; we name the
# message's `tool_call_id` (unconfirmed).
UNKNOWN_TOOL_CALL_ID = (
    "Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of previous "
    "message."
)
# tool_choice without tools, param tool_choice: https://github.com/dotnet/extensions/pull/6276
TOOL_CHOICE_WITHOUT_TOOLS = (
    "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
)
# tool_choice naming a function `tools` does not declare: no public report of the real wording
# was found; this is the form OpenAI-compatible servers copy (unconfirmed).
TOOL_CHOICE_NOT_FOUND = "Invalid value for 'tool_choice': function '{name}' not found in 'tools'."


class ChatApi(OpenAiErrors):
    name = "openai-chat"

    def validate(self, body: Any, ctx: Context) -> ApiError | None:
        if not isinstance(body, Mapping):
            return self.malformed("the body is not a JSON object")
        checks: Sequence[Callable[[Mapping[str, Any]], ApiError | None]] = (
            model_given,
            messages_given,
            tool_choice_needs_tools,
            tool_choice_declared,
            tool_messages_paired,
        )
        for check in checks:
            problem = check(body)
            if problem is not None:
                return problem
        return None

    def position(self, body: Mapping[str, Any]) -> Position:
        messages = chat_messages(body)
        users = [n for n, m in enumerate(messages) if m.get("role") == "user"]
        last = users[-1] if users else -1
        after = messages[last + 1 :]
        return Position(
            user_text=message_text(messages[last]) if users else None,
            model_turns=sum(1 for m in after if m.get("role") == "assistant"),
            # A model given no tool cannot ask for one: it answers with text.
            tools_forbidden=body.get("tool_choice") == "none"
            or not (body.get("tools") or body.get("functions")),
        )

    def render(self, step: Step, body: Mapping[str, Any], ctx: Context) -> Reply:
        return render_completion(step, body, ctx)


def chat_messages(body: Mapping[str, Any]) -> list[Message]:
    raw = body.get("messages")
    return [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []


def message_text(message: Message) -> str:
    """The text of a message: its string content, or its `text` parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, Mapping) and p.get("type") == "text"
    )


def model_given(body: Mapping[str, Any]) -> ApiError | None:
    return None if body.get("model") else invalid(MISSING_MODEL, rule="missing_field")


def messages_given(body: Mapping[str, Any]) -> ApiError | None:
    return None if body.get("messages") is not None else missing("messages")


def declared_functions(body: Mapping[str, Any]) -> list[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    functions = [t.get("function") for t in tools if isinstance(t, Mapping)]
    return [str(f.get("name")) for f in functions if isinstance(f, Mapping)]


def tool_choice_needs_tools(body: Mapping[str, Any]) -> ApiError | None:
    if body.get("tool_choice") is None or body.get("tools"):
        return None
    return invalid(TOOL_CHOICE_WITHOUT_TOOLS, rule="tool_choice_without_tools", param="tool_choice")


def tool_choice_declared(body: Mapping[str, Any]) -> ApiError | None:
    choice = body.get("tool_choice")
    if not isinstance(choice, Mapping) or choice.get("type") != "function":
        return None
    function = choice.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    if name in declared_functions(body):
        return None
    return invalid(
        TOOL_CHOICE_NOT_FOUND.format(name=name),
        rule="tool_choice_unknown_tool",
        param="tool_choice",
    )


def tool_messages_paired(body: Mapping[str, Any]) -> ApiError | None:
    """C1, C2 and C3 in message order: the tool messages right after an assistant message
    with `tool_calls` answer exactly its ids, and no tool message stands anywhere else."""
    asked: list[str] | None = None  # ids of the assistant message the current run answers
    pending: list[str] = []
    for n, message in enumerate(chat_messages(body)):
        if message.get("role") == "tool":
            problem = _tool_message_fits(n, message, asked)
            if problem is not None:
                return problem
            pending = [i for i in pending if i != message.get("tool_call_id")]
            continue
        if pending:
            return _unanswered(n, pending)
        asked = _call_ids(message) if message.get("role") == "assistant" else None
        pending = list(asked or [])
    if pending:
        return _unanswered(len(chat_messages(body)) - 1, pending)
    return None


def _call_ids(message: Message) -> list[str] | None:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return None
    return [str(c.get("id")) for c in calls if isinstance(c, Mapping)]


def _tool_message_fits(n: int, message: Message, asked: list[str] | None) -> ApiError | None:
    if asked is None:
        return invalid(ORPHAN_TOOL_MESSAGE, rule="C2", param=f"messages.[{n}].role")
    call_id = message.get("tool_call_id")
    if call_id not in asked:
        return invalid(
            UNKNOWN_TOOL_CALL_ID.format(call_id=call_id),
            rule="C3",
            param=f"messages.[{n}].tool_call_id",
        )
    return None


def _unanswered(n: int, pending: list[str]) -> ApiError:
    return invalid(
        UNANSWERED_CALLS.format(ids=", ".join(pending)), rule="C1", param=f"messages.[{n}].role"
    )


API = ChatApi()
