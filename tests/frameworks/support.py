"""Shared by the framework tests: the discovered adapters, the committed matrix, and one
scripted source per test process on which a cell runs once and is judged as the report judges
it (`examples.frameworks.report`), so a test and the report can never disagree on method.

Importing this module sets the frameworks' offline switches before any framework is imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from itertools import count

from examples.frameworks.base import Config, Framework, offline_environment
from examples.frameworks.matrix import Matrix, MatrixCell, read_matrix
from examples.frameworks.report import (
    CI_SCENARIOS,
    ROOT,
    discover,
    library,
    matrix_cell,
    run_judged,
)
from harness import tools
from harness.loop.contract import Loop
from harness.results.build import Judged
from harness.runner import Cell, load_loop
from harness.scenario.model import Provider, Scenario
from harness.sources import ScriptedSource, sdk_environment

offline_environment()

MATRIX_JSON = ROOT / "docs" / "frameworks" / "matrix.json"
REGENERATE = (
    "framework behaviour changed: regenerate with `python -m examples.frameworks.report` and "
    "review docs/frameworks/README.md's What changed"
)
FRAMEWORKS: tuple[Framework, ...] = tuple(discover())
SCENARIOS: dict[str, Scenario] = {s.id: s for s in library()}
RUN_NUMBERS = count(1)
_source: ScriptedSource | None = None


def committed_matrix() -> Matrix:
    matrix = read_matrix(MATRIX_JSON)
    assert matrix is not None, f"{MATRIX_JSON} is missing: {REGENERATE}"
    return matrix


def framework(name: str) -> Framework:
    return next(f for f in FRAMEWORKS if f.name == name)


def config(framework_name: str, config_name: str) -> Config:
    return next(c for c in framework(framework_name).configs if c.name == config_name)


def ci_cells() -> Iterator[tuple[Framework, Config, Provider, str]]:
    """Every discovered configuration × its providers × the CI scenarios that provider plays."""
    for fw in FRAMEWORKS:
        for cfg in fw.configs:
            for provider in cfg.providers:
                for scenario in CI_SCENARIOS:
                    if provider in SCENARIOS[scenario].providers:
                        yield fw, cfg, provider, scenario


def source() -> ScriptedSource:
    global _source
    if _source is None:
        _source = ScriptedSource(SCENARIOS.values(), {})
    return _source


def close_source() -> None:
    """Stop the emulator and forget the cells run on it (a module fixture calls this)."""
    global _source
    if _source is not None:
        _source.close()
        _source = None
    _ran.cache_clear()


@cache
def _loop(spec: str) -> Loop:
    return load_loop(spec)


def ran(
    framework_name: str, config_name: str, provider: Provider, scenario: str, stream: bool = False
) -> tuple[Judged, MatrixCell]:
    """One cell, run once per process (and rendezvous window: tests/frameworks/overlap.py):
    the judged run (wire, tools, findings) and its matrix cell. The SDKs' variables point at
    the endpoint meanwhile, as under `harness run`."""
    return _ran(framework_name, config_name, provider, scenario, stream, tools.RENDEZVOUS_SECONDS)


@cache
def _ran(
    framework_name: str,
    config_name: str,
    provider: Provider,
    scenario: str,
    stream: bool,
    window: float,
) -> tuple[Judged, MatrixCell]:
    fw, cfg = framework(framework_name), config(framework_name, config_name)
    cell = Cell(scenario=SCENARIOS[scenario], provider=provider, stream=stream)
    run_id = f"fw-{next(RUN_NUMBERS)}-{provider}"
    with sdk_environment(source()):
        judged = run_judged(cell, source(), _loop(cfg.loop), run_id)
    return judged, matrix_cell(fw, cfg, judged)
