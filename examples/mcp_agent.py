"""An agent that takes its tools from an MCP server — here the harness's — and talks to Claude
with the official Anthropic SDK. It is a program, not a function: it speaks the harness's
language-neutral loop contract (one query as JSON on stdin, one answer as JSON on stdout), so
it is checked as any out-of-process agent is:

    harness run --provider anthropic --exec 'python examples/mcp_agent.py'

It knows nothing of the harness but that contract: its tools come from an MCP client on the
query's `mcp_url` (also in HARNESS_MCP_URL), the model from the query's `base_url` and
`api_key`. The loop is the article's: at most `max_rounds` tool rounds, the tools one at a
time in the model's order; when the budget is spent, each pending request gets the
not-executed result and one closing call with tool choice none and the step-limit order in the
system prompt. Anthropic only: another provider gets an error answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import anthropic
from mcp import Client

CONTEXT_WINDOW = 20  # saved messages resent per query, cut at a user message
MAX_TOKENS = 4096
NOT_EXECUTED = "Not executed: the step limit for this answer was reached."
LIMIT_ORDER = (
    "You have reached the step limit for this answer, so no more tools can be run now. "
    "Answer with what you already know, explain the step limit, say what was left undone, "
    "and ask whether to continue. A tool request whose result says it was not executed did "
    "not happen: never say that it did."
)

Json = dict[str, Any]


def main() -> int:
    query = json.loads(sys.stdin.buffer.read())
    answer = asyncio.run(answer_query(query))
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    return 0


async def answer_query(query: Json) -> Json:
    chat: list[Json] = [*query["history"], {"role": "user", "text": query["message"]}]
    if query["provider"] != "anthropic":
        return {"answer": "", "chat": chat, "error": "this example speaks only Anthropic"}
    mcp_url = query.get("mcp_url") or os.environ["HARNESS_MCP_URL"]
    model = anthropic.AsyncAnthropic(base_url=query["base_url"], api_key=query["api_key"])
    try:
        async with Client(mcp_url) as tools:
            return await Agent(query, model, tools, chat).run()
    except anthropic.APIError as exc:  # reported, never shown as the answer (L15)
        return {"answer": "", "chat": chat, "error": f"{type(exc).__name__}: {exc}"}


class Agent:
    def __init__(self, query: Json, model: Any, tools: Client, chat: list[Json]) -> None:
        self.query, self.model, self.tools, self.chat = query, model, tools, chat
        self.messages = [*to_anthropic(selected(query["history"])), user(query["message"])]

    async def run(self) -> Json:
        listed = await self.tools.list_tools()
        declared = [
            {"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
            for t in listed.tools
        ]
        budget = self.query["max_rounds"]
        for number in range(1, budget + 2):  # at most max_rounds + 1 ordinary calls
            reply = await self.ask(self.query["system"], declared, closing=False)
            requests = [b for b in reply.content if b.type == "tool_use"]
            if not requests:  # no tool requested: this text is the answer
                return self.finish(text_of(reply))
            if number > budget:  # the budget is spent: answer the requests, do not run them
                self.answered(requests, [(NOT_EXECUTED, False)] * len(requests))
                break
            self.answered(requests, [await self.run_tool(b.name, b.input) for b in requests])
        system = f"{self.query['system'].rstrip()}\n\n{LIMIT_ORDER}".strip()
        return self.finish(text_of(await self.ask(system, declared, closing=True)))

    async def ask(self, system: str, declared: list[Json], *, closing: bool) -> Any:
        params: Json = {"model": self.query["model"], "max_tokens": MAX_TOKENS}
        params.update(system=system, messages=self.messages, tools=declared)
        if closing:
            params["tool_choice"] = {"type": "none"}
        if self.query["stream"]:
            async with self.model.messages.stream(**params) as stream:
                reply = await stream.get_final_message()
        else:
            reply = await self.model.messages.create(**params)
        if not closing:  # the turn goes back exactly as it came (thinking blocks included)
            content = [b.model_dump(mode="json", exclude_none=True) for b in reply.content]
            self.messages.append({"role": "assistant", "content": content})
            calls = [
                {"id": b.id, "name": b.name, "arguments": b.input}
                for b in reply.content
                if b.type == "tool_use"
            ]
            self.chat.append({"role": "assistant", "text": text_of(reply), "tool_calls": calls})
        return reply

    async def run_tool(self, name: str, arguments: Json) -> tuple[str, bool]:
        result = await self.tools.call_tool(name, arguments)
        text = "".join(getattr(part, "text", "") for part in result.content)
        return text, bool(result.is_error)

    def answered(self, requests: list[Any], results: list[tuple[str, bool]]) -> None:
        blocks = []
        for request, (text, is_error) in zip(requests, results, strict=True):
            blocks.append(
                {"type": "tool_result", "tool_use_id": request.id, "content": text}
                | ({"is_error": True} if is_error else {})
            )
            self.chat.append(
                {
                    "role": "tool",
                    "call_id": request.id,
                    "name": request.name,
                    "content": text,
                    "is_error": is_error,
                }
            )
        self.messages.append({"role": "user", "content": blocks})

    def finish(self, text: str) -> Json:
        if not text.strip():
            return {"answer": "", "chat": self.chat, "error": "the model replied with no text"}
        if not self.chat[-1].get("tool_calls") and self.chat[-1]["role"] == "assistant":
            self.chat[-1] = {"role": "assistant", "text": text, "tool_calls": []}
        else:
            self.chat.append({"role": "assistant", "text": text, "tool_calls": []})
        return {"answer": text, "chat": self.chat, "error": None}


def selected(history: list[Json]) -> list[Json]:
    """The last CONTEXT_WINDOW saved messages, starting at a user message (no chain cut)."""
    picked = history[-CONTEXT_WINDOW:]
    while picked and picked[0]["role"] != "user":
        picked = picked[1:]
    return picked


def to_anthropic(saved: list[Json]) -> list[Json]:
    """Saved messages as Anthropic messages; the results of one turn become one user message."""
    out: list[Json] = []
    for message in saved:
        if message["role"] == "user":
            out.append(user(message["text"]))
        elif message["role"] == "assistant":
            blocks = [{"type": "text", "text": message["text"]}] if message["text"] else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in message["tool_calls"]
            ]
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        else:
            block = {"type": "tool_result", "tool_use_id": message["call_id"]}
            block |= {"content": message["content"]}
            block |= {"is_error": True} if message["is_error"] else {}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out


def user(text: str) -> Json:
    return {"role": "user", "content": text}


def text_of(reply: Any) -> str:
    return "".join(b.text for b in reply.content if b.type == "text")


if __name__ == "__main__":
    sys.exit(main())
