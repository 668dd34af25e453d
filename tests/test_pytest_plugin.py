"""The pytest plugin, driven through pytester: collection and item names, a passing and a
failing run (rule, evidence, transcript excerpt), option checks, record modes on cassettes,
drift as a warning or (strict) a failure, and a run under pytest-xdist."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SCENARIOS

pytest_plugins = ["pytester"]

PASSING = "one_tool_then_answer"
LIMIT = "limit_reached_pending_write"  # max_rounds 1, a write pending when the budget runs out
ANTHROPIC = ("--harness-provider", "anthropic")
SCRIPTED = ("--harness-source", "scripted")

# Skips the closing call: when the budget is spent it returns the model's last text, leaving the
# pending tool request unanswered (L11, L12) and the answer a half sentence (L14, L15).
SKIPS_CLOSING_CALL = """
from harness.chat import AssistantMessage, UserMessage
from harness.loop import LoopCall, LoopResult


def run(call: LoopCall) -> LoopResult:
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in call.tools
    ]
    messages = [{"role": "user", "content": call.message}]
    for number in range(call.max_rounds + 1):
        reply = call.client.messages.create(
            model=call.model, max_tokens=512, system=call.system, tools=tools, messages=messages
        )
        text = "".join(b.text for b in reply.content if b.type == "text")
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses or number == call.max_rounds:
            break
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        results = []
        for use in uses:
            tool = next(t for t in call.tools if t.name == use.name)
            content = tool(use.input)
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": content})
        messages.append({"role": "user", "content": results})
    chat = (*call.history, UserMessage(text=call.message), AssistantMessage(text=text))
    return LoopResult(answer=text, chat=chat)
