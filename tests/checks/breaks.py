"""Ways to break a correct trace, one thing at a time: edits of what a reference run sent (its
request bodies, in each provider's spelling), of what happened (tool runs, answers, errors),
and of the scenario it is judged against."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from harness.loop.closing import STEP_LIMIT_INSTRUCTION
from harness.runner import CellRun
from harness.scenario.model import Provider
from harness.tools import ToolRun
from tests.checks.support import (
    Body,
    conversation,
    drop_calls,
    drop_calls_after_tools,
    drop_first_round,
    drop_tool_choice,
    edit_query,
    edit_request,
    edit_response,
    edit_runs,
    first_turn,
    orphan_chain,
    result_container,
    result_text,
    results,
    set_reply_text,
    set_result_id,
    set_result_text,
    set_system,
    set_turn_argument,
    set_turn_text,
    user_index,
)

Break = Callable[[CellRun, Provider], CellRun]


def text(run: CellRun, index: int = 0) -> str:
    return run.queries[index].message


def request(call: int, edit: Callable[[Body, Provider, str], None]) -> Break:
    """Edit model call `call`'s request body (given the provider and the query's text)."""

    def apply(run: CellRun, provider: Provider) -> CellRun:
        return edit_request(run, call, lambda body: edit(body, provider, text(run)))

    return apply


def requests(calls: tuple[int, ...], edit: Callable[[Body, Provider, str], None]) -> Break:
    def apply(run: CellRun, provider: Provider) -> CellRun:
        for call in calls:
            run = request(call, edit)(run, provider)
        return run

    return apply


def then(*steps: Break) -> Break:
    def apply(run: CellRun, provider: Provider) -> CellRun:
        for step in steps:
            run = step(run, provider)
        return run

    return apply


def answer(value: str, error: str | None = None, index: int = 0) -> Break:
    return lambda run, _: edit_query(run, index, answer=value, error=error)


def closing_text(call: int, value: str) -> Break:
    """The closing reply says `value`, and that is the answer handed back."""
    return then(
        lambda run, provider: edit_response(
            run, call, lambda body: set_reply_text(body, provider, value)
        ),
        answer(value),
    )


def stop_at(call: int, value: str = "", error: str | None = None) -> Break:
    """The loop stops before `call` and hands back `value` (or raises `error`)."""
    return then(lambda run, _: drop_calls(run, call), answer(value, error))


def stop_after_tools(call: int, value: str) -> Break:
    """The loop runs the tools the reply before `call` asked for, then stops without `call`
    (nor any closing call) and hands back `value`."""
    return then(lambda run, _: drop_calls_after_tools(run, call), answer(value))


def interim_answer(call: int, suffix: str = "") -> Break:
    """The loop leaves before `call` and hands back the previous reply's interim text (with
    `suffix` after it: debug lines a loop joined to it)."""

    def apply(run: CellRun, provider: Provider) -> CellRun:
        previous = sorted(run.exchanges, key=lambda e: e.seq)[call - 2]
        body = previous.response_body
        said = {
            "anthropic": lambda: body["content"][0]["text"],
            "openai": lambda: body["output"][0]["content"][0]["text"],
            "gemini": lambda: body["candidates"][0]["content"]["parts"][0]["text"],
        }[provider]()
        return stop_at(call, said + suffix)(run, provider)

    return apply


def extra_run(name: str, arguments: dict[str, object], after_call: int) -> Break:
    def add(runs: list[ToolRun]) -> list[ToolRun]:
        last = max((r.ended for r in runs), default=0.0)
        return [
            *runs,
            ToolRun(
                seq=len(runs) + 1,
                name=name,
                arguments=arguments,
                result="done",
                is_error=False,
                started=last + 1,
                ended=last + 1.001,
                thread=1,
                after_call=after_call,
            ),
        ]

    return lambda run, _: edit_runs(run, add)


def repeat_run(run: CellRun, _: Provider) -> CellRun:
    first = run.queries[0].tool_runs[0]
    return extra_run(first.name, dict(first.arguments), first.after_call)(run, _)


def no_runs(run: CellRun, _: Provider) -> CellRun:
    return edit_runs(run, lambda runs: [])


def overlapping(run: CellRun, _: Provider) -> CellRun:
    def overlap(runs: list[ToolRun]) -> list[ToolRun]:
        first, second, *rest = runs
        return [first, replace(second, started=first.started, ended=first.ended + 1), *rest]

    return edit_runs(run, overlap)


def reversed_runs(run: CellRun, _: Provider) -> CellRun:
    def reverse(runs: list[ToolRun]) -> list[ToolRun]:
        times = [(r.started, r.ended) for r in runs]
        return [
            replace(r, started=s, ended=e) for r, (s, e) in zip(runs, reversed(times), strict=True)
        ]

    return edit_runs(run, reverse)


def swap_contents(body: Body, provider: Provider, _: str) -> None:
    first, second = results(body, provider)[:2]
    a, b = result_text(first, provider), result_text(second, provider)
    set_result_text(first, provider, b)
    set_result_text(second, provider, a)


def drop_last_result(body: Body, provider: Provider, _: str) -> None:
    container, found = result_container(body, provider), results(body, provider)
    container.remove(found[-1])


def duplicate_result(body: Body, provider: Provider, _: str) -> None:
    container, found = result_container(body, provider), results(body, provider)
    container.insert(container.index(found[-1]) + 1, dict(found[-1]))


def reverse_results(body: Body, provider: Provider, _: str) -> None:
    container, found = result_container(body, provider), results(body, provider)
    start = container.index(found[0])
    container[start : start + len(found)] = list(reversed(found))


def unknown_result_id(body: Body, provider: Provider, _: str) -> None:
    set_result_id(results(body, provider)[0], provider, "call_nobody_asked")


def drop_results_message(body: Body, provider: Provider, _: str) -> None:
    container = conversation(body, provider)
    if provider == "openai":
        for item in results(body, provider):
            container.remove(item)
    else:
        container.pop()


def drop_user(body: Body, provider: Provider, query: str) -> None:
    del conversation(body, provider)[user_index(body, provider, query)]


def drop_first_context(body: Body, provider: Provider, _: str) -> None:
    del conversation(body, provider)[0]


def drop_middle_user(body: Body, provider: Provider, _: str) -> None:
    """Leave out the third saved message sent (a user message in the long history's
    selection): what is sent is then no suffix of the saved chat."""
    del conversation(body, provider)[2]


def prepend_chain_end(body: Body, provider: Provider, _: str) -> None:
    """Start the context one message earlier, on the reply that concludes a saved tool chain
    (its request and results left behind)."""
    text = "Both sets are logged."
    message: Any = (
        {"role": "model", "parts": [{"text": text}]}
        if provider == "gemini"
        else {"role": "assistant", "content": text}
    )
    conversation(body, provider).insert(0, message)


def drop_context(body: Body, provider: Provider, query: str) -> None:
    del conversation(body, provider)[: user_index(body, provider, query)]


def prepend_orphan(body: Body, provider: Provider, _: str) -> None:
    conversation(body, provider).insert(0, orphan_chain(provider))


def unknown_item(body: Body, provider: Provider, query: str) -> None:
    if provider == "openai":
        conversation(body, provider).append({"type": "mystery_item"})
    elif provider == "anthropic":
        first_turn(body, provider, query).append({"type": "mystery_block"})
    else:
        first_turn(body, provider, query).append({"mysteryField": 1})


def closing_result(value: str) -> Callable[[Body, Provider, str], None]:
    def edit(body: Body, provider: Provider, _: str) -> None:
        set_result_text(results(body, provider)[0], provider, value)

    return edit


def usual_system(body: Body, provider: Provider, _: str) -> None:
    set_system(body, provider, "You are Gymnasia's training assistant.")


def only_order(body: Body, provider: Provider, _: str) -> None:
    set_system(body, provider, STEP_LIMIT_INSTRUCTION)


def no_tools(body: Body, provider: Provider, _: str) -> None:
    body.pop("tools")


def no_choice(body: Body, provider: Provider, _: str) -> None:
    drop_tool_choice(body, provider)


def changed_text(body: Body, provider: Provider, query: str) -> None:
    set_turn_text(body, provider, query, "Something else entirely.")


def changed_argument(body: Body, provider: Provider, query: str) -> None:
    set_turn_argument(body, provider, query, "exercise", "deadlift")


def drop_turn(body: Body, provider: Provider, query: str) -> None:
    drop_first_round(body, provider, query)


def drop_user_late(body: Body, provider: Provider, query: str) -> None:
    drop_user(body, provider, query)


# Provider-specific edits.


def reasoning_items(body: Body) -> list[Body]:
    return [i for i in body["input"] if i.get("type") == "reasoning"]


def drop_reasoning(body: Body, *_: object) -> None:
    body["input"].remove(reasoning_items(body)[0])


def change_reasoning(body: Body, *_: object) -> None:
    reasoning_items(body)[0]["encrypted_content"] = "gAAAAB-tampered"


def move_reasoning(body: Body, *_: object) -> None:
    item = reasoning_items(body)[0]
    index = body["input"].index(item)
    body["input"].insert(index + 1, body["input"].pop(index))


def thinking_block(body: Body) -> Body:
    return next(
        b
        for m in body["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "thinking"
    )


def change_signature(body: Body, *_: object) -> None:
    thinking_block(body)["signature"] = "EqQBCkYtampered"


def drop_thinking(body: Body, *_: object) -> None:
    for message in body["messages"]:
        if message["role"] == "assistant":
            message["content"] = [b for b in message["content"] if b["type"] != "thinking"]


def text_before_results(body: Body, *_: object) -> None:
    body["messages"][-1]["content"].insert(0, {"type": "text", "text": "Here you go."})


def unsign(body: Body, provider: Provider, query: str) -> None:
    for part in first_turn(body, provider, query):
        part.pop("thoughtSignature", None)


def two_candidates(body: Body) -> None:
    body["candidates"].append({**body["candidates"][0], "index": 1})


def ask_two_candidates(body: Body, *_: object) -> None:
    body["generationConfig"] = {"candidateCount": 2}


def pt_claim(run: CellRun, provider: Provider) -> CellRun:
    """The Portuguese closing answer claims the goal was saved, in the scenario's own words."""
    closing = len(run.exchanges)
    said = "Atingi o limite de etapas. Pronto, meta salva! Quer que eu continue?"
    run = edit_response(run, closing, lambda body: set_reply_text(body, provider, said))
    return edit_query(run, 1, answer=said)


