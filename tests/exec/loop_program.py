"""An exec wrapper around an in-process loop: the program `harness run --exec` starts.

    python -m tests.exec.loop_program [MODULE:FUNCTION]     (default: the reference loop)

It reads the query from stdin, rebuilds the `LoopCall` from it — official SDK clients on the
query's base_url and api_key, tools that POST to its tools_url — runs the loop and prints the
answer document. Nothing is shared with the harness process but the contract, so the same cell
judged through it and in process must get the same verdicts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import httpx2

from harness.exec.documents import answer_document, messages_from_json, problems
from harness.loop.clients import make_clients
from harness.loop.contract import LoopCall, LoopResult, ToolError, ToolSpec
from harness.runner import REFERENCE_LOOP, call_loop, load_loop


def http_tool(tools_url: str, tool: Mapping[str, Any], http: httpx2.Client) -> ToolSpec:
    def run(arguments: Mapping[str, Any]) -> str:
        reply = http.post(f"{tools_url}{tool['name']}", json=dict(arguments))
        body = reply.json()
        if reply.status_code != 200:
            raise RuntimeError(f"tool endpoint {reply.status_code}: {body}")
        if "error" in body:
            raise ToolError(body["error"])
        return str(body["result"])

    return ToolSpec(
        name=tool["name"],
        description=tool["description"],
        parameters=tool["parameters"],
        effect=tool["effect"],
        run=run,
    )


def loop_call(query: Mapping[str, Any], http: httpx2.Client) -> LoopCall:
    clients = make_clients(query["provider"], base_url=query["base_url"], api_key=query["api_key"])
    return LoopCall(
        provider=query["provider"],
        client=clients.sync,
        async_client=clients.async_,
        base_url=query["base_url"],
        api_key=query["api_key"],
        model=query["model"],
        system=query["system"],
        history=messages_from_json(query["history"]),
        message=query["message"],
        tools=tuple(http_tool(query["tools_url"], t, http) for t in query["tools"]),
        max_rounds=query["max_rounds"],
        stream=query["stream"],
        request_size_limit=query["request_size_limit"],
    )


def main(argv: list[str]) -> int:
    query = json.loads(sys.stdin.buffer.read())
    wrong = problems("query", query)
    if wrong:
        print(f"the query does not match query.json: {wrong}", file=sys.stderr)
        return 2
    loop = load_loop(argv[0] if argv else REFERENCE_LOOP)
    with httpx2.Client(timeout=30) as http:
        result, error, _ = call_loop(loop, loop_call(query, http))
    if result is None:
        print(error, file=sys.stderr)
        return 1
    document = answer_document(
        LoopResult(answer=result.answer, chat=result.chat, error=result.error)
    )
    sys.stdout.write(json.dumps(document, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
