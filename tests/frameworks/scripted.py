"""What test_openai_agents.py and test_litellm.py share: the six CI scenarios on one scripted
source per test process, each adapter cell run once and judged by `cell_findings`, and a child
process whose host-name lookups are refused (to see what a framework would reach for). The
scripted source is support.py's; cells here are judged by `cell_findings` (warnings included),
support.py's as the report judges them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from itertools import count

import pytest

from examples.frameworks.base import Framework
from harness import tools
from harness.findings import Finding
from harness.outcome import cell_findings
from harness.runner import Cell, CellRun, load_loop, run_cell
from harness.scenario.model import Provider
from tests.frameworks import support

ANSWERED = ("one_tool_then_answer", "parallel_requests_one_turn", "three_round_chain")
LIMITS = (
    "limit_reached_pending_write",
    "limit_reached_pending_read",
    "limit_reached_parallel_pending",
)
# The limit scenarios whose pending request must not run (expect.not_run when it does).
PENDING_MUST_NOT_RUN = frozenset({"limit_reached_pending_write", "limit_reached_parallel_pending"})
SCENARIOS = {n: support.SCENARIOS[n] for n in ANSWERED + LIMITS}
RUNS = count(1)
source = support.source  # the one scripted source of the framework tests in this process


def close_source() -> None:
    support.close_source()
    _ran.cache_clear()


def ran(
    loop: str, provider: Provider, scenario: str, stream: bool = False
) -> tuple[CellRun, tuple[Finding, ...]]:
    """One cell of the loop `module:function`, run once per process (and rendezvous window:
    tests/frameworks/overlap.py), and its findings."""
    return _ran(loop, provider, scenario, stream, tools.RENDEZVOUS_SECONDS)


@cache
def _ran(
    loop: str, provider: Provider, scenario: str, stream: bool, window: float
) -> tuple[CellRun, tuple[Finding, ...]]:
    cell = Cell(scenario=SCENARIOS[scenario], provider=provider, stream=stream)
    run = run_cell(cell, source(), load_loop(loop), run_id=f"fw-{next(RUNS)}-{provider}")
    return run, tuple(cell_findings(run))


def cells(framework: Framework) -> Iterator[pytest.ParameterSet]:
    """Every configuration × its providers × the six scenarios × JSON and stream."""
    for config in framework.configs:
        for provider in config.providers:
            for scenario in ANSWERED + LIMITS:
                for stream in (False, True):
                    suffix = "-stream" if stream else ""
                    yield pytest.param(
                        config.name,
                        provider,
                        scenario,
                        stream,
                        id=f"{config.name}-{provider}-{scenario}{suffix}",
                    )


REFUSE_LOOKUPS = """
import socket
tried = []
def refuse(host, *args, **kwargs):
    tried.append(host)
    raise OSError("no network in tests")
socket.getaddrinfo = refuse
"""


def host_lookups(code: str, env: Mapping[str, str | None]) -> list[str]:
    """The host names `code` looks up in a child process where every lookup is refused (so
    nothing leaves the machine); `env` sets (or, with None, removes) variables."""
    child_env = {k: v for k, v in os.environ.items() if k not in env}
    child_env.update({k: v for k, v in env.items() if v is not None})
    script = REFUSE_LOOKUPS + code + "\nprint(sorted(set(tried)))\n"
    child = subprocess.run(
        [sys.executable, "-c", script], env=child_env, capture_output=True, text=True, timeout=120
    )
    assert child.returncode == 0, child.stderr
    last = child.stdout.strip().splitlines()[-1]
    return [name.strip(" '") for name in last.strip("[]").split(",") if name.strip()]
