"""One headline per defect: a cell's findings grouped by root cause.

One defect often breaks several rules: a loop that chains OpenAI calls with
`previous_response_id` sends only the new items, so the turn it leaves out (L5), the results
without their request (L6), the active sequence cut short (L8), the API's answer to the chain
(`api.O4`) and the broken ending (L15) all follow from it. The person reading a report should
see that one defect first, and what it caused beneath it.

How the findings are grouped, in three steps:

1. **Place.** Each finding is placed where it happened: its user message (query) and its call
   number. A finding with no call number sorts after its query's calls; an API rejection
   without one is placed at the failed call whose error it quotes, and the loop's own error at
   the query that ended in it. At one call, what the request carries from before (the stored
   state, the selected context) comes before the round's own turn and results, then the round
   count and the step-limit handling, the API's reaction to the request, the ending the person
   got, the loop's crash and last the scenario's expectations (`PRECEDENCE`).
2. **Headline.** Walking the findings in that order, a finding becomes a consequence of the
   first headline of its query whose group can cause it — the headline's rule, or a consequence
   already attached to it, is a cause in one of the named relations (`RELATIONS`), each with
   the reason it is shown with. A finding not tied to a query may follow from a headline of any
   query.
3. Every other finding is a **headline** of its own: two independent defects are two headlines.

Grouping is presentation and attribution only: every finding stays in the cell, and the cell's
verdict (any finding fails it) does not change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from harness.results.model import CallRecord, CellResult

if TYPE_CHECKING:
    from harness.runner import CellRun

# ---- the relations -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Relation:
    """`causes` can cause `effects`. A pattern is a rule id, or `group.*` for every rule whose
    id starts with `group.` (`api.*`: every API rejection); `*` is every rule."""

    name: str
    causes: tuple[str, ...]
    effects: tuple[str, ...]
    why: str
    not_causes: tuple[str, ...] = ()  # patterns taken out of `causes`

    def links(self, cause: str, effect: str) -> bool:
        return (
            matches(cause, self.causes)
            and not matches(cause, self.not_causes)
            and matches(effect, self.effects)
        )


STATEFUL = ("L10", "openai.store_false", "openai.no_previous_response_id")
# A loop that leans on what the API stored (L10 as judged on the chain, previous_response_id);
# not sending store: false, or not asking for the encrypted reasoning, only lets the API keep a
# copy: a loop that resends everything loses nothing by it.
LEANS_ON_STORED_STATE = ("L10", "openai.no_previous_response_id")
LETS_THE_API_STORE = ("openai.store_false", "openai.reasoning_requested")

SAME_RULE = Relation(
    name="same rule",
    causes=("*",),
    effects=("*",),
    why="the same rule broken again in the same user message: one defect seen at another call "
    "or from another side",
)

RELATIONS: tuple[Relation, ...] = (
    Relation(
        name="stored state",
        causes=LEANS_ON_STORED_STATE,
        effects=("L5", "L6", "L7", "L8", "L10", "openai.*", "api.*", "L14", "L15"),
        why="a call that leans on the state the API stored sends only the new items, so the "
        "turns, results and context it leaves out, the API's answer to the chain and the "
        "broken ending all follow from it",
    ),
    Relation(
        name="state left with the API",
        causes=LETS_THE_API_STORE,
        effects=(*LEANS_ON_STORED_STATE, *LETS_THE_API_STORE),
        why="not sending store: false and not asking for the encrypted reasoning is one choice: "
        "keeping the conversation's state with the API instead of in the loop (L10)",
    ),
    Relation(
        name="context cut",
        causes=("L7", "L8", "L9"),
        effects=("L5", "L6", "L7", "L8"),
        why="a context cut in the wrong place leaves requests without their results (or "
        "results without their requests) at the start of what is sent",
    ),
    Relation(
        name="round count",
        causes=("L1", "L3"),
        effects=("L1", "L3", "L11", "L12", "L13"),
        why="counting the rounds wrongly runs a round too many or too few, so the tools, the "
        "budget and the step-limit handling all come at the wrong call",
    ),
    Relation(
        name="step-limit handling",
        causes=("L11", "L12"),
        effects=("L2", "L3", "L11", "L12", "L13", "L14", "L15", "anthropic.tools_declared"),
        why="when the pending requests are not answered as the rules say (run anyway, or left "
        "unanswered), the round count, the closing call, its instructions and the answer the "
        "person gets go wrong with them",
    ),
    Relation(
        name="closing order",
        causes=("L13",),
        effects=("L11", "L14"),
        why="the closing order put in a tool result replaces the pending request's "
        "not-executed text, and the closing answer follows what that call carried",
    ),
    Relation(
        name="answer replaced",
        causes=("L2", "L14"),
        effects=("L2", "L14", "L15"),
        why="handing back something other than the text of the reply that ended the loop breaks "
        "the normal exit, the closing answer and the ending together",
    ),
    Relation(
        name="closing call without tools",
        causes=("anthropic.tools_declared",),
        effects=("L12",),
        why="a closing call that drops the tools instead of setting tool choice none breaks both",
    ),
    Relation(
        name="automatic function calling",
        causes=("gemini.no_afc",),
        effects=("L1", "L5", "L6"),
        why="the SDK ran the tools and wrote their results itself, without the call ids and "
        "outside the loop's rounds",
    ),
    Relation(
        name="rejected request",
        causes=("L*", "anthropic.*", "gemini.*", "openai.*", "wire.parse"),
        effects=("api.*",),
        why="the real API rejects a request that breaks this rule",
    ),
    Relation(
        name="failed call",
        causes=("api.*", "harness.loop_error"),
        effects=("L1", "L14", "L15", "harness.loop_error"),
        why="a rejected call or a crash ends the query early: the last round's results never go "
        "back and the person gets an error instead of an answer",
    ),
    Relation(
        name="past the script",
        causes=("L1", "L2", "L3", "L5", "L6", "L11", "L12"),
        effects=("script.*",),
        why="a loop that makes more calls, or sends turns back split, runs past the scenario's "
        "script: the script's limit is reached because of this defect",
    ),
    Relation(
        name="unfinished round",
        causes=("L1",),
        effects=("L15", "harness.loop_error"),
        why="a round left unfinished (a tool ran and its result never went back) means the loop "
        "stopped in the middle of the query",
    ),
    Relation(
        name="expectations",
        causes=("*",),
        not_causes=LETS_THE_API_STORE,
        effects=("expect.*",),
        why="the scenario's expected ending, rounds and tools differ because of the defect above",
    ),
)


def matches(rule: str, patterns: Iterable[str]) -> bool:
    """`L*` matches the loop rules L1–L15; `group.*` every rule of the group; `*` every rule."""
    for pattern in patterns:
        if pattern == "*" or pattern == rule:
            return True
        if pattern == "L*" and rule[:1] == "L" and rule[1:].isdigit():
            return True
        if pattern.endswith(".*") and rule.startswith(pattern[:-1]):
            return True
    return False


def relation_between(cause: str, effect: str) -> Relation | None:
    """The relation saying `cause` can cause `effect`: the same rule again, or the first of
    `RELATIONS` that links them."""
    if cause == effect:
        return SAME_RULE
    return next((r for r in RELATIONS if r.links(cause, effect)), None)


# ---- placing a finding ----------------------------------------------------------------------

# At one call, findings are taken in this order (the first pattern a rule matches): what the
# request carries from before (stored state, then the selected context, the most specific
# first), this round's turn and results, the round count and the step-limit handling (all in
# the request), the API's reaction to it, the ending the person got, the loop's crash, and the
# scenario's expectations. A rule not listed sorts with the round's own turn.
PRECEDENCE: tuple[str, ...] = (
    "wire.parse",
    *STATEFUL,
    "openai.reasoning_requested",
    "L9",
    "L8",
    "L7",
    "gemini.no_afc",
    "L5",
    "L6",
    "anthropic.*",
    "gemini.*",
    "openai.*",
    "L4",
    # Running past the budget (L3) or running a pending request (L11) is the first deviation
    # when a loop then stops with that round unfinished (L1 at the same call): the framework
    # pattern "run the pending write, then raise at the limit".
    "L3",
    "L11",
    "L1",
    "L12",
    "L13",
    "api.*",
    "L14",
    "L15",
    "L2",
    "harness.*",
    "exec.*",
    "replay.*",
    "script.*",
    "expect.*",
)
UNLISTED = PRECEDENCE.index("openai.*")


def precedence(rule: str) -> int:
    return next((i for i, p in enumerate(PRECEDENCE) if matches(rule, (p,))), UNLISTED)


class FindingLike(Protocol):
    """What grouping reads of a finding: `harness.findings.Finding` and the results file's
    `FindingRecord` both fit."""

    @property
    def rule(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def call(self) -> int | None: ...

    @property
    def query(self) -> int | None: ...


@dataclass(frozen=True, kw_only=True)
class CallSite:
    """A model call as far as placing findings goes: its number, its query, and the error the
    API answered it with (a rejection, status 400 or more), if any."""

    number: int
    query: int
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Trail:
    """Where a cell's findings can be placed: its calls, and each query's loop error."""

    calls: Sequence[CallSite] = ()
    query_errors: Sequence[str | None] = ()


@dataclass(frozen=True, kw_only=True)
class Place:
    query: int | None
    call: int | None

    def key(self) -> tuple[float, float]:
        inf = float("inf")
        return (inf if self.query is None else self.query, inf if self.call is None else self.call)


def call_of(finding: FindingLike, calls: Sequence[CallSite]) -> int | None:
    """The call a finding concerns: its own `call`, or for an API rejection (which the source
    reports without a number) the failed call whose error message it quotes."""
    if finding.call is not None or not finding.rule.startswith("api."):
        return finding.call
    return next((c.number for c in calls if c.error and c.error in finding.message), None)


def place(finding: FindingLike, trail: Trail) -> Place:
    call = call_of(finding, trail.calls)
    query = finding.query
    if query is None and call is not None:
        query = next((c.query for c in trail.calls if c.number == call), None)
    if query is None and finding.rule == "harness.loop_error":
        errors = trail.query_errors
        query = next((i for i, e in enumerate(errors) if e and finding.message.startswith(e)), None)
    return Place(query=query, call=call)


# ---- grouping -------------------------------------------------------------------------------

F = TypeVar("F", bound=FindingLike)


@dataclass(frozen=True, kw_only=True)
class Consequence(Generic[F]):
    finding: F
    place: Place
    cause: F  # the finding (the headline or an earlier consequence) it follows from
    relation: Relation


@dataclass(frozen=True, kw_only=True)
class Headline(Generic[F]):
    finding: F
    place: Place
    consequences: tuple[Consequence[F], ...] = ()

    @property
    def findings(self) -> tuple[F, ...]:
        return (self.finding, *(c.finding for c in self.consequences))


def group(findings: Sequence[F], trail: Trail = Trail()) -> list[Headline[F]]:
    """The cell's findings as headlines, in trace order, each with its consequences; every
    finding appears exactly once."""
    placed = [(place(f, trail), f) for f in findings]
    order = sorted(
        range(len(placed)), key=lambda i: (*placed[i][0].key(), precedence(placed[i][1].rule), i)
    )
    heads: list[tuple[Place, F, list[Consequence[F]]]] = []
    for i in order:
        where, finding = placed[i]
        for head_place, head, consequences in heads:
            if where.query is not None and head_place.query != where.query:
                continue
            found = _explained(finding, [head, *(c.finding for c in consequences)])
            if found is not None:
                consequences.append(
                    Consequence(finding=finding, place=where, cause=found[0], relation=found[1])
                )
                break
        else:
            heads.append((where, finding, []))
    return [Headline(finding=f, place=p, consequences=tuple(cs)) for p, f, cs in heads]


def _explained(finding: F, causes: Sequence[F]) -> tuple[F, Relation] | None:
    for cause in causes:
        relation = relation_between(cause.rule, finding.rule)
        if relation is not None:
            return cause, relation
    return None


# ---- titles ---------------------------------------------------------------------------------


def title_of(rule: str, titles: Mapping[str, str]) -> str:
    """A rule's title (`titles`: rule or group id -> title, e.g. a results file's `rules`); a
    harness finding (`api.O4`, `expect.ending`) takes its group's title; "" when unknown."""
    if rule in titles:
        return titles[rule]
    head = rule.split(".", 1)[0]
    return titles.get(head, "") if head != rule else ""


def titled(rule: str, titles: Mapping[str, str]) -> str:
    """`L10 [OpenAI keeps no state (openai-responses)]`, or the bare id when it has no title."""
    title = title_of(rule, titles)
    return f"{rule} [{title}]" if title else rule


# ---- trails from a results file or a run --------------------------------------------------------


def trail_of(calls: Sequence[CallRecord], query_errors: Iterable[str | None]) -> Trail:
    """A cell's trail from its call records (`harness.results.transcript.call_records`)."""
    sites = [
        CallSite(
            number=c.number,
            query=c.query,
            error=c.response.error if (c.response.status or 0) >= 400 else None,
        )
        for c in calls
    ]
    return Trail(calls=sites, query_errors=tuple(query_errors))


def cell_trail(cell: CellResult) -> Trail:
    return trail_of(cell.calls, (q.error for q in cell.queries))


def run_trail(run: CellRun) -> Trail:
    from harness.results.transcript import call_records

    return trail_of(call_records(run.queries), (q.error for q in run.queries))
