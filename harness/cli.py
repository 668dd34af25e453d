"""The `harness` command line. Subcommands live in `harness.commands.*` and are imported only
when chosen, so `--help` and `check` never import a provider SDK.

Exit codes: 0 conforms / success, 1 findings, 2 harness or input error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from harness import __version__
from harness.errors import HarnessError
from harness.scrub import redacted_output
from harness.terminal import neutralised_output, terminal_safe

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

COMMANDS = {
    "init": "Scaffold a project that tests its own loop: settings, scenarios, a loop, CI.",
    "run": "Run scenarios through an agent loop on each provider and check the wire.",
    "record": "Record cassettes from the emulator (scripted) or the real APIs (live).",
    "audit": "Check existing vcrpy cassettes (ours or any project's) against the wire rules.",
    "check": "Validate scenario files (schema, tools, script vs expectations).",
    "emulate": "Serve the local emulator of the three provider APIs for scenarios.",
    "report": "Write the HTML report, JUnit XML and a summary from a results file.",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """Bad usage: one clear line and exit 2 (argparse's own convention)."""
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness",
        description="Conformance and recording test harness for tool-calling agent loops on "
        "Anthropic, OpenAI and Gemini.",
        epilog="Exit codes: 0 conforms, 1 findings, 2 harness or input error.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parser.set_defaults(subparsers=sub.choices)
    for name, summary in COMMANDS.items():
        module = importlib.import_module(f"harness.commands.{name}")
        cmd = sub.add_parser(
            name,
            help=summary,
            description=module.DESCRIPTION,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(cmd)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Loop errors, tool results, cassettes and file names reach the console: none of their
    # control or bidi characters may act on the terminal (harness.terminal).
    with neutralised_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # name the command whose usage was wrong, not the top-level parser
        target = args.subparsers.get(args.command, parser) if args.command else parser
        target.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    with redacted_output():  # no key reaches the console, whatever printed it
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"harness.commands.{args.command}")
    try:
        code: int = module.run(args)
    except HarnessError as exc:
        print(f"harness {args.command}: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"harness {args.command}: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
