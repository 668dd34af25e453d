"""`harness run --exec COMMAND`: a loop that is a program. For each user message it serves the
query's tools, starts COMMAND with the query on stdin and the SDKs' variables pointing at the
cell's run, and reads the answer from stdout. Everything else — runner, sources, checks,
reports, recording — sees an ordinary `Loop`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from harness.exec.documents import problems, query_document, result_from_answer
from harness.exec.failure import RULE_BAD_OUTPUT, RULE_FAILED, RULE_TIMEOUT, ExecFailure
from harness.exec.program import MAX_STDOUT_BYTES, Finished, run_program
from harness.exec.toolserver import Served, ToolServer
from harness.loop.contract import LoopCall, LoopResult

DEFAULT_TIMEOUT = 120.0  # seconds per user message
TAIL_LINES = 12  # of stderr, in a finding
TAIL_CHARS = 1500
SHOWN_STDOUT = 200  # characters of stdout quoted when it is not an answer


@dataclass(kw_only=True)
class ExecLoop:
    """The contract's `Loop` for a program: `ExecLoop(command="node agent.mjs")(call)`.
    `close()` stops the tool endpoint (started at the first query)."""

    command: str
    timeout: float = DEFAULT_TIMEOUT
    cwd: str | None = None  # None: the current folder
    tool_server: ToolServer = field(default_factory=ToolServer)

    def __call__(self, call: LoopCall) -> LoopResult:
        with self.tool_server.serving(call.tools) as served:
            query = query_document(call, tools_url=served.tools_url, mcp_url=served.mcp_url)
            wrong = problems("query", query)
            assert not wrong, f"the harness built a query off its own schema: {wrong}"
            finished = run_program(
                self.command,
                json.dumps(query, ensure_ascii=False).encode("utf-8"),
                program_environment(call, served),
                self.timeout,
                self.cwd,
            )
        return self._answer(finished)

    def close(self) -> None:
        self.tool_server.stop()

    def _answer(self, finished: Finished) -> LoopResult:
        tail = stderr_tail(finished.stderr_tail)
        if finished.timed_out:
            raise ExecFailure(
                RULE_TIMEOUT,
                f"`{self.command}` was still running after {self.timeout:g} s (--exec-timeout); "
                f"its process group was killed{tail}",
            )
        if finished.returncode != 0:
            status = finished.returncode or 0
            how = (
                f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
            )
            raise ExecFailure(RULE_FAILED, f"`{self.command}` {how}{tail}")
        return self._read_answer(finished, tail)

    def _read_answer(self, finished: Finished, tail: str) -> LoopResult:
        def bad(why: str) -> ExecFailure:
            return ExecFailure(
                RULE_BAD_OUTPUT, f"`{self.command}` printed no answer document: {why}{tail}"
            )

        if finished.stdout_overflow:
            raise bad(f"stdout is over {MAX_STDOUT_BYTES} bytes")
        try:
            document = json.loads(finished.stdout.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise bad(f"stdout is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except (ValueError, RecursionError) as exc:
            raise bad(
                f"stdout is not one JSON document ({exc}); it began {shown(finished)}"
            ) from None
        wrong = problems("answer", document)
        if wrong:
            more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
            raise bad(f"stdout does not match answer.json: {wrong[0]}{more}")
        return result_from_answer(document)


def program_environment(call: LoopCall, served: Served) -> dict[str, str]:
    """The harness's environment, the SDKs' variables for the cell's run, and the tools."""
    return {
        **os.environ,
        **call.env,
        "HARNESS_TOOLS_URL": served.tools_url,
        "HARNESS_MCP_URL": served.mcp_url,
    }


def stderr_tail(raw: bytes) -> str:
    """The last lines of stderr, bounded, for a finding (empty when there were none)."""
    text = raw.decode("utf-8", "replace").rstrip()
    if not text:
        return "; stderr was empty"
    lines = [line.strip() for line in text.splitlines()[-TAIL_LINES:] if line.strip()]
    tail = " | ".join(lines)[-TAIL_CHARS:]  # one line in a finding
    return f"; stderr ends: {tail}"


def shown(finished: Finished) -> str:
    text = finished.stdout.decode("utf-8", "replace")
    if not text.strip():
        return "empty"
    return repr(text[:SHOWN_STDOUT]) + ("…" if len(text) > SHOWN_STDOUT else "")
