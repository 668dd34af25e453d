"""`harness audit`: the wire-only checks on existing vcrpy cassettes, ours or anyone's.

Each cassette is read on its own (`read_cassette`: parsed bodies, plain vcrpy YAML, gzip,
SSE), its model calls parsed into the neutral trace, its queries inferred from the requests,
and every rule that needs nothing but the wire is run. A finding is printed at the interaction
it concerns, numbered from 1 in its file as vcrpy stores them.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import CassetteError, HarnessError

if TYPE_CHECKING:
    from harness.cassettes.read import RecordedExchange
    from harness.checks import CatalogueEntry
    from harness.findings import Finding
    from harness.trace.model import WireCall

# The rules that read the wire alone, as `catalogue()` lists them (a test keeps this line in
# step with it); written out so that `harness --help` imports no check module.
WIRE_RULES = (
    "wire.parse L2 L5 L6 L8 L9 L10 L12 L13 anthropic.results_first "
    "anthropic.thinking_unchanged anthropic.tools_declared gemini.content_unchanged "
    "gemini.no_afc gemini.one_candidate openai.no_previous_response_id "
    "openai.reasoning_requested openai.reasoning_resent openai.store_false"
)

DESCRIPTION = f"""\
Check recorded traffic against the loop rules, without running anything: any vcrpy cassette
(YAML with an `interactions:` list), from harness or from another project's test suite. JSON
bodies stored parsed (`parsed_body`) or as strings, gzip bodies (`!!binary`) and SSE streams
are all read. A folder stands for every *.yaml / *.yml cassette under it.

Only the rules that need nothing but the wire run here:
{textwrap.fill(WIRE_RULES, width=92, initial_indent="  ", subsequent_indent="  ")}
The rules that need the tool runs, the answers or the scenario (L1, L3, L4, L7, L11, L14,
L15) need `harness run`. User messages are inferred from the requests: a new last user
message, or a conversation that stops growing, starts a new one.

Each finding is printed as FILE:INTERACTION: RULE at PATH [IDS]: WHAT (expected X; sent Y).
INTERACTION counts from 1 in the cassette ("call N" in a message is interaction N) and PATH
is the JSON path in that interaction's request (or response). Interactions that are no model
call (a token count, a model list) are skipped and named as such.

examples:
  harness audit cassettes/                        # every cassette under the folder
  harness audit run.yaml other.yaml --quiet       # only the findings and the totals
  harness audit --rules                           # what each wire-only rule checks

Exit codes: 0 no findings, 1 findings, 2 a cassette missing or unreadable (one line naming
the file and the interaction; the other cassettes are still audited).
"""

CASSETTE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, kw_only=True)
class Audit:
    """One cassette's result: its interactions, the APIs its model calls speak, the findings
    (each `call` is the interaction number) and the interactions skipped as no model call."""

    path: str
    interactions: int
    apis: tuple[str, ...]
    streamed: bool
    findings: tuple[Finding, ...]
    skipped: tuple[tuple[int, str], ...]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cassettes",
        nargs="*",
        metavar="CASSETTE",
        help="vcrpy cassette files, or folders holding them",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the findings, the unreadable files and the totals",
    )
    parser.add_argument(
        "--rules",
        action="store_true",
        help="list the wire-only rules this command runs, with what each checks, and exit",
    )


def run(args: argparse.Namespace) -> int:
    if args.rules:
        print_rules()
        return 0
    if not args.cassettes:
        raise HarnessError("name at least one cassette or folder (see harness audit --help)")
    paths, errors = cassette_paths(args.cassettes)
    for problem in errors:
        _error_line(problem)
    audits: list[Audit] = []
    for path in paths:
        try:
            audit = audit_cassette(path)
        except CassetteError as exc:
            errors.append(str(exc))
            _error_line(str(exc))
            continue
        audits.append(audit)
        print_audit(audit, quiet=args.quiet)
    print(summary(audits, len(errors)))
    if errors:
        return 2
    return 1 if any(a.findings for a in audits) else 0


def _error_line(message: str) -> None:
    print(f"error     {one_line(message)}", file=sys.stderr)


def one_line(message: str) -> str:
    """A reader's message on one line (the readers write one; this is the guarantee)."""
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


# ---- which files ------------------------------------------------------------------------------


def cassette_paths(given: Sequence[str]) -> tuple[list[Path], list[str]]:
    """The files named, a folder standing for every cassette under it (sorted), and a line
    for each name that is neither a file nor a folder holding cassettes."""
    paths: list[Path] = []
    problems: list[str] = []
    for item in given:
        path = Path(item)
        if path.is_dir():
            # Not only regular files: a symlink to a device is read (within the size limit)
            # and reported, never skipped in silence.
            found = sorted(
                p for p in path.rglob("*") if p.suffix in CASSETTE_SUFFIXES and not p.is_dir()
            )
            if not found:
                problems.append(f"{item}: no *.yaml or *.yml cassettes in this folder")
            paths.extend(found)
        elif path.exists():
            paths.append(path)
        else:
            problems.append(f"{item}: no such file or folder")
    return paths, problems


