"""Helpers the subcommands share: finding and loading scenarios, and filling the options a
command was not given from `[tool.harness]`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError, ScenarioError
from harness.scenario import Scenario, load_scenario
from harness.settings import Settings, load_settings

if TYPE_CHECKING:
    from harness.runner import Cell

DEFAULT_SCENARIO_DIR = Path("scenarios")
DEFAULT_CASSETTES = "cassettes"


def apply_settings(args: argparse.Namespace) -> Settings:
    """Fill what `harness run` / `record` were not given from `[tool.harness]`: the loop (when
    neither --loop nor --exec), the cassette folder, the models (under any --model; not for
    cassette replay, which plays the recorded model) and the report folder (for --results /
    --html / --junit left at their `reports/` defaults). No scenario arguments stay none:
    `scenario_paths` reads the settings' scenarios then, and the run is not a partial one."""
    settings = load_settings()
    if args.loop is None and args.exec is None:
        args.loop, args.exec = settings.loop, settings.exec
    if args.cassettes is None:
        args.cassettes = str(settings.cassettes or DEFAULT_CASSETTES)
    if args.source != "cassette":
        args.model = [f"{p}={m}" for p, m in settings.models.items()] + list(args.model)
    if settings.reports is not None:
        from harness.commands.report import default_outputs

        plain, chosen = default_outputs(None), default_outputs(settings.reports)
        for option in ("results", "html", "junit"):
            if getattr(args, option, None) == getattr(plain, option):
                setattr(args, option, getattr(chosen, option))
    return settings


def chosen_cells(
    scenarios: Sequence[Scenario], providers: Sequence[str] | None, stream: str | None
) -> list[Cell]:
    """The cells to run: `--provider` / `--stream` when given, else `[tool.harness]`'s."""
    from harness.runner import cells

    settings = load_settings()
    wanted = providers or settings.providers
    variant = {"both": None, "on": True, "off": False}[stream or settings.stream]
    return cells(scenarios, wanted, variant)  # type: ignore[arg-type]


def scenario_paths(given: Sequence[str]) -> list[Path]:
    """The files named (a directory means its *.yaml), else `[tool.harness]` scenarios, else
    ./scenarios/*.yaml."""
    if not given:
        given = [str(p) for p in load_settings().scenarios]
    if not given:
        if not DEFAULT_SCENARIO_DIR.is_dir():
            raise HarnessError(
                "no scenario files given and no ./scenarios folder here; name the "
                "files or run from the project folder"
            )
        given = [str(DEFAULT_SCENARIO_DIR)]
    paths: list[Path] = []
    for item in given:
        path = Path(item)
        if path.is_dir():
            paths.extend(sorted(path.glob("*.yaml")))
        elif path.exists():
            paths.append(path)
        else:
            raise ScenarioError(item, None, "(file)", "no such file")
    if not paths:
        raise HarnessError(f"no *.yaml scenario files in {', '.join(given)}")
    return paths


def load_all(given: Sequence[str], settings: Settings | None = None) -> list[Scenario]:
    """Every scenario named, with the project's `[tool.harness]` defaults applied."""
    settings = settings or load_settings()
    scenarios = [load_scenario(p, settings) for p in scenario_paths(given)]
    seen: dict[str, str] = {}
    for s in scenarios:
        if s.id in seen:
            raise HarnessError(
                f"scenario id {s.id!r} comes from both {seen[s.id]} and {s.path}; "
                "ids are file stems and must be unique"
            )
        seen[s.id] = s.path
    return scenarios
