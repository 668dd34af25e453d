"""Regenerate the framework compatibility report in docs/frameworks/.

    python -m examples.frameworks.report [--framework NAME] [--out DIR] [--stream off|on|both]

Discovers every `examples/frameworks/*_agent.py` module that defines `FRAMEWORK`, runs each
configuration on each of its providers over the whole scenario library on the scripted source
(stream off by default: the streamed variants take as long again and have so far judged the
same), and writes into DIR (default docs/frameworks):

- `matrix.json`: per framework/config/provider/scenario/stream the verdict, the sorted rule ids
  of its findings and how each query ended, with the framework and SDK versions;
- `README.md`: the summary (`summary.py`), with "What changed" against the matrix.json it
  replaces;
- `html/<framework>-<config>.html`: the harness's HTML report of the cells with findings on the
  CI scenarios (`CI_SCENARIOS`), so the committed folder stays small.

`--framework NAME` reruns one framework and keeps the others' cells from the previous matrix.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from examples.frameworks.base import Config, Framework, offline_environment
from examples.frameworks.matrix import (
    GROUPS,
    ConfigInfo,
    FrameworkInfo,
    Matrix,
    MatrixCell,
    read_matrix,
    rules_of,
    verdict_of,
    what_changed,
    write_matrix,
)
from examples.frameworks.summary import summary_markdown
from harness.errors import HarnessError
from harness.loop.contract import Loop
from harness.results.build import Judged
from harness.runner import Cell, CellRun
from harness.scenario.model import Scenario
from harness.sources import Source

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = Path(__file__).parent
COMMAND = "python -m examples.frameworks.report"
# The scenarios CI runs every adapter on (tests/frameworks/test_matrix.py), and the HTML's.
CI_SCENARIOS = (
    "one_tool_then_answer",
    "parallel_requests_one_turn",
    "three_round_chain",
    "limit_reached_pending_write",
    "limit_reached_pending_read",
    "limit_reached_parallel_pending",
)
INSTALL = "pip install 'harness[frameworks]'"


_STREAM_NAME: dict[bool | None, str] = {False: "off", True: "on", None: "both"}


@dataclass(frozen=True, kw_only=True)
class Ran:
    """One configuration's cells, judged."""

    cells: tuple[MatrixCell, ...]
    judged: tuple[Judged, ...]


def discover(only: str | None = None) -> list[Framework]:
    """Every adapter module's FRAMEWORK (or the one named), in file order."""
    found: list[Framework] = []
    for path in sorted(ADAPTERS.glob("*_agent.py")):
        name = f"examples.frameworks.{path.stem}"
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise HarnessError(
                f"{name}: cannot import ({exc}); install the frameworks: {INSTALL}"
            ) from None
        framework = getattr(module, "FRAMEWORK", None)
        if isinstance(framework, Framework) and only in (None, framework.name):
            found.append(framework)
    if only is not None and not found:
        raise HarnessError(f"--framework {only!r}: no adapter in {ADAPTERS} defines it")
    return found


def versions(framework: Framework) -> dict[str, str]:
    """Installed versions of the framework's distributions; a missing one is a clear error."""
    out: dict[str, str] = {}
    for name in framework.packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise HarnessError(f"{framework.name} needs {name}, not installed: {INSTALL}") from None
    return out


def library(names: Sequence[str] | None = None) -> list[Scenario]:
    """The scenario library (or the scenarios named), with the project's settings."""
    from harness.commands.common import load_all

    folder = ROOT / "scenarios"
    return load_all([str(folder / f"{n}.yaml") for n in names] if names else [str(folder)])


def limit_scenarios(scenarios: Sequence[Scenario]) -> tuple[str, ...]:
    return tuple(
        s.id for s in scenarios if any(m.expect.ending == "step_limit" for m in s.messages)
    )


def judge_run(run: CellRun, source: Source) -> Judged:
    """A cell's findings as `harness run` judges them. Not strict: a warning is no finding of
    the framework's (`script.exhausted`: a turn sent back split runs past the script, which
    L5 already reports)."""
    from harness.results.build import judge, sort_findings

    cell = run.cell
    own = source.findings(cell.scenario, cell.provider, cell.stream)
    found = sort_findings(run, own, strict=False)
    return judge(run, found.findings, found.drift)