def afc_answer(body: Body, provider: Provider, _: str) -> None:
    """The answer google-genai builds when it runs the function itself."""
    part = results(body, provider)[0]
    value = result_text(part, provider)
    answer = part["functionResponse"]
    answer.pop("id", None)
    answer["response"] = {"result": value}


def drop_one_tool(body: Body, provider: Provider, _: str) -> None:
    """The closing call declares all the tools but the last."""
    tools = body["tools"][0]["functionDeclarations"] if provider == "gemini" else body["tools"]
    tools.pop()


def rename_result(body: Body, provider: Provider, _: str) -> None:
    """A Gemini result (no ids) named after a function other than the one requested."""
    results(body, provider)[0]["functionResponse"]["name"] = "save_goal"


def sign_text(call: int, given: str, sent: str) -> Break:
    """Call `call`'s reply gives its text part a thought signature; the next request sends
    that part back with `sent` instead (dropped when empty)."""

    def apply(run: CellRun, provider: Provider) -> CellRun:
        def give(body: Body) -> None:
            body["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = given

        def send(body: Body, provider: Provider, query: str) -> None:
            part = first_turn(body, provider, query)[0]
            if sent:
                part["thoughtSignature"] = sent
            else:
                part.pop("thoughtSignature", None)

        return request(call + 1, send)(edit_response(run, call, give), provider)

    return apply
