"""The per-run log's bounds: entries per run, runs, and the byte budget over all runs."""

from __future__ import annotations

from typing import Any

from harness.emulator.limits import Limits
from harness.emulator.runlog import RunLog


def entry(size: int) -> dict[str, Any]:
    return {
        "api": "anthropic",
        "method": "POST",
        "path": "/v1/messages",
        "query": {},
        "headers": {},
        "body": "x" * size,
        "status": 200,
        "error": None,
        "step": None,
        "size": size,
    }


def sizes(log: RunLog, run: str) -> list[int]:
    return [e.size for e in log.entries(run)]


def test_the_byte_budget_drops_the_oldest_entries_over_all_runs() -> None:
    log = RunLog(Limits(log_bytes=100))
    log.record("a", entry(40))
    log.record("b", entry(40))
    log.record("a", entry(40))  # 120 > 100: the oldest (a's first) goes
    assert sizes(log, "a") == [40] and sizes(log, "b") == [40] and log.bytes == 80


def test_the_entry_just_written_always_stays_even_over_the_budget() -> None:
    log = RunLog(Limits(log_bytes=100))
    log.record("a", entry(10))
    log.record("b", entry(500))
    assert sizes(log, "b") == [500] and log.entries("a") == [] and log.bytes == 500


def test_entries_per_run_and_runs_are_capped_least_recently_written_first() -> None:
    log = RunLog(Limits(log_entries_per_run=2, log_runs=2))
    for run in ("a", "a", "a", "b", "a", "c"):
        log.record(run, entry(1))
    assert log.entries("b") == []  # written before a's last entry, so the least recent
    assert len(log.entries("a")) == 2 and len(log.entries("c")) == 1
    assert log.bytes == 3
    assert [e.seq for e in log.entries("a")] == [3, 5]
