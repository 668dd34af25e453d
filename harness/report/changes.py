"""What changed between two results files — how a cassette refresh or a loop change is
reviewed: new failures, fixes, changed endings, and drift in the requests the loop sent or the
responses it got (compared with deepdiff after the cassette drift normalisation, so fresh ids
and opaque tokens are not reported as changes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.cassettes.drift import json_path, normalise
from harness.results.codec import to_json
from harness.results.model import CallRecord, CellResult, FindingRecord, Results, RunMeta

MAX_DRIFT_LINES = 12
MAX_VALUE = 100  # characters of a changed value shown
# Response fields that differ on every recording and say nothing about the loop.
VOLATILE_RESPONSE_KEYS = ("id", "usage", "streamed")


@dataclass(frozen=True, kw_only=True)
class RuleChange:
    cell_id: str
    rule: str
    message: str


@dataclass(frozen=True, kw_only=True)
class EndingChange:
    cell_id: str
    query: int
    before: str
    after: str


@dataclass(frozen=True, kw_only=True)
class CallDrift:
    cell_id: str
    call: int | None  # None: the number of calls changed
    side: str  # request | response | calls
    lines: tuple[str, ...]
    total: int


@dataclass(frozen=True, kw_only=True)
class Changes:
    previous: RunMeta
    new_failures: list[RuleChange]
    fixes: list[RuleChange]
    endings: list[EndingChange]
    drift: list[CallDrift]
    added: list[str]
    removed: list[str]

    @property
    def empty(self) -> bool:
        return (
            not (self.new_failures or self.fixes or self.endings or self.drift or self.added)
            and not self.removed
        )


def compare(previous: Results, current: Results) -> Changes:
    before = {c.id: c for c in previous.cells}
    after = {c.id: c for c in current.cells}
    both = [i for i in after if i in before]
    new_failures = [change for i in after for change in _failing(after[i], before.get(i), new=True)]
    fixes = [change for i in both for change in _failing(before[i], after[i], new=False)]
    return Changes(
        previous=previous.run,
        new_failures=new_failures,
        fixes=fixes,
        endings=[e for i in both for e in _endings(before[i], after[i])],
        drift=[d for i in both for d in cell_drift(before[i], after[i])],
        added=[i for i in after if i not in before],
        removed=[i for i in before if i not in after],
    )


def _failing(cell: CellResult, other: CellResult | None, *, new: bool) -> list[RuleChange]:
    """Rules `cell` fails that `other` does not (new failures), or that it no longer does."""
    gone = _rules(other.findings) if other is not None else set()
    out: dict[str, RuleChange] = {}
    for finding in cell.findings:
        if finding.rule not in gone and finding.rule not in out:
            message = finding.message if new else f"was: {finding.message}"
            out[finding.rule] = RuleChange(cell_id=cell.id, rule=finding.rule, message=message)
    return list(out.values())


def _rules(findings: Iterable[FindingRecord]) -> set[str]:
    return {f.rule for f in findings}


def _endings(before: CellResult, after: CellResult) -> list[EndingChange]:
    old = {q.index: q.ending for q in before.queries}
    return [
        EndingChange(cell_id=after.id, query=q.index, before=old[q.index], after=q.ending)
        for q in after.queries
        if q.index in old and old[q.index] != q.ending
    ]


def cell_drift(before: CellResult, after: CellResult) -> list[CallDrift]:
    out: list[CallDrift] = []
    if len(before.calls) != len(after.calls):
        out.append(
            CallDrift(
                cell_id=after.id,
                call=None,
                side="calls",
                lines=(f"{len(before.calls)} model call(s) before, {len(after.calls)} now",),
                total=1,
            )
        )
    for old, new in zip(before.calls, after.calls, strict=False):
        for side, a, b in (
            ("request", _request_body(before, old), _request_body(after, new)),
            ("response", _response(old), _response(new)),
        ):
            lines = _diff(a, b)
            if lines:
                out.append(
                    CallDrift(
                        cell_id=after.id,
                        call=new.number,
                        side=side,
                        lines=tuple(lines[:MAX_DRIFT_LINES]),
                        total=len(lines),
                    )
                )
    return out


def _request_body(cell: CellResult, call: CallRecord) -> Any:
    """The request as sent (raw); the neutral one when the raw exchange is missing."""
    raw = next((e for e in cell.exchanges if e.seq == call.exchange), None)
    return raw.request_body if raw is not None else to_json(call.request)


def _response(call: CallRecord) -> Any:
    data: dict[str, Any] = to_json(call.response)
    for key in VOLATILE_RESPONSE_KEYS:
        data.pop(key, None)
    # An opaque token's length changes with every recording; its presence and kind do not.
    for item in data["opaque"]:
        item.pop("token_chars", None)
    return data


def _diff(old: Any, new: Any) -> list[str]:
    """Readable differences, in document order, after normalising ids and opaque tokens."""
    a, b = normalise(old), normalise(new)
    if a == b:
        return []
    from deepdiff import DeepDiff

    # threshold 0: always name the keys that differ, never "the whole body changed"
    diff = DeepDiff(a, b, verbose_level=2, threshold_to_diff_deeper=0)
    lines = [
        (json_path(path), _line(kind, json_path(path), detail))
        for kind, entries in diff.items()
        for path, detail in dict(entries).items()
    ]
    return [line for _, line in sorted(lines)]


def _line(kind: str, path: str, detail: Any) -> str:
    if kind in ("values_changed", "type_changes"):
        return (
            f"{path}: was {_short(detail.get('old_value'))}, now {_short(detail.get('new_value'))}"
        )
    if kind in ("dictionary_item_added", "iterable_item_added"):
        return f"{path}: added {_short(detail)}"
    if kind in ("dictionary_item_removed", "iterable_item_removed"):
        return f"{path}: removed (was {_short(detail)})"
    return f"{path}: {kind.replace('_', ' ')}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"
