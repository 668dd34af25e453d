"""The checks the real Responses API makes before it answers: one function per rule, each
returning the error exactly as the API words it (status, type, param, code), or None.

Rule ids: O1–O6 (providers.md §5), `missing_field`, `tool_choice_unknown_tool`,
`invalid_encrypted_content`. What we minted is recognised by its id (`openai_responses_ids`),
everything else is judged by its shape only; a request continuing a stored response is judged
together with the items of its chain (`openai_store`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.emulator.openai_common import INVALID_REQUEST, invalid, missing, wrong_type
from harness.emulator.openai_responses_ids import (
    REASONING_TOKEN_KIND,
    ResponseIds,
    token_payload,
)
from harness.emulator.tokens import Verdict, decode_b64, verify
from harness.emulator.wire import ApiError, text_of

Item = Mapping[str, Any]

# O1, param "input" (as O2; the report shows the message only):
# https://github.com/tjardoo/openai-client/pull/124
NO_TOOL_OUTPUT = "No tool output found for function call {call_id}."
# O2, param "input", code null: https://github.com/continuedev/continue/issues/10092 ,
# https://github.com/microsoft/vscode/issues/320060
NO_TOOL_CALL = "No tool call found for function call output with call_id {call_id}."
# O3, HTTP 404, param "input", code null: https://github.com/router-for-me/CLIProxyAPI/issues/2381
# , https://github.com/vercel/ai/issues/7543 , https://github.com/can1357/oh-my-pi/issues/41
ITEM_NOT_PERSISTED = (
    "Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)
# O4, HTTP 400, code previous_response_not_found: https://github.com/maximhq/bifrost/issues/2441
# (`{"status":400,"error":{"code":"previous_response_not_found",…}}`); the `param` is not
# shown there (ours: "previous_response_id", unconfirmed). An id is known when the run stored
# that response (`openai_store`: made under `store` true or unset); one made under
# `store: false`, or in another run, is unknown.
PREVIOUS_NOT_FOUND = "Previous response with id '{response_id}' not found."
PREVIOUS_NOT_FOUND_CODE = "previous_response_not_found"
# O5, param "input", code null: https://github.com/mastra-ai/mastra/issues/8738 (function_call);
# the same text with `type 'message'` and a `msg_` id is quoted in several clients' fixes
# (e.g. the ones for mastra-ai/mastra#9005).
MISSING_REASONING = (
    "Item '{item_id}' of type '{item_type}' was provided without its required 'reasoning' "
    "item: '{reasoning_id}'."
)
# O6, param "input", code null: realwire
# `pydantic-ai__responses_error_400_reasoning_item_without_following_item__gpt-5.yaml`,
# https://github.com/continuedev/continue/issues/8933
MISSING_FOLLOWER = (
    "Item '{item_id}' of type 'reasoning' was provided without its required following item."
)
# Tampered encrypted reasoning, code invalid_encrypted_content, param null:
# https://github.com/edison7009/EchoBird/issues/255 and openai/codex#35334 (current form, with
# the item id and the reason); openai/codex#8145 (older form naming the blob, same code).
BAD_ENCRYPTED_CONTENT = (
    "The encrypted content for item {item_id} could not be verified. "
    "Reason: Encrypted content could not be decrypted or parsed."
)
BAD_ENCRYPTED_CONTENT_CODE = "invalid_encrypted_content"
# A tool_choice naming a tool that `tools` does not declare, type invalid_request_error, param
# "tool_choice": `Tool choice 'image_generation' not found in 'tools' parameter.` is quoted in
# gateway and SDK fixes (e.g. the @ai-sdk/openai `allowedTools` changeset in vercel/ai).
# Confirmed for built-in tool types; that a function's name fills the quotes is our reading.
TOOL_CHOICE_NOT_FOUND = "Tool choice '{name}' not found in 'tools' parameter."

# Items a model turn is made of; a reasoning item must be followed by one of these (O6).
CALL_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "mcp_call",
        "tool_search_call",
    }
)


ItemCheck = Callable[[list[Item], bool, ResponseIds], ApiError | None]


def check_request(
    body: Any, ids: ResponseIds, earlier: Sequence[Item] | None = None
) -> ApiError | None:
    """The first error the real API reports for this request, or None. `earlier`: the items of
    the stored chain its `previous_response_id` continues (None: no such chain is stored)."""
    problem = model_given(body) or previous_response_unknown(body, earlier)
    for request_check in (input_given, tools_listed, tool_choice_declared):
        problem = problem or request_check(body)
    if problem is not None:
        return problem
    items = input_items(body)
    store = body.get("store", True) is not False
    # The fields are judged on what this request sends (their paths are `input[N]`); pairing
    # on the whole conversation, the stored chain included (a lone function_call_output
    # answers a call the previous response made).
    whole = [*(earlier or ()), *items]
    checks: Sequence[tuple[ItemCheck, list[Item]]] = (
        (item_field_types, items),
        (item_fields_present, items),
        (reasoning_persisted, items),
        (encrypted_content_intact, items),
        (reasoning_pairs_kept, whole),
        (calls_answered, whole),
    )
    for item_check, judged in checks:
        problem = item_check(judged, store, ids)
        if problem is not None:
            return problem
    return None


def input_items(body: Mapping[str, Any]) -> list[Item]:
    raw = body.get("input")
    if not isinstance(raw, list):
        return []
    return [item for item in raw if isinstance(item, Mapping)]


def model_given(body: Mapping[str, Any]) -> ApiError | None:
    # Same form as the other missing parameters; the Responses wording for `model` itself is
    # not quoted in a public report (unconfirmed; Chat Completions words it differently).
    return None if body.get("model") else missing("model")


def previous_response_unknown(
    body: Mapping[str, Any], earlier: Sequence[Item] | None
) -> ApiError | None:
    """O4: `previous_response_id` names no response this run stored."""
    previous = body.get("previous_response_id")
    if not previous or earlier is not None:
        return None
    return invalid(
        PREVIOUS_NOT_FOUND.format(response_id=previous),
        rule="O4",
        param="previous_response_id",
        code=PREVIOUS_NOT_FOUND_CODE,
    )


def input_given(body: Mapping[str, Any]) -> ApiError | None:
    # A stored prompt or conversation can stand in for `input`; otherwise it is required.
    # The wording follows the missing-parameter form (unconfirmed for `input` itself).
    if body.get("input") is not None or body.get("prompt") or body.get("conversation"):
        return None
    return missing("input")


def tools_listed(body: Mapping[str, Any]) -> ApiError | None:
    tools = body.get("tools")
    if tools is None or isinstance(tools, list):
        return None
    return wrong_type("tools", "an array", tools)


def tool_choice_declared(body: Mapping[str, Any]) -> ApiError | None:
    choice = body.get("tool_choice")
    if not isinstance(choice, Mapping) or choice.get("type") != "function":
        return None
    name = choice.get("name")
    if name in declared_functions(body):
        return None
    return invalid(
        TOOL_CHOICE_NOT_FOUND.format(name=name),
        rule="tool_choice_unknown_tool",
        param="tool_choice",
    )


def declared_functions(body: Mapping[str, Any]) -> set[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return set()
    return {
        t["name"]
        for t in tools
        if isinstance(t, Mapping) and t.get("type") == "function" and text_of(t.get("name"))
    }


_REQUIRED_FIELDS = {
    "reasoning": ("id", "summary"),
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id", "output"),
}


# Fields the checks below compare or look up: a string when present.
_STRING_FIELDS = ("type", "id", "call_id", "name", "role")


def item_field_types(items: list[Item], store: bool, ids: ResponseIds) -> ApiError | None:
    for n, item in enumerate(items):
        for field in _STRING_FIELDS:
            value = item.get(field)
            if value is not None and not isinstance(value, str):
                return wrong_type(f"input[{n}].{field}", "a string", value)
    return None


def item_fields_present(items: list[Item], store: bool, ids: ResponseIds) -> ApiError | None:
    """`Missing required parameter: 'input[N].id'.` and the like (openai/codex#6926)."""
    for n, item in enumerate(items):
        for field in _REQUIRED_FIELDS.get(str(item.get("type")), ()):
            if item.get(field) is None:
                return missing(f"input[{n}].{field}")
    return None


def reasoning_persisted(items: list[Item], store: bool, ids: ResponseIds) -> ApiError | None:
    """O3: under store:false a reasoning item must carry its blob; its id alone is a lookup of
    something never kept. With store:true ours would be found; foreign ones cannot be judged."""
    if store:
        return None
    for item in items:
        if item.get("type") == "reasoning" and not item.get("encrypted_content"):
            return invalid(
                ITEM_NOT_PERSISTED.format(item_id=item.get("id")),
                rule="O3",
                param="input",
                status=404,
            )
    return None


def encrypted_content_intact(items: list[Item], store: bool, ids: ResponseIds) -> ApiError | None:
    """A blob we minted must come back byte for byte, on the item it was minted for."""
    for item in items:
        blob = item.get("encrypted_content")
        if item.get("type") != "reasoning" or not isinstance(blob, str):
            continue
        if not _blob_intact(item.get("id"), blob, ids):
            return ApiError(
                status=400,
                message=BAD_ENCRYPTED_CONTENT.format(item_id=item.get("id")),
                kind=INVALID_REQUEST,
                code=BAD_ENCRYPTED_CONTENT_CODE,
                rule="invalid_encrypted_content",
            )
    return None


def _blob_intact(item_id: Any, blob: str, ids: ResponseIds) -> bool:
    own = ids.read(item_id)
    if own is not None and own.kind == "rs":
        expected = ids.encrypted_content(str(item_id), own.key.created)
        return decode_b64(blob) == decode_b64(expected)
    # Not our id: a real API's blob is accepted; one of ours moved to another id is not.
    return verify(REASONING_TOKEN_KIND, str(item_id), token_payload(blob)) is not Verdict.TAMPERED


def reasoning_pairs_kept(items: list[Item], store: bool, ids: ResponseIds) -> ApiError | None:
    """O6 then O5, in input order: a reasoning item needs the item it produced right after
    it, and an item we minted after reasoning needs that reasoning item before it."""
    for n, item in enumerate(items):
        if item.get("type") == "reasoning":
            problem = _follower_present(item, items[n + 1] if n + 1 < len(items) else None, ids)
        else:
            problem = _reasoning_present(item, items[:n], ids)
        if problem is not None:
            return problem
    return None


def _follower_present(item: Item, following: Item | None, ids: ResponseIds) -> ApiError | None:
    error = invalid(MISSING_FOLLOWER.format(item_id=item.get("id")), rule="O6", param="input")
    # Seen in realwire: a reasoning item followed by an assistant message without an id (the
    # client rebuilt it from text) is rejected; followed by a function_call without an id
    # (llm strips fc ids) it is accepted. So the follower must be a call, or an output message
    # that still has its id.
    if following is None or not _can_follow_reasoning(following):
        return error
    own = ids.read(item.get("id"))
    follower_id = following.get("id")
    if own is not None and follower_id and follower_id != ids.follower_of(own.key):
        return error
    return None


def _can_follow_reasoning(item: Item) -> bool:
    if item.get("type") in CALL_TYPES:
        return True
    is_message = item.get("type") in (None, "message")
    return is_message and item.get("role") == "assistant" and bool(item.get("id"))


def _reasoning_present(item: Item, before: list[Item], ids: ResponseIds) -> ApiError | None:
    own = ids.read(item.get("id"))
    if own is None or own.kind not in ("fc", "msg") or not own.key.reasoning:
        return None
    reasoning_id = ids.reasoning_of(own.key)
    if any(b.get("type") == "reasoning" and b.get("id") == reasoning_id for b in before):
        return None
    item_type = item.get("type") or "message"
    message = MISSING_REASONING.format(
        item_id=item.get("id"), item_type=item_type, reasoning_id=reasoning_id
    )
    return invalid(message, rule="O5", param="input")


def calls_answered(items: list[Item], store: bool, ids: ResponseIds) -> ApiError | None:
    """O1 and O2, in input order: each function_call has a function_call_output with its
    call_id after it, and each output a call before it."""
    last_output = {
        text_of(i.get("call_id")): n
        for n, i in enumerate(items)
        if i.get("type") == "function_call_output"
    }
    calls_before: set[str | None] = set()
    for n, item in enumerate(items):
        call_id = text_of(item.get("call_id"))
        if item.get("type") == "function_call":
            if last_output.get(call_id, -1) <= n:
                return invalid(NO_TOOL_OUTPUT.format(call_id=call_id), rule="O1", param="input")
            calls_before.add(call_id)
        if item.get("type") == "function_call_output" and call_id not in calls_before:
            return invalid(NO_TOOL_CALL.format(call_id=call_id), rule="O2", param="input")
    return None