def run_judged(cell: Cell, source: Source, loop: Loop, run_id: str) -> Judged:
    """Run and judge a cell."""
    from harness.runner import run_cell

    return judge_run(run_cell(cell, source, loop, run_id), source)


def matrix_cell(framework: Framework, config: Config, judged: Judged) -> MatrixCell:
    from harness.outcome import query_outcome

    run = judged.run
    rules = rules_of(f.rule for f in judged.findings)
    return MatrixCell(
        framework=framework.name,
        config=config.name,
        provider=run.cell.provider,
        scenario=run.cell.scenario.id,
        stream=run.cell.stream,
        verdict=verdict_of(rules),
        rules=rules,
        endings=tuple(query_outcome(q).ending for q in run.queries),
    )


def run_config(
    framework: Framework, config: Config, scenarios: Sequence[Scenario], stream: bool | None
) -> Ran:
    """Every scenario × provider (× stream variant) of one configuration, on its own
    scripted source, with the SDKs' variables pointing at it as `harness run` does."""
    from harness.runner import cells, load_loop
    from harness.sources import ScriptedSource, sdk_environment

    chosen = cells(scenarios, config.providers, stream)
    source = ScriptedSource(scenarios, {})
    judged: list[Judged] = []
    with sdk_environment(source):
        loop = load_loop(config.loop)
        try:
            for number, cell in enumerate(chosen, 1):
                judged.append(run_judged(cell, source, loop, f"{number}-{cell.provider}"))
        finally:
            source.close()
    cells_ = tuple(matrix_cell(framework, config, j) for j in judged)
    return Ran(cells=cells_, judged=tuple(judged))


def write_html(framework: Framework, config: Config, ran: Ran, out: Path) -> str | None:
    """The HTML report of the cells with findings on the CI scenarios; None when none has."""
    from harness.report.html import write_html as render
    from harness.results import build_results, run_meta
    from harness.results.build import check_catalogue

    failing = [j for j in ran.judged if j.findings and j.run.cell.scenario.id in CI_SCENARIOS]
    if not failing:
        return None
    now = time.time()
    meta = run_meta(
        source="scripted",
        loop=config.loop,
        started=now,
        finished=now,
        argv=[*COMMAND.split(), "--framework", framework.name],
    )
    results = build_results(failing, meta=meta, rules=check_catalogue())
    name = f"html/{framework.name}-{config.name}.html"
    render(results, out / name)
    return name


def rule_titles() -> dict[str, str]:
    from harness.results.build import HARNESS_GROUPS, check_catalogue

    titles = {r.id: r.title for r in check_catalogue()}
    titles.update({g.id: g.title for g in HARNESS_GROUPS if g.id in GROUPS})
    return titles


def framework_info(framework: Framework) -> FrameworkInfo:
    return FrameworkInfo(
        name=framework.name,
        versions=versions(framework),
        traps=framework.traps,
        configs=tuple(
            ConfigInfo(name=c.name, loop=c.loop, summary=c.summary, providers=c.providers)
            for c in framework.configs
        ),
    )


def run_and_publish(
    framework_name: str, config_name: str, stream: bool | None, out: Path
) -> tuple[tuple[MatrixCell, ...], str | None]:
    """One configuration, run and its HTML written: what a worker process does (`--jobs`)."""
    offline_environment()
    framework = discover(framework_name)[0]
    config = next(c for c in framework.configs if c.name == config_name)
    print(f"{framework.name} {config.name}: running…", file=sys.stderr, flush=True)
    ran = run_config(framework, config, library(), stream)
    return ran.cells, write_html(framework, config, ran, out)


