"""Recording one cell: run it at the source's endpoint, decide whether the run is fit to keep,
and build the cassette text from what the endpoint recorded (the bytes as they went). Writing
is left to the caller (one thread writes, see `harness record`), so an interrupt can never
leave a cassette half-written or written from a partial run.

A cassette is the provider's side of the run. It is kept whenever every exchange arrived whole,
whatever the loop then did with the answers: a loop with findings, one that raised or one that
reported an error is recorded too (and says so), so a loop with a known defect still gets a
baseline whose replay gives the same findings. A cut or missing exchange, a request the API
refused, or an interrupt leaves the old cassette as it was.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from harness.cassettes.build import interaction_from_record, meta_for
from harness.cassettes.cassette import Cassette, cassette_path
from harness.cassettes.files import dump_cassette, load_cassette
from harness.cassettes.usage import Usage, usage_of
from harness.errors import CassetteError
from harness.loop.contract import Loop
from harness.runner import Cell, CellRun, run_cell
from harness.scrub import environment_secrets
from harness.sources import Source


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """A cell's recording, ready to write (`text`), or why there is none (`problem`)."""

    cell: Cell
    path: Path
    run: CellRun | None
    text: str | None
    problem: str | None
    usage: Usage
    model: str
    retries: tuple[str, ...] = ()
    # Recorded although the loop failed: how (shown beside the verdict; nothing is hidden).
    loop_failed: str | None = None


def record_cell(cell: Cell, source: Source, loop: Loop, run_id: str, folder: Path) -> Prepared:
    path = cassette_path(folder, cell.provider, cell.scenario.id, cell.stream)
    run = run_cell(cell, source, loop, run_id)
    usage = sum((response_usage(cell.provider, e) for e in run.exchanges), Usage())
    prepared = Prepared(
        cell=cell,
        path=path,
        run=run,
        text=None,
        problem=unclean(run),
        usage=usage,
        model=run.model,
        retries=tuple(line for r in run.records for line in r.retries),
        loop_failed=loop_failure(run),
    )
    if prepared.problem is not None:
        return prepared
    cassette = Cassette(
        path=str(path),
        meta=meta_for(
            source=source.name,
            provider=cell.provider,
            model=run.model,
            scenario=cell.scenario.id,
            stream=cell.stream,
            recorded=datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        ),
        interactions=tuple(
            interaction_from_record(n, cell.provider, r) for n, r in enumerate(run.records, 1)
        ),
    )
    return replace(prepared, text=dump_cassette(cassette))


def unclean(run: CellRun) -> str | None:
    """Why this run must not become a cassette (the provider's side is not whole), or None.
    How the loop ended is not asked: see `loop_failure`."""
    records, live = run.records, run.source == "live"
    if run.rejections:
        entry = run.rejections[0]
        message = entry.error.message if entry.error is not None else ""
        return f"the emulator rejected a request ({entry.status}, as the real API would): {message}"
    if not records:
        return "the loop made no model call" + (f" ({run.error})" if run.error else "")
    for number, record in enumerate(records, 1):
        if record.error is not None or not record.complete:
            return f"call {number}: the response did not arrive whole ({record.error or 'cut'})"
        if live and (record.status is None or record.status >= 400):
            return f"call {number}: the API answered {record.status} {record.reason}"
    if len(records) != len(run.exchanges):
        return f"the tap saw {len(records)} calls but the capture {len(run.exchanges)}"
    return None


def loop_failure(run: CellRun) -> str | None:
    """How the loop failed on a run that is still recorded ("loop raised: …"), or None. An
    error the scenario expects (a scripted provider failure) is no failure."""
    if run.error is not None:
        return "loop raised: " + run.error.removeprefix("the loop raised ")
    messages = run.cell.scenario.messages
    for query in run.queries:
        expected = query.index < len(messages) and messages[query.index].expect.ending == "error"
        if query.error is not None and not (expected and run.source == "scripted"):
            return f"loop reported an error on user message {query.index + 1}: {query.error}"
    return None


def response_usage(provider: str, exchange: object) -> Usage:
    """Usage of one captured exchange (`harness.capture.Exchange`)."""
    events = getattr(exchange, "events", None)
    if events is not None:
        return usage_of(provider, (e.data for e in events))
    return usage_of(provider, [getattr(exchange, "response_body", None)])


def cassette_usage(path: Path, provider: str) -> Usage | None:
    """What the existing recording used, to estimate a refresh (None: no readable file)."""
    try:
        cassette = load_cassette(path)
    except CassetteError:
        return None
    total = Usage()
    for interaction in cassette.interactions:
        response = interaction.response
        docs: Iterable[object] = (
            [e.data for e in response.sse.events] if response.sse is not None else [response.json]
        )
        total = total + usage_of(provider, docs)
    return total


def same_recording(old_text: str, new_text: str, path: str) -> bool:
    """True when only the recording date differs: the file is then left as it is, so a
    refresh that changed nothing shows no diff in review."""
    from harness.cassettes.files import cassette_from_text

    try:
        old = cassette_from_text(path, old_text).to_yaml()
        new = cassette_from_text(path, new_text).to_yaml()
    except CassetteError:
        return False
    for doc in (old, new):
        meta: Mapping[str, object] | None = doc.get("harness")
        if isinstance(meta, dict):
            meta.pop("recorded", None)
    return old == new


@dataclass(frozen=True, kw_only=True)
class Saved:
    verdict: Literal["written", "unchanged", "not written"]
    problem: str | None = None  # why not written


def save_recording(prepared: Prepared) -> Saved:
    """Write a clean recording atomically, unless only its date changed; a run that did not
    complete cleanly, or a text holding a key, leaves the old file as it was."""
    from harness.cassettes.files import check_no_secret, read_cassette_text, write_atomic

    path, text = prepared.path, prepared.text
    if text is None:
        return Saved(
            verdict="not written", problem=prepared.problem or "the run did not complete cleanly"
        )
    keys = environment_secrets()
    try:
        # Scanned before anything parses it: parsing caches the document (files.parse_yaml).
        check_no_secret(str(path), text, keys)
        old = read_cassette_text(str(path)) if path.is_file() else None
        if old is not None and same_recording(old, text, str(path)):
            return Saved(verdict="unchanged")
        write_atomic(path, text, keys)
    except (CassetteError, OSError) as exc:
        return Saved(verdict="not written", problem=str(exc))
    return Saved(verdict="written")
