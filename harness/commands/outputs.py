"""Where `harness run` writes its results file and views, so a partial run never silently
replaces the full run's report.

A run is partial when it leaves out cells of the full run (`./scenarios` with the project's
providers and stream variants): scenario arguments, `--provider`, `--stream` or `--shard`.
With the default paths (`reports/…`), a partial run:

- merges into `reports/results.json` when that file is a full run of the same library, source,
  loop and `--strict`: its cells replace theirs, the rest are kept, and `run.parts` records
  both runs;
- otherwise writes its own report in `reports/partial/`, leaving the full one as it was;
- a shard always writes `reports/shard-K-of-N/`, for `harness report` to merge.

Paths given with --results / --html / --junit are used as given. Every case says what it did.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.results.model import Results
    from harness.runner import Cell
    from harness.scenario.model import Scenario
    from harness.shards import Shard

RESULTS, HTML, JUNIT = "results.json", "index.html", "junit.xml"


@dataclass(frozen=True, kw_only=True)
class Outputs:
    results: str
    html: str | None
    junit: str | None
    merge_into: Results | None = None  # the full run's results this partial run merges into
    note: str = ""  # what was decided, for the console


@dataclass(frozen=True, kw_only=True)
class Scope:
    """The cells of the full run, and whether this run leaves any out."""

    partial: bool
    full: tuple[str, ...]  # the full run's cell ids (empty: the library could not be read)


def scope_of(
    args: argparse.Namespace, scenarios: Sequence[Scenario], chosen: Sequence[Cell]
) -> Scope:
    """`scenarios`: the ones loaded for this run; `chosen`: the cells it runs."""
    from harness.commands.common import DEFAULT_SCENARIO_DIR, chosen_cells, load_all
    from harness.settings import load_settings

    ids = tuple(c.id for c in chosen)
    narrowed = args.scenarios or args.provider or args.stream or args.shard
    if not narrowed:
        return Scope(partial=False, full=ids)
    if not args.scenarios:
        return _scope(ids, chosen_cells(scenarios, None, None))
    if not DEFAULT_SCENARIO_DIR.is_dir() and not load_settings().scenarios:
        return Scope(partial=bool(args.provider or args.stream or args.shard), full=ids)
    try:
        return _scope(ids, chosen_cells(load_all([]), None, None))
    except HarnessError:  # the full library does not load: nothing to compare or merge with
        return Scope(partial=True, full=())


def _scope(ids: Sequence[str], full: Sequence[Cell]) -> Scope:
    full_ids = tuple(c.id for c in full)
    return Scope(partial=not set(full_ids) <= set(ids), full=full_ids)


def outputs_for(
    args: argparse.Namespace,
    defaults: Outputs,
    scope: Scope,
    shard: Shard | None,
    latest: Results,
) -> Outputs:
    """Where to write `latest`, this run's results (`defaults`: the default paths)."""
    given = Outputs(results=args.results, html=args.html, junit=args.junit)
    if given != defaults or not scope.partial:
        return given
    count = f"{len(latest.cells)} of {len(shard.selection) if shard else len(scope.full)} cells"
    if shard is not None:
        folder = _folder(defaults, f"shard-{shard.index}-of-{shard.count}")
        return _into(
            folder,
            f"shard {shard.label} ({count}): wrote its own report in {folder}/; merge the "
            f"shards with `harness report {_folder(defaults, 'shard-*')}/{RESULTS}`",
        )
    full, why_not = _mergeable(defaults.results, scope, latest)
    if full is not None:
        kept = len(full.cells) - len(latest.cells)
        return Outputs(
            results=defaults.results,
            html=defaults.html,
            junit=defaults.junit,
            merge_into=full,
            note=f"partial run ({count}): merged into {defaults.results}, whose other {kept} "
            "cell(s) are from the earlier run (see run.parts in the results file)",
        )
    folder = _folder(defaults, "partial")
    return _into(
        folder,
        f"partial run ({count}): wrote its own report in {folder}/, not into "
        f"{defaults.results}: {why_not}",
    )


def _folder(defaults: Outputs, name: str) -> Path:
    return Path(defaults.results).parent / name


def _into(folder: Path, note: str) -> Outputs:
    return Outputs(
        results=str(folder / RESULTS), html=str(folder / HTML), junit=str(folder / JUNIT), note=note
    )


def _mergeable(path: str, scope: Scope, latest: Results) -> tuple[Results | None, str]:
    """The full run's results at `path` when this partial run can merge into them, else why
    not."""
    from harness.results import read_results

    if not scope.full:
        return None, "the full library (./scenarios) does not load"
    if not Path(path).is_file():
        return None, "there is no full run there to merge into"
    try:
        full = read_results(path)
    except HarnessError as exc:
        return None, f"that file cannot be read ({exc})"
    same = all(
        getattr(full.run, f) == getattr(latest.run, f)
        for f in ("harness_version", "source", "loop", "strict", "shard")
    )
    ids = {c.id for c in full.cells}
    if same and ids == set(scope.full) and {c.id for c in latest.cells} <= ids:
        return full, ""
    return None, (
        "it is not a full run of this library with the same source, loop and --strict; "
        "it is left as it was"
    )