def _run_all(
    frameworks: Sequence[Framework], stream: bool | None, out: Path, jobs: int
) -> tuple[list[MatrixCell], dict[str, str]]:
    """Every configuration, `jobs` at a time, each in its own process (the frameworks wait on
    SDK retry backoff far more than they compute); results in discovery order."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    work = [(f.name, c.name) for f, c in all_configs(frameworks)]
    if jobs == 1:
        done = [run_and_publish(f, c, stream, out) for f, c in work]
    else:
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(run_and_publish, f, c, stream, out) for f, c in work]
            done = [future.result() for future in futures]
    cells = [cell for ran, _ in done for cell in ran]
    html = {
        f"{f} {c}": link for (f, c), (_, link) in zip(work, done, strict=True) if link is not None
    }
    return cells, html


def generate(out: Path, only: str | None, stream: bool | None, jobs: int = 1) -> Matrix:
    """Run, then write matrix.json, the HTML reports and README.md into `out`."""
    from harness.results.build import sdk_versions

    offline_environment()
    frameworks = discover(only)
    infos = [framework_info(f) for f in frameworks]  # a missing package stops before any run
    scenarios = library()
    previous = read_matrix(out / "matrix.json")
    (out / "html").mkdir(parents=True, exist_ok=True)
    cells, html = _run_all(frameworks, stream, out, jobs)
    matrix = Matrix(
        command=COMMAND if stream is False else f"{COMMAND} --stream {_STREAM_NAME[stream]}",
        stream=_STREAM_NAME[stream],
        sdk_versions=sdk_versions(),
        rules=rule_titles(),
        scenarios=tuple(s.id for s in scenarios),
        limit_scenarios=limit_scenarios(scenarios),
        frameworks=tuple(infos),
        cells=tuple(cells),
        html=html,
    )
    matrix = kept_from(previous, matrix) if only is not None else matrix
    _remove_stale_html(out, matrix)
    write_matrix(matrix, out / "matrix.json")
    (out / "README.md").write_text(
        summary_markdown(matrix, what_changed(previous, matrix)), encoding="utf-8"
    )
    return matrix


def kept_from(previous: Matrix | None, matrix: Matrix) -> Matrix:
    """`--framework`: the other frameworks' cells and HTML links stay as they were."""
    if previous is None:
        return matrix
    ran = {f.name for f in matrix.frameworks}
    frameworks = (*[f for f in previous.frameworks if f.name not in ran], *matrix.frameworks)
    cells = (*[c for c in previous.cells if c.framework not in ran], *matrix.cells)
    html = {k: v for k, v in previous.html.items() if k.split(" ")[0] not in ran}
    order = {f.name: i for i, f in enumerate(previous.frameworks)}
    frameworks = tuple(sorted(frameworks, key=lambda f: order.get(f.name, len(order))))
    return replace(matrix, frameworks=frameworks, cells=cells, html={**html, **matrix.html})


def _remove_stale_html(out: Path, matrix: Matrix) -> None:
    linked = {out / name for name in matrix.html.values()}
    for path in (out / "html").glob("*.html"):
        if path not in linked:
            path.unlink()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", metavar="NAME", help="rerun only this framework")
    parser.add_argument("--out", default=str(ROOT / "docs" / "frameworks"), metavar="DIR")
    parser.add_argument("--stream", choices=("off", "on", "both"), default="off")
    parser.add_argument(
        "--jobs", type=int, default=4, metavar="N", help="configurations run at once (default 4)"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        print(f"{COMMAND}: error: --jobs takes a positive number", file=sys.stderr)
        return 2
    stream = {name: value for value, name in _STREAM_NAME.items()}[args.stream]
    try:
        matrix = generate(Path(args.out), args.framework, stream, args.jobs)
    except HarnessError as exc:
        print(f"{COMMAND}: error: {exc}", file=sys.stderr)
        return 2
    conform = sum(c.verdict == "pass" for c in matrix.cells)
    print(f"{len(matrix.cells)} cells, {conform} conform; wrote {args.out}")
    return 0


def all_configs(frameworks: Sequence[Framework]) -> Iterator[tuple[Framework, Config]]:
    for framework in frameworks:
        for config in framework.configs:
            yield framework, config


if __name__ == "__main__":
    sys.exit(main())
