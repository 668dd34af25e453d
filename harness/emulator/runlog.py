"""The emulator's per-run log, bounded: what each run sent and how it was answered.

Bounds (numbers in `limits`): the newest `log_entries_per_run` entries of a run; the
`log_runs` runs written to most recently; and `log_bytes` of request bodies over all runs,
the oldest entries dropped first, then whole runs (least recently written first). A run's
newest entry goes only when nothing else is left to drop, and the entry just written never:
the budget is exceeded by at most that one body (itself bounded by the body limit).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from harness.emulator.limits import Limits
from harness.emulator.wire import ApiError, Step


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    """One request a run sent, and how the emulator answered it."""

    seq: int
    api: str
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # secrets removed
    body: Any  # decoded JSON, or the raw text when it was not JSON
    status: int
    error: ApiError | None
    step: Step | None
    fault: str | None = None
    size: int = 0  # the body's size on the wire, in bytes


class RunLog:
    """Thread-safe; `record` and `entries` may be called from any handler thread."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.lock = threading.Lock()
        self.runs: OrderedDict[str, deque[LogEntry]] = OrderedDict()
        self.bytes = 0
        self.seq = 0

    def record(self, run: str, entry_args: dict[str, Any]) -> None:
        with self.lock:
            self.seq += 1
            entries = self.runs.pop(run, None) or deque()
            self.runs[run] = entries  # now the most recently written run
            entries.append(LogEntry(seq=self.seq, **entry_args))
            self.bytes += entries[-1].size
            self._trim(entries)

    def entries(self, run: str) -> list[LogEntry]:
        with self.lock:
            return list(self.runs.get(run, ()))

    def _trim(self, newest: deque[LogEntry]) -> None:
        while len(newest) > self.limits.log_entries_per_run:
            self.bytes -= newest.popleft().size
        while len(self.runs) > self.limits.log_runs:
            _, dropped = self.runs.popitem(last=False)
            self.bytes -= sum(e.size for e in dropped)
        while self.bytes > self.limits.log_bytes and (
            self._drop_oldest() or self._drop_least_recent_run()
        ):
            pass

    def _drop_oldest(self) -> bool:
        """Drop the oldest entry that is not its run's newest; False when none is left."""
        oldest: deque[LogEntry] | None = None
        for entries in self.runs.values():
            if len(entries) > 1 and (oldest is None or entries[0].seq < oldest[0].seq):
                oldest = entries
        if oldest is None:
            return False
        self.bytes -= oldest.popleft().size
        return True

    def _drop_least_recent_run(self) -> bool:
        """Drop the run written to least recently, never the one just written."""
        if len(self.runs) < 2:
            return False
        _, dropped = self.runs.popitem(last=False)
        self.bytes -= sum(e.size for e in dropped)
        return True
