"""A loop that shows the person the provider's raw error.

The everyday `try: ... except Exception as exc: return f"Error: {exc}"` around an agent run:
when the SDK gives up after its retries, the person reads the SDK's exception text — status
line and JSON error body included (`Error code: 429 - {'type': 'error', ...}`). Everything
else is the reference loop's."""

from __future__ import annotations

from harness.loop.adapters import ProviderCallError
from harness.loop.contract import LoopCall, LoopResult
from tests.corpus.kit import Query, answer


def raw_error_as_answer(call: LoopCall) -> LoopResult:
    query = Query(call)
    try:
        return answer(query)
    except ProviderCallError as exc:
        return query.answered(f"Error: {exc.__cause__ or exc}")