# ---- one cassette ----------------------------------------------------------------------------


def audit_cassette(path: Path) -> Audit:
    """The wire-only findings of one cassette; `CassetteError` (one line naming the file and
    the interaction) when it cannot be read."""
    from harness.checks import input_from_trace, run_checks
    from harness.trace.model import Trace

    recorded = read(path)
    calls, skipped = _calls(path, recorded)
    # `run_checks` never raises: a check that breaks on odd data becomes a finding of its rule.
    findings = run_checks(input_from_trace(Trace(calls=tuple(calls))), wire_only=True)
    return Audit(
        path=str(path),
        interactions=len(recorded),
        apis=tuple(sorted({c.request.api for c in calls})),
        streamed=any(c.response.streamed for c in calls),
        findings=tuple(sorted((_by_interaction(f) for f in findings), key=lambda f: f.call or 0)),
        skipped=tuple(skipped),
    )


def read(path: Path) -> list[RecordedExchange]:
    """Every interaction, decoded; a `CassetteError` naming the file and interaction if not."""
    from harness.cassettes.read import read_cassette

    return read_cassette(path)


def _calls(
    path: Path, recorded: Sequence[RecordedExchange]
) -> tuple[list[WireCall], list[tuple[int, str]]]:
    """The model calls, each numbered by its interaction; the other interactions."""
    from harness.trace.parse import api_of, exchange_from_recorded, parse_exchange

    calls: list[WireCall] = []
    skipped: list[tuple[int, str]] = []
    for item in recorded:
        number = item.index + 1
        if api_of(item.uri) is None:
            skipped.append((number, f"{item.method} {item.uri}"))
            continue
        try:
            calls.append(parse_exchange(number, exchange_from_recorded(item)))
        except Exception as exc:  # the parsers turn bad data into problems; should one
            # raise all the same, it is one line naming the interaction, not a traceback
            raise CassetteError(
                f"{path}: interaction {number}: could not be parsed ({type(exc).__name__}: {exc})"
            ) from None
    return calls, skipped


def _by_interaction(finding: Finding) -> Finding:
    """Call numbers are interaction numbers here; say so where the checks wrote 'call'."""
    message = finding.message.replace("(also on call", "(also on interaction")
    return replace(finding, message=message)


# ---- printing --------------------------------------------------------------------------------


def print_audit(audit: Audit, quiet: bool) -> None:
    if not quiet:
        print(f"{'findings' if audit.findings else 'ok':<9} {audit.path}  ({_described(audit)})")
        for number, what in audit.skipped:
            print(f"  {audit.path}:{number}: skipped, not a model call: {what}")
    for finding in audit.findings:
        print(f"  {finding_line(audit.path, finding)}")


def _described(audit: Audit) -> str:
    parts = [f"{audit.interactions} interaction{'s' if audit.interactions != 1 else ''}"]
    if audit.apis:
        parts.append(", ".join(audit.apis) + (", streamed" if audit.streamed else ""))
    if audit.findings:
        parts.append(f"{len(audit.findings)} finding{'s' if len(audit.findings) != 1 else ''}")
    return "; ".join(parts)


def finding_line(path: str, finding: Finding) -> str:
    where = f"{path}:{finding.call}" if finding.call is not None else path
    at = f" at {finding.path}" if finding.path else ""
    ids = f" [{', '.join(finding.ids)}]" if finding.ids else ""
    detail = ""
    if finding.expected or finding.actual:
        detail = f" (expected {finding.expected}; sent {finding.actual})"
    return f"{where}: {finding.rule}{at}{ids}: {finding.message}{detail}"


def summary(audits: Sequence[Audit], errors: int) -> str:
    flagged = [a for a in audits if a.findings]
    count = sum(len(a.findings) for a in audits)
    interactions = sum(a.interactions for a in audits)
    files = len(audits) + errors
    return (
        f"{files} cassette{'s' if files != 1 else ''}, {interactions} interactions read: "
        f"{len(audits) - len(flagged)} clean, {len(flagged)} with findings ({count} "
        f"finding{'s' if count != 1 else ''}), {errors} unreadable"
    )


def print_rules() -> None:
    from harness.checks import catalogue
    from harness.checks.registry import ALL_APIS

    for entry in wire_only(catalogue()):
        apis = "every API" if set(entry.apis) == ALL_APIS else ", ".join(entry.apis)
        print(f"{entry.id}  {entry.title} ({apis})")
        print(
            textwrap.fill(
                entry.description, width=92, initial_indent="    ", subsequent_indent="    "
            )
        )


def wire_only(entries: Iterable[CatalogueEntry]) -> Iterator[CatalogueEntry]:
    return (e for e in entries if e.needs == "wire")