"""


@pytest.fixture(scope="module", autouse=True)
def _sdks_loaded() -> None:
    """pytester drops modules first imported inside an in-process run; importing the SDKs
    here once keeps every run from importing them again (~2 s each)."""
    import anthropic  # noqa: F401
    import google.genai  # noqa: F401
    import openai  # noqa: F401

    import harness.loop.reference  # noqa: F401


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """A project with two library scenarios in ./scenarios and the faulty loop beside them."""
    folder = pytester.mkdir("scenarios")
    for name in (PASSING, LIMIT):
        shutil.copy(SCENARIOS / f"{name}.yaml", folder)
    pytester.makepyfile(skips_closing_call=SKIPS_CLOSING_CALL)
    yield pytester


def _collected(result: pytest.RunResult) -> list[str]:
    return [line.split("::")[-1] for line in result.outlines if "::" in line]


def test_nothing_is_collected_or_imported_unless_asked(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_own="""
        import sys

        def test_own_suite_untouched():
            heavy = ("harness.runner", "harness.scenario", "anthropic", "openai", "google.genai")
            assert [m for m in heavy if m in sys.modules] == []
        """
    )
    result = project.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1)


def test_items_are_named_scenario_provider_and_stream(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness", "--collect-only", "-q")
    names = _collected(result)
    assert f"{LIMIT}[anthropic-stream]" in names
    variants = [f"{p}{s}" for p in ("anthropic", "openai", "gemini") for s in ("", "-stream")]
    assert {f"{PASSING}[{v}]" for v in variants} <= set(names)
    assert len(names) == 12
    only = ("--harness-provider", "openai", "--harness-stream", "on")
    narrowed = project.runpytest("--harness", "--collect-only", "-q", *only)
    assert _collected(narrowed) == [f"{LIMIT}[openai-stream]", f"{PASSING}[openai-stream]"]
    picked = project.runpytest("--harness-scenario", LIMIT, "--collect-only", "-q", "-k", "gemini")
    assert _collected(picked) == [f"{LIMIT}[gemini]", f"{LIMIT}[gemini-stream]"]


def test_the_ini_value_turns_collection_on(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nharness_scenarios = scenarios\nharness_source = scripted\n")
    result = project.runpytest("--collect-only", "-q", "-m", "harness")
    assert len(_collected(result)) == 12


def test_a_conforming_loop_passes(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness", *SCRIPTED, *ANTHROPIC, "-k", PASSING)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["harness: 2 cell(s): 2 scripted"])


def test_an_async_loop_runs_with_no_extra_plugin(project: pytest.Pytester) -> None:
    """No pytest-asyncio: the harness awaits the loop itself, on every provider."""
    project.makepyfile(
        async_loop=(
            "from harness.loop.reference import async_reference_loop\n\n\n"
            "async def run(call):\n    return await async_reference_loop(call)\n"
        )
    )
    result = project.runpytest(
        "--harness",
        *SCRIPTED,
        "-k",
        PASSING,
        "--harness-loop",
        "async_loop:run",
        "-p",
        "no:asyncio",
    )
    result.assert_outcomes(passed=6)


def test_a_failure_shows_the_rule_its_evidence_and_the_transcript(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest(
        "--harness",
        *SCRIPTED,
        *ANTHROPIC,
        "--harness-stream",
        "off",
        "--harness-loop",
        "skips_closing_call:run",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"{LIMIT}[[]anthropic[]]: * finding(s) under * headline(s) · scripted · "
            "loop skips_closing_call:run *",
            "[[]Pending requests answered, not executed[]] L11 at call 2 *",
            "  ↳ [[]One closing call, text only[]] L12 at call 2: *no closing call followed "
            "(expected one closing call with tool choice none; sent no closing call) · follows "
            "from L11 (step-limit handling)",
            "  ↳ [[]Scenario expectations[]] expect.ending at *(expected 'step_limit'; sent "
            "'answer') · follows from L11 (expectations)",
            "transcript (all 2 model call(s)):",
            "  user message 1",
            "  call 1 (anthropic): tools [[]get_personal_record, save_goal[]] · tool choice unset",
            "    → user: Set me a goal of 100 kg on bench by March.",
            '    ← tool request get_personal_record (toolu_*) {"exercise": "bench press"}',
            "  call 2 (anthropic): *",
            "    → tool result get_personal_record (toolu_*): *85*",
            "    ← text: Saving your goal now.",
            "    ← tool request save_goal (toolu_*) *",
            "  final answer (user message 1): Saving your goal now.",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_the_failure_summary_names_the_headlines_with_their_titles() -> None:
    from harness.findings import Finding
    from harness.pytest_plugin.excerpt import failure_summary

    found = [Finding(rule="L13", message="m", call=4), Finding(rule="L11", message="m", call=4)]
    assert failure_summary(found) == (
        "2 finding(s) under 1 headline(s): L11 [Pending requests answered, not executed]"
    )


BAD_OPTIONS = [
    pytest.param(["--harness-source", "tape"], "*--harness-source: invalid choice: 'tape'*"),
    pytest.param(["--harness-record-mode", "sometimes"], "*--harness-record-mode: invalid choice*"),
    pytest.param(["--harness-loop", "no_colon"], "*'no_colon': write it as module:function*"),
    pytest.param(["--harness-loop", "absent:run"], "*--harness-loop 'absent:run': cannot import*"),
    pytest.param(
        ["--harness-scenario", "no_such"], "*--harness-scenario no_such: no such scenario*"
    ),
    pytest.param(["--harness-scenarios", "elsewhere"], "*elsewhere: no such file or folder*"),
    pytest.param(
        [*SCRIPTED, "--harness-record-mode", "once"],
        "*--harness-record-mode once records cassettes, so it needs --harness-source cassette*",
        id="record-from-scripted",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD_OPTIONS)
def test_bad_options_are_usage_errors(
    project: pytest.Pytester, args: list[str], message: str
) -> None:
    result = project.runpytest("--harness", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_bad_ini_source_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nharness_source = tape\n")
    result = project.runpytest("--harness")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini harness_source = 'tape': choose one of cassette*"])


def test_a_broken_scenario_is_one_clear_collection_error(project: pytest.Pytester) -> None:
    (project.path / "scenarios" / "broken.yaml").write_text("title: x\nmessages: 3\n")
    result = project.runpytest("--harness", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*broken.yaml:2: (document): 'rules' is a required property*"])
    assert "Traceback" not in result.stdout.str()


def _cassette(pytester: pytest.Pytester, scenario: str, stream: bool = False) -> Path:
    suffix = ".stream" if stream else ""
    return pytester.path / "cassettes" / "anthropic" / f"{scenario}{suffix}.yaml"


def test_record_modes_once_none_and_all(project: pytest.Pytester) -> None:
    cell = ("-k", PASSING, *ANTHROPIC)
    missing = project.runpytest("--harness", *cell)
    missing.assert_outcomes(failed=2)
    missing.stdout.fnmatch_lines(["*no cassette for*Record it with --harness-record-mode once*"])

    recorded = project.runpytest("--harness", *cell, "--harness-record-mode", "once")
    recorded.assert_outcomes(passed=2)
    recorded.stdout.fnmatch_lines(["harness: 2 cell(s): 2 recorded (written)"])
    written = _cassette(project, PASSING).read_text()
    assert _cassette(project, PASSING, stream=True).is_file()

    replayed = project.runpytest("--harness", *cell)
    replayed.assert_outcomes(passed=2)
    replayed.stdout.fnmatch_lines(["harness: 2 cell(s): 2 replayed"])

    again = project.runpytest("--harness", *cell, "--harness-record-mode", "all")
    again.stdout.fnmatch_lines(["harness: 2 cell(s): 2 recorded (unchanged)"])
    assert _cassette(project, PASSING).read_text() == written


def _drop_last_interaction(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    data["interactions"].pop()
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def test_new_episodes_rerecords_a_cell_that_left_its_recording(project: pytest.Pytester) -> None:
    cell = ("-k", f"{PASSING} and not stream", *ANTHROPIC)
    project.runpytest("--harness", *cell, "--harness-record-mode", "once").assert_outcomes(passed=1)
    _drop_last_interaction(_cassette(project, PASSING))

    once = project.runpytest("--harness", *cell, "--harness-record-mode", "once")
    once.assert_outcomes(failed=1)  # the file exists: once never records over it
    once.stdout.fnmatch_lines(["*replay.missing_recording at call 2*has no recording left*"])

    episodes = project.runpytest("--harness", *cell, "--harness-record-mode", "new_episodes")
    episodes.assert_outcomes(passed=1)
    episodes.stdout.fnmatch_lines(["harness: 1 cell(s): 1 recorded (written)"])
    project.runpytest("--harness", *cell).assert_outcomes(passed=1)


def test_drift_warns_and_fails_when_strict(project: pytest.Pytester) -> None:
    cell = ("-k", f"{PASSING} and not stream", *ANTHROPIC)
    project.runpytest("--harness", *cell, "--harness-record-mode", "once").assert_outcomes(passed=1)
    path = _cassette(project, PASSING)
    data = yaml.safe_load(path.read_text())
    data["interactions"][0]["request"]["parsed_body"]["system"] += " Be brief."
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))

    lenient = project.runpytest("--harness", *cell)
    lenient.assert_outcomes(passed=1, warnings=1)
    lenient.stdout.fnmatch_lines(["*HarnessDriftWarning*replay.drift at call 1*system*"])
    strict = project.runpytest("--harness", *cell, "--harness-strict")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["[[]Matches the recording[]] replay.drift at call 1*system*"])


def test_runs_under_xdist_recording_per_worker(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess(
        "-n",
        "2",
        "-v",
        "--harness",
        *ANTHROPIC,
        "--harness-record-mode",
        "once",
        "--harness-loop",
        "skips_closing_call:run",
        "--harness-report",
        "xdist-report",
    )
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "2 workers [[]4 items[]]",
            "*L12 at call 2: *no closing call followed*",
            "harness: report of 4 cell(s)*",
            "harness: 4 cell(s): 4 recorded (written)",
        ]
    )
    # One report holds both workers' cells, as a run without xdist (replaying them) does.
    merged = _cells(_report(project.path / "xdist-report"))
    alone = project.runpytest(
        "--harness",
        *ANTHROPIC,
        "--harness-loop",
        "skips_closing_call:run",
        "--harness-report",
        "alone-report",
    )
    alone.assert_outcomes(passed=2, failed=2)
    assert merged == _cells(_report(project.path / "alone-report"))
    assert [verdict for _, verdict, _ in merged] == ["fail", "fail", "pass", "pass"]
    assert {w for w in ("[gw0]", "[gw1]") if w in result.stdout.str()} == {"[gw0]", "[gw1]"}
    for scenario in (PASSING, LIMIT):
        for stream in (False, True):
            assert _cassette(project, scenario, stream).is_file()


def test_the_projects_settings_apply_to_collected_scenarios(project: pytest.Pytester) -> None:
    """[tool.harness] is read as by the CLI: a wrong key is one clear usage error."""
    project.makepyprojecttoml("[tool.harness]\nmax_round = 3\n")
    result = project.runpytest("--harness", *SCRIPTED, *ANTHROPIC, "-k", PASSING)
    result.stderr.fnmatch_lines(["ERROR: *[[]tool.harness[]]: unknown key 'max_round'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    project.makepyprojecttoml("[tool.harness]\nmax_rounds = 3\n")
    result = project.runpytest("--harness", *SCRIPTED, *ANTHROPIC, "-k", PASSING)
    result.assert_outcomes(passed=2)


def _report(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "results.json").read_text())
    return data


def _cells(data: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    return [
        (c["id"], c["verdict"], sorted({f["rule"] for f in c["findings"]})) for c in data["cells"]
    ]


def test_harness_report_writes_results_html_and_junit(project: pytest.Pytester) -> None:
    loop = ("--harness-loop", "skips_closing_call:run")
    result = project.runpytest("--harness", *SCRIPTED, *ANTHROPIC, *loop, "--harness-report", "out")
    result.assert_outcomes(passed=2, failed=2)
    out = project.path / "out"
    result.stdout.fnmatch_lines(
        [
            f"harness: report of 4 cell(s), the cells this session ran, in {out}: results.json, "
            "index.html, junit.xml"
        ]
    )
    data = _report(out)
    cells = _cells(data)
    assert [c[0] for c in cells] == [
        f"{LIMIT}[anthropic]",
        f"{LIMIT}[anthropic-stream]",
        f"{PASSING}[anthropic]",
        f"{PASSING}[anthropic-stream]",
    ]
    assert [c[1] for c in cells] == ["fail", "fail", "pass", "pass"]
    assert "L12" in cells[0][2] and data["run"]["loop"] == "skips_closing_call:run"
    assert data["run"]["source"] == "scripted"
    assert "L12" in (out / "index.html").read_text()
    assert 'failures="2"' in (out / "junit.xml").read_text()
    assert not (project.path / "reports").exists()


def test_no_report_unless_asked_and_the_ini_value_asks(project: pytest.Pytester) -> None:
    cell = ("--harness", *SCRIPTED, *ANTHROPIC, "-k", PASSING)
    project.runpytest(*cell).assert_outcomes(passed=2)
    assert not any(project.path.rglob("results.json"))
    project.makeini("[pytest]\nharness_report = ini-out\n")
    project.runpytest(*cell).assert_outcomes(passed=2)
    assert [c[1] for c in _cells(_report(project.path / "ini-out"))] == ["pass", "pass"]


def test_a_report_folder_that_cannot_be_written_is_one_line(project: pytest.Pytester) -> None:
    (project.path / "taken").write_text("a file, not a folder")
    cell = ("--harness", *SCRIPTED, *ANTHROPIC, "-k", PASSING)
    result = project.runpytest(*cell, "--harness-report", "taken")
    result.stdout.fnmatch_lines(["harness: report not written: *taken*cannot write it*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_plugin_reads_what_to_run_from_tool_harness(project: pytest.Pytester) -> None:
    """[tool.harness] gives the loop, scenarios, cassettes, providers and stream; the ini
    value overrides it, and the command line the ini value."""
    (project.path / "scenarios").rename(project.path / "library")
    project.makepyprojecttoml(
        '[tool.harness]\nloop = "skips_closing_call:run"\nscenarios = ["library"]\n'
        'cassettes = "tapes"\nproviders = ["anthropic"]\nstream = "off"\n'
        'models = {anthropic = "claude-from-settings"}\n'
    )
    recorded = project.runpytest("--harness", "--harness-record-mode", "once", "-v")
    recorded.assert_outcomes(passed=1, failed=1)  # the project's faulty loop, 2 cells
    recorded.stdout.fnmatch_lines([f"*{LIMIT}[[]anthropic[]] FAILED*"])
    tape = project.path / "tapes" / "anthropic" / f"{PASSING}.yaml"
    assert "claude-from-settings" in tape.read_text()
    project.makepyprojecttoml(
        '[tool.harness]\nloop = "skips_closing_call:run"\nscenarios = ["library"]\n'
        'cassettes = "tapes"\nproviders = ["anthropic"]\nstream = "off"\n\n'
        '[tool.pytest.ini_options]\nharness_loop = "harness.loop.reference:reference_loop"\n'
    )
    ini = project.runpytest("--harness", *SCRIPTED)
    ini.assert_outcomes(passed=2)  # the ini's (reference) loop
    flag = project.runpytest("--harness", *SCRIPTED, "--harness-loop", "skips_closing_call:run")
    flag.assert_outcomes(passed=1, failed=1)


def test_a_bad_tool_harness_table_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyprojecttoml('[tool.harness]\nloop = "no_colon"\n')
    result = project.runpytest("--harness", *SCRIPTED)
    result.stderr.fnmatch_lines(['*[[]tool.harness[]] loop: write it as "module:function"*'])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        project.runpytest("-q", "-p", "no:cacheprovider").ret == pytest.ExitCode.NO_TESTS_COLLECTED
    )
