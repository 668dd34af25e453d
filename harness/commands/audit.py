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
    from harness.checks.scenario_audit import ScenarioAudit
    from harness.findings import Finding
    from harness.scenario.model import Scenario
    from harness.trace.model import Trace, WireCall

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
L15) need `harness run`, or --scenario. User messages are inferred from the requests: a new
last user message, or a conversation that stops growing, starts a new one.

--scenario FILE judges each cassette against the scenario it was recorded from (e.g. by
`harness emulate --record`), adding every check the scenario allows without a tool log: L3
(the budget, counted from the calls), L7 (the first message's context against the saved
history), L11 (the pending requests' results), L14 and L15 on each user message that ended on
a text reply (that text read as the answer, with the scenario's phrases) and the expected
ending. Each cassette's lines say which rules were judged and which were not, and why (L1, L4
and the expected tools and rounds need the tool log). A cassette of another scenario (its
`harness:` block, or a user message the scenario does not have) is an error.

Each finding is printed as FILE:INTERACTION: RULE at PATH [IDS]: WHAT (expected X; sent Y).
INTERACTION counts from 1 in the cassette ("call N" in a message is interaction N) and PATH
is the JSON path in that interaction's request (or response). Interactions that are no model
call (a token count, a model list) are skipped and named as such.

examples:
  harness audit cassettes/                        # every cassette under the folder
  harness audit run.yaml other.yaml --quiet       # only the findings and the totals
  harness audit --rules                           # what each wire-only rule checks
  harness audit --scenario scenarios/x.yaml out/anthropic/x.yaml   # judged with its scenario

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
    scenario: ScenarioAudit | None = None  # with --scenario: what was judged, what not


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
        "--scenario",
        metavar="FILE",
        default=None,
        help="the scenario the cassettes were recorded from: adds the checks it allows "
        "without a tool log (see above)",
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
    scenario = _scenario(args.scenario) if args.scenario is not None else None
    paths, errors = cassette_paths(args.cassettes)
    for problem in errors:
        _error_line(problem)
    audits: list[Audit] = []
    for path in paths:
        try:
            audit = audit_cassette(path, scenario)
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


def _scenario(given: str) -> Scenario:
    """The one scenario file named by --scenario; a ScenarioError (FILE:LINE) when invalid."""
    from harness.scenario import load_scenario
    from harness.settings import load_settings

    path = Path(given)
    if not path.is_file():
        what = "a folder" if path.is_dir() else "no such file"
        raise HarnessError(f"--scenario {given}: {what}; name one scenario YAML file")
    return load_scenario(path, load_settings())


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


def audit_cassette(path: Path, scenario: Scenario | None = None) -> Audit:
    """The wire-only findings of one cassette, or with `scenario` every finding it allows
    without a tool log; `CassetteError` (one line naming the file and the interaction) when it
    cannot be read or belongs to another scenario."""
    from harness.checks import input_from_trace, run_checks
    from harness.trace.model import Trace

    recorded = read(path)
    calls, skipped = _calls(path, recorded)
    trace = Trace(calls=tuple(calls))
    judged = None
    if scenario is not None:
        judged = _against(path, trace, scenario)
        findings = list(judged.findings)
    else:
        # `run_checks` never raises: a check that breaks on odd data is a finding of its rule.
        findings = run_checks(input_from_trace(trace), wire_only=True)
    findings = [*findings, *recorded_rejections(calls)]
    return Audit(
        path=str(path),
        interactions=len(recorded),
        apis=tuple(sorted({c.request.api for c in calls})),
        streamed=any(c.response.streamed for c in calls),
        findings=tuple(sorted((_by_interaction(f) for f in findings), key=lambda f: f.call or 0)),
        skipped=tuple(skipped),
        scenario=judged,
    )


def _against(path: Path, trace: Trace, scenario: Scenario) -> ScenarioAudit:
    """The cassette judged with its scenario; a CassetteError when it is another's."""
    from harness.checks.scenario_audit import judge
    from harness.checks.scenario_input import ScenarioMismatch, reading_from_trace

    recorded_for = _recorded_scenario(path)
    if recorded_for is not None and recorded_for != scenario.id:
        raise CassetteError(
            f"{path}: recorded from scenario {recorded_for!r} (its `harness:` block), not "
            f"{scenario.id!r} ({scenario.path}); pass that scenario's file to --scenario"
        )
    try:
        return judge(reading_from_trace(trace, scenario))
    except ScenarioMismatch as exc:
        raise CassetteError(
            f"{path}: {exc}; is it a cassette of another scenario? pass the scenario it was "
            "recorded from to --scenario"
        ) from None


def _recorded_scenario(path: Path) -> str | None:
    """The scenario id in our `harness:` block, None for a cassette without one."""
    from harness.cassettes.cassette import META_KEY
    from harness.cassettes.files import parse_yaml, read_cassette_text

    data = parse_yaml(str(path), read_cassette_text(str(path)))
    meta = data.get(META_KEY) if isinstance(data, dict) else None
    found = meta.get("scenario") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


# A recorded 4xx is the API's verdict that the request was wrong; 408 and 429 say nothing about
# the request (a timeout, a rate limit), so they are not findings.
NOT_A_VERDICT = frozenset({408, 429})
RULE_REJECTED = "api.rejected"


def recorded_rejections(calls: Sequence[WireCall]) -> list[Finding]:
    """One finding per recorded request the API rejected (4xx), with the provider's message."""
    from harness.findings import Finding

    out: list[Finding] = []
    for call in calls:
        status = call.response.status
        if status is None or not 400 <= status < 500 or status in NOT_A_VERDICT:
            continue
        said = call.response.error or "(no message)"
        out.append(
            Finding(
                rule=RULE_REJECTED,
                call=call.number,
                message=f"the API rejected the request ({status}): {said}",
                expected="a request the API accepts",
                actual=f"HTTP {status}",
            )
        )
    return out


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
        if audit.scenario is not None:
            for line in coverage_lines(audit.scenario):
                print(f"  {line}")
    for finding in audit.findings:
        print(f"  {finding_line(audit.path, finding)}")


def coverage_lines(judged: ScenarioAudit) -> list[str]:
    """Which rules the scenario let this audit judge, which it could not, and why."""
    from harness.checks.scenario_audit import IN_PART

    lines = [f"judged: {' '.join(judged.judged)}"]
    lines += [f"judged in part: {r}: {IN_PART[r]}" for r in judged.judged if r in IN_PART]
    for skipped in judged.skipped:
        where = ""
        if skipped.messages is not None:
            numbers = ", ".join(str(m + 1) for m in skipped.messages)
            where = f" on user message{'s' if len(skipped.messages) > 1 else ''} {numbers}"
        lines.append(f"not judged{where}: {' '.join(skipped.rules)}: {skipped.why}")
    return lines


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
