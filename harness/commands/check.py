"""`harness check`: validate scenario files without running anything."""

from __future__ import annotations

import argparse
import sys

from harness.commands.common import scenario_paths
from harness.errors import ScenarioError
from harness.scenario import load_scenario
from harness.settings import load_settings

DESCRIPTION = """\
Validate scenario files: the YAML, the JSON Schema (unknown keys, wrong types), declared tools,
tool arguments against each tool's parameters, the saved history's pairing, and that each
message's expectations match what its script makes a correct loop do.

Every problem is reported as FILE:LINE: FIELD: PROBLEM. Exit 0 when all files are valid, 2
otherwise.

examples:
  harness check                       # every scenarios/*.yaml
  harness check scenarios/limit_reached_pending_write.yaml
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="scenario files or folders (default: ./scenarios)"
    )


def run(args: argparse.Namespace) -> int:
    bad = 0
    paths = scenario_paths(args.files)
    settings = load_settings()
    for path in paths:
        try:
            s = load_scenario(path, settings)
        except ScenarioError as exc:
            bad += 1
            print(f"error {exc}", file=sys.stderr)
            continue
        print(
            f"ok    {path}  ({len(s.messages)} message(s), {len(s.tools)} tool(s), "
            f"rules {' '.join(s.rules)})"
        )
    print(f"{len(paths) - bad} valid, {bad} invalid")
    return 2 if bad else 0
