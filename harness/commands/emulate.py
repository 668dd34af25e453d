"""`harness emulate`: serve the emulator until stopped."""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from harness.commands.common import load_all
from harness.errors import HarnessError
from harness.terminal import terminal_safe

if TYPE_CHECKING:
    from harness.cassettes.emulated import EmulateRecorder

TICK_SECONDS = 0.5  # how often --record looks for idle runs

DESCRIPTION = """\
Serve a local emulator of the Anthropic Messages, OpenAI Responses / Chat Completions and Gemini
APIs on 127.0.0.1, playing the scenarios' scripted model turns and rejecting every request the
real API would reject (same status, envelope and message).

It first prints one shell line per SDK base-URL variable, for the first scenario, then a comment
line per other scenario. Point any program that uses the official SDKs at it:

  harness emulate scenarios/one_tool_then_answer.yaml --port 8765 > emulator.env &
  until [ -s emulator.env ]; do sleep 0.1; done   # the lines come once it is listening
  set -a; . ./emulator.env; set +a     # exports ANTHROPIC_BASE_URL, OPENAI_BASE_URL, ...
  ANTHROPIC_API_KEY=dummy OPENAI_API_KEY=dummy GEMINI_API_KEY=dummy python my_agent.py

The path segment after /r/ is a run id: use different ones to isolate parallel runs.
Stop with Ctrl-C (or SIGTERM).

--record DIR writes what each run sent and was answered as cassettes (the format and scrubbing
of `harness record`, marked `source: emulate`), one per provider and stream variant:
  DIR/<provider>/<scenario_id>[.stream].yaml        the run printed above (--run)
  DIR/<provider>/<scenario_id>[.stream]@<run>.yaml  any other run id
A run is written once it has been idle for --idle seconds, again whenever it grew, and when
the emulator stops; each file atomically, one line on stderr per cassette written. Judge them
with: harness audit --scenario SCENARIO DIR/<provider>/<scenario_id>.yaml
"""

ENV_VARS = (
    ("anthropic", "ANTHROPIC_BASE_URL"),
    ("openai", "OPENAI_BASE_URL"),
    ("gemini", "GOOGLE_GEMINI_BASE_URL"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenarios", nargs="+", metavar="SCENARIO", help="scenario files or folders to serve"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)"
    )
    parser.add_argument(
        "--run",
        default="default",
        metavar="ID",
        help="run id used in the printed base URLs (default: default)",
    )
    parser.add_argument(
        "--record",
        metavar="DIR",
        default=None,
        help="write each run's exchanges as cassettes under DIR (see above)",
    )
    parser.add_argument(
        "--idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --record: write a run once it has been idle this long (default 5; "
        "0: only when stopped)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.emulator.server import RUN_ID_TEXT, Emulator, valid_run_id

    if not 0 <= args.port <= 65535:
        raise HarnessError(f"--port {args.port} is not a port number (0-65535)")
    if not valid_run_id(args.run):
        raise HarnessError(f"--run {args.run[:60]!r} is not a run id: use {RUN_ID_TEXT}")
    recorder = _recorder(args)
    scenarios = load_all(args.scenarios)
    on_run = recorder.add if recorder is not None else None
    emulator = Emulator(scenarios, port=args.port, on_run=on_run).start()
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    first, others = scenarios[0], scenarios[1:]
    for provider, var in ENV_VARS:
        print(shell_assignment(var, emulator.base_urls(first.id, args.run)[provider]))
    for s in others:
        urls = emulator.base_urls(s.id, args.run)
        print(f"# {s.id}: " + " ".join(shell_assignment(v, urls[p]) for p, v in ENV_VARS))
    sys.stdout.flush()
    print(
        f"harness emulate: serving {len(scenarios)} scenario(s) on {emulator.root}; Ctrl-C to stop",
        file=sys.stderr,
    )
    try:
        while not stop.wait(TICK_SECONDS):
            if recorder is not None:
                recorder.tick()
    finally:
        emulator.stop()
        if recorder is not None:
            recorder.flush()
    print("harness emulate: stopped", file=sys.stderr)
    return 0


def _recorder(args: argparse.Namespace) -> EmulateRecorder | None:
    """The cassette writer for --record, after checking the folder can be one."""
    from harness.cassettes.emulated import IDLE_SECONDS, EmulateRecorder

    if args.record is None:
        if args.idle is not None:
            raise HarnessError("--idle applies to --record: add --record DIR")
        return None
    idle = IDLE_SECONDS if args.idle is None else args.idle
    if not idle >= 0:
        raise HarnessError(f"--idle {args.idle} must be 0 or more seconds")
    folder = Path(args.record)
    if folder.exists() and not folder.is_dir():
        raise HarnessError(f"--record {args.record}: exists and is not a folder; name a folder")
    return EmulateRecorder(folder, args.run, say=_say, idle=idle)


def _say(line: str) -> None:
    print(terminal_safe(line), file=sys.stderr, flush=True)


def shell_assignment(name: str, value: str) -> str:
    """`NAME=value`, quoted so that sourcing it can only assign (the README has users `.` the
    output); a plain URL stays unquoted."""
    return f"{name}={shlex.quote(value)}"
