"""The values of a results file (schema `harness-results`, version `SCHEMA_VERSION`).

One file per run; the console summary, JUnit and the HTML report read only this. Field names
are the JSON keys (see `schema.json` beside this module); `codec.py` converts both ways.
The neutral transcript mirrors `harness.trace.model` minus the raw wire parts, which are kept
once per exchange in `ExchangeRecord` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

SCHEMA_NAME = "harness-results"
SCHEMA_VERSION = 1

Verdict: TypeAlias = Literal["pass", "fail", "n/a"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "n/a")


# ---- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunPart:
    """One run merged into a results file (`harness report A B …`, or a partial run merged into
    the full one): when it ran, how it was started, and how many of the cells are its."""

    started: str
    finished: str
    elapsed: float
    argv: tuple[str, ...]
    shard: str | None
    cells: int


@dataclass(frozen=True, kw_only=True)
class RunMeta:
    harness_version: str
    sdk_versions: Mapping[str, str]  # distribution name -> version ("" when not installed)
    python: str
    source: str  # cassette | scripted | live
    loop: str  # "reference" or the module:function under test
    started: str  # ISO 8601, UTC
    finished: str
    elapsed: float  # seconds
    argv: tuple[str, ...]
    # `--shard K/N`: this run is shard "K/N" of `selection` (every cell id of the whole run, in
    # run order), and `library` fingerprints the scenario files, so `harness report` merges
    # only shards of one run of one library.
    strict: bool = False  # --strict: drift from a recording failed cells
    shard: str | None = None
    selection: tuple[str, ...] = ()
    library: str = ""
    parts: tuple[RunPart, ...] = ()  # the runs a merged file was made of (empty: one run)


@dataclass(frozen=True, kw_only=True)
class RuleInfo:
    """A row of the rule × provider matrix: a loop rule, a provider rule or a harness group."""

    id: str
    title: str
    description: str = ""


# ---- the neutral transcript ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ToolCallRecord:
    id: str | None
    name: str
    arguments: Any
    path: str
    item_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolResultRecord:
    call_id: str | None
    name: str | None
    content: str
    is_error: bool
    path: str


@dataclass(frozen=True, kw_only=True)
class OpaqueRecord:
    """A reasoning item / thinking block / signature; the token itself stays in the raw."""

    kind: str
    id: str | None
    text: str | None
    token_chars: int
    path: str


@dataclass(frozen=True, kw_only=True)
class MessageRecord:
    role: Literal["user", "model", "tool"]
    text: str
    calls: tuple[ToolCallRecord, ...]
    results: tuple[ToolResultRecord, ...]
    opaque: tuple[OpaqueRecord, ...]
    path: str


@dataclass(frozen=True, kw_only=True)
class RequestRecord:
    api: str
    model: str
    stream: bool
    declared_tools: tuple[str, ...]
    tool_choice: str  # auto | none | required | named | unset, as sent
    tool_choice_name: str | None
    system: str
    messages: tuple[MessageRecord, ...]
    store: bool | None
    previous_response_id: str | None
    parallel_tool_calls: bool | None
    size_bytes: int


@dataclass(frozen=True, kw_only=True)
class ResponseRecord:
    status: int | None
    text: str
    calls: tuple[ToolCallRecord, ...]
    opaque: tuple[OpaqueRecord, ...]
    stop_reason: str | None
    usage: Mapping[str, int]
    error: str | None
    error_type: str | None
    id: str | None
    streamed: bool


@dataclass(frozen=True, kw_only=True)
class ProblemRecord:
    message: str
    path: str
    side: str


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    """One model call, numbered from 1 in the cell (the number findings refer to)."""

    number: int
    query: int  # the user message it served (0-based)
    exchange: int  # the `seq` of its raw exchange
    url: str
    request: RequestRecord
    response: ResponseRecord
    problems: tuple[ProblemRecord, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SseEventRecord:
    event: str | None
    data: Any


@dataclass(frozen=True, kw_only=True)
class ExchangeRecord:
    """One HTTP exchange exactly as captured (secrets already scrubbed)."""

    seq: int
    method: str
    url: str
    status: int | None
    request_headers: Mapping[str, str]
    request_body: Any
    response_headers: Mapping[str, str]
    response_body: Any
    events: tuple[SseEventRecord, ...] | None
    error: str | None
    elapsed: float


# ---- a cell ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ScenarioRef:
    id: str
    title: str
    path: str
    rules: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Expected:
    ending: str
    rounds: int
    tools: tuple[str, ...]
    not_run: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class QueryRecord:
    index: int
    message: str
    answer: str
    error: str | None
    ending: str  # answer | step_limit | error
    rounds: int
    executed: tuple[str, ...]
    calls: tuple[int, ...]  # call numbers
    expected: Expected | None


@dataclass(frozen=True, kw_only=True)
class ToolRunRecord:
    seq: int
    name: str
    arguments: Any
    result: str
    is_error: bool
    after_exchange: int  # ran after the exchange with this seq (0: before any)
    elapsed: float


@dataclass(frozen=True, kw_only=True)
class FindingRecord:
    rule: str
    message: str
    call: int | None = None
    query: int | None = None
    path: str = ""
    ids: tuple[str, ...] = ()
    expected: str = ""
    actual: str = ""


@dataclass(frozen=True, kw_only=True)
class DriftRecord:
    """A request that differs from its recording (cassette source)."""

    call: int | None
    path: str
    message: str


@dataclass(frozen=True, kw_only=True)
class UsageTotals:
    input_tokens: int
    output_tokens: int
    by_key: Mapping[str, int]  # every usage key the provider sent, summed over the calls


@dataclass(frozen=True, kw_only=True)
class Timing:
    elapsed: float  # the whole cell, seconds
    http: float  # summed exchange time
    tools: float  # summed tool time


@dataclass(frozen=True, kw_only=True)
class CellResult:
    id: str  # scenario[provider] / scenario[provider-stream]
    scenario: ScenarioRef
    provider: str
    model: str
    source: str
    stream: bool
    verdict: Literal["pass", "fail"]  # fail when there is any finding
    error: str | None
    queries: tuple[QueryRecord, ...]
    tool_runs: tuple[ToolRunRecord, ...]
    findings: tuple[FindingRecord, ...]
    verdicts: Mapping[str, Verdict]  # rule id -> verdict
    calls: tuple[CallRecord, ...]
    exchanges: tuple[ExchangeRecord, ...]
    usage: UsageTotals
    drift: tuple[DriftRecord, ...]
    timing: Timing


@dataclass(frozen=True, kw_only=True)
class Results:
    schema: str = SCHEMA_NAME
    schema_version: int = SCHEMA_VERSION
    run: RunMeta
    rules: tuple[RuleInfo, ...]
    cells: tuple[CellResult, ...] = field(default_factory=tuple)

    @property
    def conforms(self) -> bool:
        return all(c.verdict == "pass" for c in self.cells)

    def cell(self, cell_id: str) -> CellResult | None:
        return next((c for c in self.cells if c.id == cell_id), None)
