"""The Node example (`examples/node/`) judged out of process by `harness run --exec`.

The agent (`agent.mjs`, on `@anthropic-ai/sdk`, `openai` and `@google/genai`) conforms on
every scenario × provider × stream variant of the library, from the emulator and from the
committed cassettes; its deliberately broken variant (`broken_agent.mjs`: at the budget it
skips the pending results and the closing call and returns the last interim text) is caught
on exactly the scenarios that reach the budget, with the step-limit rules.

Skips, saying why, where `node` is not installed or the packages are not (`.ci/run` installs
them with `npm ci --prefix examples/node`). The three runs go at once, each its own
`harness run` process writing its results to a temporary folder.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import ROOT, library

NODE_DIR = ROOT / "examples" / "node"
PACKAGES = ("@anthropic-ai/sdk", "openai", "@google/genai")
RUN_TIMEOUT = 900  # seconds for one whole-library run (about 2 minutes on 2 cores)
# What the broken variant breaks where the budget runs out with requests pending: no
# "Not executed" results (L11, the headline), no closing call (L12), an answer that neither
# explains the limit nor asks to continue (L14) and is the interim half sentence (L15), so the
# query ends as an answer, not at the step limit.
BROKEN_RULES = {"L11", "L12", "L14", "L15", "expect.ending"}


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed (the Node example needs Node 20 or newer)"
    absent = [p for p in PACKAGES if not (NODE_DIR / "node_modules" / p / "package.json").exists()]
    if absent:
        return (
            f"examples/node/node_modules lacks {', '.join(absent)}: "
            "run `npm ci --prefix examples/node` (.ci/run does)"
        )
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    cells: dict[str, dict[str, Any]]  # cell id → its results entry


def _command(program: str) -> str:
    return f"node {shlex.quote(str(NODE_DIR / program))}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """agent on scripted and on cassettes, broken variant on scripted: started together."""
    folder = tmp_path_factory.mktemp("node_example")
    plan = {
        "scripted": ("agent.mjs", "scripted"),
        "cassette": ("agent.mjs", "cassette"),
        "broken": ("broken_agent.mjs", "scripted"),
    }
    started = {}
    for name, (program, source) in plan.items():
        argv = [sys.executable, "-m", "harness.cli", "run", "--exec", _command(program)]
        argv += ["--source", source, "--results", str(folder / f"{name}.json")]
        argv += ["--html", str(folder / f"{name}.html"), "--junit", str(folder / f"{name}.xml")]
        with (folder / f"{name}.out").open("wb") as out:  # a file: no pipe to fill up
            started[name] = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    done = {}
    try:
        for name, process in started.items():
            process.wait(timeout=RUN_TIMEOUT)
            output = (folder / f"{name}.out").read_text(encoding="utf-8", errors="replace")
            results = folder / f"{name}.json"
            assert results.exists(), f"{name}: no results (exit {process.returncode})\n{output}"
            cells = json.loads(results.read_text(encoding="utf-8"))["cells"]
            done[name] = Run(process.returncode, output, {c["id"]: c for c in cells})
    finally:
        for process in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    yield done


def _library_cells() -> set[str]:
    return {
        f"{s.id}[{provider}{'-stream' if stream else ''}]"
        for s in library()
        for provider in s.providers
        for stream in s.streaming
    }


def _step_limit_scenarios() -> set[str]:
    return {s.id for s in library() if any(m.expect.ending == "step_limit" for m in s.messages)}


def _findings(cell: dict[str, Any]) -> list[str]:
    return [f"{f['rule']}: {f['message']}" for f in cell["findings"]]


@pytest.mark.parametrize("source", ["scripted", "cassette"])
def test_the_node_agent_conforms_on_every_cell(runs: dict[str, Run], source: str) -> None:
    run = runs[source]
    assert set(run.cells) == _library_cells(), run.output[-3000:]
    failing = {
        cell_id: (cell["verdict"], cell["error"], _findings(cell))
        for cell_id, cell in run.cells.items()
        if cell["verdict"] != "pass" or cell["findings"] or cell["error"]
    }
    assert failing == {}, run.output[-3000:]
    assert run.returncode == 0, run.output[-3000:]
    for cell in run.cells.values():  # it really answered: what each query ended in
        for query in cell["queries"]:
            assert query["ending"] == query["expected"]["ending"], cell["id"]


def test_the_broken_variant_is_caught_with_the_step_limit_rules(runs: dict[str, Run]) -> None:
    run = runs["broken"]
    assert run.returncode == 1, run.output[-3000:]
    assert set(run.cells) == _library_cells()
    limit = _step_limit_scenarios()
    assert limit, "the library has scenarios that reach the budget"
    caught = {cell_id: cell for cell_id, cell in run.cells.items() if cell["findings"]}
    assert {cell["scenario"]["id"] for cell in caught.values()} == limit
    expected = {c for c in _library_cells() if c.split("[")[0] in limit}
    assert set(caught) == expected
    for cell_id, cell in caught.items():
        assert cell["verdict"] == "fail", cell_id
        assert {f["rule"] for f in cell["findings"]} == BROKEN_RULES, (
            cell_id,
            _findings(cell),
        )
    # and nothing else: away from the budget it is the same agent
    assert all(c["verdict"] == "pass" for i, c in run.cells.items() if i not in caught)
