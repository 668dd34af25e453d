"""Wire that could not be read: every `ParseProblem` the parsers noted becomes a finding, so
nothing is dropped silently (an unknown item type may be exactly what breaks a loop)."""

from __future__ import annotations

from collections.abc import Iterator

from harness.checks.input import CheckInput
from harness.checks.registry import rule
from harness.findings import Finding


def _any_exchange(data: CheckInput) -> bool:
    return bool(data.trace.calls)


@rule(
    "wire.parse",
    title="Readable wire",
    description="Every request and response parses in its provider's format: no unknown item "
    "types, malformed bodies or broken streams.",
    needs="wire",
    applies=_any_exchange,
)
def wire_is_readable(data: CheckInput) -> Iterator[Finding]:
    """Exchanges that are no model call (a token count, a model list) are skipped and named
    elsewhere (`harness audit` lists them), not failures; nor is a call whose exchange ended
    in a transport error (what came back is incomplete, not in a wrong format; the other
    rules judge what the loop did about it)."""
    for problem in data.trace.problems:
        if problem.side == "exchange":
            continue
        yield Finding(
            rule="wire.parse",
            path=problem.path,
            message=problem.message,
            expected="a model call",
            actual=problem.side,
        )
    for call in data.trace.calls:
        if call.number in data.interrupted:
            continue
        for problem in call.problems:
            where = problem.path if problem.side == "request" else f"{problem.side}.{problem.path}"
            yield Finding(
                rule="wire.parse",
                call=call.number,
                path=where.rstrip("."),
                message=problem.message,
                expected=f"a valid {call.request.api} {problem.side}",
                actual="unreadable",
            )
