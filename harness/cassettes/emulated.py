"""Cassettes of `harness emulate --record DIR`: each run's exchanges, as any app sent them,
written in the format and with the scrubbing of `harness record` (`build.py`, `files.py`) and
marked `source: emulate`.

Naming: `DIR/<provider>/<scenario_id>[.stream][@<run>].yaml` — the run printed by `harness
emulate` (`--run`, default `default`) gets the plain name, the same as `harness record`'s, and
any other run id is added after `@` (scenario ids hold no `.` or `@`, run ids no `@`, so a
name reads back one way). A run's exchanges are split by provider, and by whether each query
(one user message) streamed, judged by its first call: one cassette per provider and variant.

When: a run is written once it has been idle for `idle` seconds (no request in flight, none
ended since), again whenever it grew, and at the latest when the emulator stops. Each file is
written atomically after the secret scan; a run with no exchange writes nothing.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from harness.capture import exchange_from_record
from harness.cassettes.build import interaction_from_record, meta_for
from harness.cassettes.cassette import Cassette
from harness.cassettes.files import dump_cassette, read_cassette_text, write_atomic
from harness.checks.input import infer_queries
from harness.checks.scenario_input import PROVIDER_OF_API
from harness.endpoint.capture import Recorded
from harness.endpoint.server import Run
from harness.errors import CassetteError
from harness.scenario.model import Provider
from harness.scrub import environment_secrets, scrub_url
from harness.trace.model import WireCall
from harness.trace.parse import api_of, parse_exchange

SOURCE = "emulate"
IDLE_SECONDS = 5.0
STOP_SETTLE_SECONDS = 2.0  # at stop, how long a reply still being written may take


@dataclass(frozen=True, kw_only=True)
class Planned:
    """One cassette to write: where, its text, and how many interactions it holds."""

    path: Path
    text: str
    interactions: int


def emulated_path(
    folder: str | Path, provider: str, scenario_id: str, stream: bool, run: str, main_run: str
) -> Path:
    name = scenario_id + (".stream" if stream else "") + ("" if run == main_run else f"@{run}")
    return Path(folder) / provider / f"{name}.yaml"


def plan_run(
    scenario_id: str,
    run: str,
    records: Sequence[Recorded],
    *,
    folder: str | Path,
    main_run: str,
    today: str,
) -> tuple[list[Planned], list[str]]:
    """The cassettes of one run's ended records (in arrival order), and notes on records
    left out (no model call, no status)."""
    notes: list[str] = []
    groups: dict[tuple[str, bool], list[Recorded]] = {}
    for provider, numbered in _model_calls(records, notes).items():
        for query in infer_queries([c for c, _ in numbered]):
            stream = query.calls[0].request.stream
            group = groups.setdefault((provider, stream), [])
            group.extend(numbered[c.number - 1][1] for c in query.calls)
    planned = [
        _planned(scenario_id, run, provider, stream, group, folder, main_run, today)
        for (provider, stream), group in sorted(groups.items())
    ]
    return planned, notes


def _model_calls(
    records: Iterable[Recorded], notes: list[str]
) -> dict[Provider, list[tuple[WireCall, Recorded]]]:
    """Each provider's model calls, numbered from 1, with their records; a note for each
    record that is no model call or got no answer."""
    calls: dict[Provider, list[tuple[WireCall, Recorded]]] = {}
    for record in records:
        api = api_of(record.url)
        if api is None or record.status is None:
            why = "no model call" if api is None else "no answer was sent"
            notes.append(f"{record.method} {scrub_url(record.url)} left out: {why}")
            continue
        numbered = calls.setdefault(PROVIDER_OF_API[api], [])
        call = parse_exchange(len(numbered) + 1, exchange_from_record(record))
        numbered.append((call, record))
    return calls


def _planned(
    scenario_id: str,
    run: str,
    provider: str,
    stream: bool,
    records: list[Recorded],
    folder: str | Path,
    main_run: str,
    today: str,
) -> Planned:
    from harness import __version__

    path = emulated_path(folder, provider, scenario_id, stream, run, main_run)
    first = parse_exchange(1, exchange_from_record(records[0]))
    meta = meta_for(
        source=SOURCE,
        provider=provider,
        model=first.request.model,
        scenario=scenario_id,
        stream=stream,
        recorded=today,
    )
    # The app's own SDK is unknown here (each request's user-agent names it): only ours.
    meta = replace(meta, sdk={"harness": __version__})
    interactions = tuple(interaction_from_record(n, provider, r) for n, r in enumerate(records, 1))
    cassette = Cassette(path=str(path), meta=meta, interactions=interactions)
    return Planned(path=path, text=dump_cassette(cassette), interactions=len(records))


def write_planned(planned: Planned, secrets: Iterable[str]) -> bool:
    """Write atomically after the secret scan; False when the file already holds this text."""
    if planned.path.is_file():
        try:
            if read_cassette_text(str(planned.path)) == planned.text:
                return False
        except CassetteError:
            pass  # unreadable: overwritten below
    write_atomic(planned.path, planned.text, secrets)
    return True


class EmulateRecorder:
    """Keeps every run the emulator makes (`Emulator(on_run=recorder.add)`) and writes its
    cassettes when it has been idle (`tick`) and when the emulator stops (`flush`). One thread
    calls `tick` and `flush`; `add` may come from any."""

    def __init__(
        self,
        folder: str | Path,
        main_run: str,
        say: Callable[[str], None],
        idle: float = IDLE_SECONDS,
    ) -> None:
        self.folder, self.main_run, self.say, self.idle = Path(folder), main_run, say, idle
        self._lock = threading.Lock()
        # Several Run objects per key: two first requests may race to make a run, and an
        # evicted run is made again; their records are merged by arrival time.
        self._runs: dict[tuple[str, str], list[Run]] = {}
        self._written: dict[tuple[str, str], int] = {}

    def add(self, run: Run) -> None:
        with self._lock:
            self._runs.setdefault((run.scenario_id, run.id), []).append(run)

    def tick(self, now: float | None = None) -> None:
        """Write each run that grew since it was last written and has been idle `idle` s."""
        if self.idle <= 0:
            return
        now = time.time() if now is None else now
        for key, runs in self._snapshot():
            records = _records(runs)
            if self._grew(key, runs) and _idle_since(records, now, self.idle):
                self._write(key, runs, records)

    def flush(self, settle: float = STOP_SETTLE_SECONDS) -> None:
        """At stop: wait up to `settle` s for replies in flight, then write every run that
        grew since it was last written."""
        for key, runs in self._snapshot():
            if self._grew(key, runs):
                for run in runs:
                    run.capture.settle(settle)
                self._write(key, runs, _records(runs))

    def _snapshot(self) -> list[tuple[tuple[str, str], list[Run]]]:
        with self._lock:
            return [(key, list(runs)) for key, runs in self._runs.items()]

    def _grew(self, key: tuple[str, str], runs: list[Run]) -> bool:
        arrived = _arrivals(runs)
        return arrived > 0 and arrived != self._written.get(key, 0)

    def _write(self, key: tuple[str, str], runs: list[Run], records: list[Recorded]) -> None:
        scenario_id, run = key
        self._written[key] = _arrivals(runs)
        ended = [r for r in records if r.ended is not None]
        planned, notes = plan_run(
            scenario_id, run, ended, folder=self.folder, main_run=self.main_run, today=_today()
        )
        for note in [*notes, *_dropped(runs)]:
            self.say(f"harness emulate: run {run!r} of {scenario_id}: {note}")
        secrets = environment_secrets()
        for item in planned:
            try:
                if write_planned(item, secrets):
                    self.say(
                        f"harness emulate: wrote {item.path} (run {run!r}, "
                        f"{item.interactions} interaction{'s' if item.interactions != 1 else ''})"
                    )
            except (CassetteError, OSError) as exc:
                self.say(f"harness emulate: {item.path} not written: {exc}")


def _records(runs: Iterable[Run]) -> list[Recorded]:
    merged = [r for run in runs for r in run.capture.records()]
    return sorted(merged, key=lambda r: r.started)


def _arrivals(runs: Iterable[Run]) -> int:
    return sum(run.capture.arrivals() for run in runs)


def _idle_since(records: Sequence[Recorded], now: float, idle: float) -> bool:
    """Nothing in flight, and the last reply ended at least `idle` seconds ago."""
    if not records or any(r.ended is None for r in records):
        return False
    return now - max(r.ended or 0.0 for r in records) >= idle


def _dropped(runs: Iterable[Run]) -> list[str]:
    """A run past its capture's bound has lost its oldest exchanges: say so."""
    notes = []
    for run in runs:
        kept = run.capture.records()
        if kept and kept[0].seq > 1:
            notes.append(
                f"its first {kept[0].seq - 1} exchange(s) were dropped (the emulator keeps "
                f"the newest {run.capture.keep} per run); the cassette holds the rest"
            )
    return notes


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()
