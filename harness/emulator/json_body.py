"""Reading a request body as JSON without letting the body break the reader: syntax errors,
nesting past the limit and numbers Python refuses all come back as a `JsonProblem`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.emulator.limits import MAX_JSON_DEPTH

TOO_DEEP = (
    "harness emulator: the JSON body nests more than {limit} levels deep; the emulator reads "
    "at most {limit} (Google's transcoder limit)"
)
# Python refuses to read an integer of more than 4,300 digits (CVE-2020-10735 guard).
NUMBER_TOO_LONG = "harness emulator: a number in the JSON body is too long to read ({detail})"


@dataclass(frozen=True, kw_only=True)
class JsonProblem:
    """`syntax`: the body is not JSON (the API's own malformed-JSON answer applies); otherwise
    it is JSON past one of the emulator's limits, and `detail` says which."""

    detail: str
    syntax: bool


def load_json(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The decoded body (None when empty), or a `JsonProblem`."""
    if not raw:
        return None
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return JsonProblem(detail=str(exc), syntax=True)
    except RecursionError:
        return JsonProblem(detail=TOO_DEEP.format(limit=max_depth), syntax=False)
    except ValueError as exc:
        return JsonProblem(detail=NUMBER_TOO_LONG.format(detail=str(exc)[:80]), syntax=False)
    if nests_deeper(value, max_depth):
        return JsonProblem(detail=TOO_DEEP.format(limit=max_depth), syntax=False)
    return value


def nests_deeper(value: Any, limit: int) -> bool:
    """True when arrays and objects nest more than `limit` levels (a scalar is level 0).
    Iterative, so any depth is measured without recursion."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth + 1 > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
