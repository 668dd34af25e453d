"""`harness record` and `harness run --source cassette` through the CLI: offline replay of what
was recorded, atomic and clean-only writes, clear errors (exit 2) for broken cassettes, drift
under --strict, and live refreshes pointed at the emulator through the SDKs' base-URL variables
with fake keys (never the real APIs)."""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest

from harness.cli import main
from harness.emulator.server import Emulator
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.scenario import load_scenario
from harness.scrub import find_key
from tests.conftest import SCENARIOS

ONE = str(SCENARIOS / "one_tool_then_answer.yaml")
PARALLEL = str(SCENARIOS / "parallel_requests_one_turn.yaml")
FAKE_KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "Fake0Key1" * 6,
    "OPENAI_API_KEY": "sk-proj-" + "Fake2Key3" * 6,
    "GEMINI_API_KEY": "AIzaSy" + "Fake4Key5" * 4,
}


@pytest.fixture(autouse=True)
def _private_parse_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests never read or fill the developer's cassette parse cache."""
    cache = tmp_path_factory.getbasetemp() / "parse-cache"
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", str(cache))


@pytest.fixture(autouse=True)
def _reports_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`harness run` writes its reports under ./reports: a folder of the test's own, never
    the repository's reports/."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


def record(folder: Path, *args: str) -> int:
    return main(["record", "--cassettes", str(folder), *args])


def run(folder: Path, *args: str) -> int:
    return main(["run", "--cassettes", str(folder), *args])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("recorded")
    assert record(folder, "--source", "scripted", ONE, PARALLEL) == 0
    return folder


@pytest.fixture
def copy(recorded: Path, tmp_path: Path) -> Path:
    for name, data in snapshot(recorded).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return tmp_path


def test_record_writes_one_file_per_cell(recorded: Path) -> None:
    names = set(snapshot(recorded))
    assert len(names) == 12 and "gemini/parallel_requests_one_turn.stream.yaml" in names


def test_run_replays_offline_by_default(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(recorded, ONE, PARALLEL, "--strict") == 0
    captured = capsys.readouterr()
    assert "source cassette" in captured.err and "12 cell(s): 12 conform" in captured.out


def test_rerecording_the_same_leaves_files_untouched(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(copy)
    assert record(copy, "--source", "scripted", ONE, "--provider", "openai") == 0
    assert snapshot(copy) == before
    assert "0 written, 2 unchanged" in capsys.readouterr().err


def failing_loop(call: LoopCall) -> LoopResult:
    """Makes one model call, then fails like a buggy loop."""
    reference_loop_first_call(call)
    raise RuntimeError("the app crashed after its first call")


def interrupted_loop(call: LoopCall) -> LoopResult:
    """Makes one model call, then the user presses Ctrl-C."""
    reference_loop_first_call(call)
    raise KeyboardInterrupt


def reference_loop_first_call(call: LoopCall) -> None:
    from dataclasses import replace

    reference_loop(replace(call, max_rounds=0))


def test_an_interrupted_run_leaves_cassettes_byte_identical(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(copy)
    spec = "tests.commands.test_record:interrupted_loop"
    args = ("--source", "scripted", ONE, PARALLEL, "--loop", spec, "--jobs", "1")
    assert record(copy, *args) == 130
    assert snapshot(copy) == before
    assert "interrupted" in capsys.readouterr().err


def erring_loop(call: LoopCall) -> LoopResult:
    """Makes one model call, then reports an error instead of an answer."""
    reference_loop_first_call(call)
    return LoopResult(answer="", chat=call.history, error="the app gave up")


@pytest.mark.parametrize(
    ("loop", "says"),
    [
        ("failing_loop", "recorded (loop raised: RuntimeError: the app crashed after its first"),
        ("erring_loop", "recorded (loop reported an error on user message 1: the app gave up)"),
    ],
)
def test_a_loop_that_fails_after_whole_exchanges_is_recorded_and_says_so(
    copy: Path, capsys: pytest.CaptureFixture[str], loop: str, says: str
) -> None:
    """The cassette is the provider's side: every exchange arrived whole, so it is kept, and
    the output says how the loop ended; replaying it gives the loop's findings again."""
    before = snapshot(copy)
    spec = f"tests.commands.test_record:{loop}"
    one_cell = (ONE, "--provider", "anthropic", "--stream", "off", "--loop", spec)
    assert record(copy, "--source", "scripted", *one_cell) == 0
    err = capsys.readouterr().err
    assert says in err and "1 written" in err and "(1 recorded where the loop failed)" in err
    after = snapshot(copy)
    changed = [name for name in after if after[name] != before[name]]
    assert changed == ["anthropic/one_tool_then_answer.yaml"]
    scripted, replayed = copy / "scripted.json", copy / "replayed.json"
    assert run(copy, *one_cell, "--source", "scripted", "--results", str(scripted)) == 1
    assert run(copy, *one_cell, "--strict", "--results", str(replayed)) == 1
    assert findings_of(replayed) == findings_of(scripted) != []


def findings_of(path: Path) -> list[tuple[str, int | None, str]]:
    """Each cell's findings (rule, call, message without the source's wording)."""
    from harness.results.files import read_results

    cells = read_results(path).cells
    return [(f.rule, f.call, f.message.split(" at /")[0]) for c in cells for f in c.findings]


CUT_FIRST_CALL = (
    "        - text: Let me look at your history.",
    "        - fault: {kind: stream_cut}\n          text: Let me look at your history.",
)


def test_a_cut_exchange_leaves_the_cassette_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The loop reports the cut as an error; the exchange did not arrive whole, so the old
    bytes stay, whatever the loop did."""
    text = Path(ONE).read_text()
    assert CUT_FIRST_CALL[0] in text
    scenario = tmp_path / "scenarios" / "one_tool_then_answer.yaml"
    scenario.parent.mkdir()
    scenario.write_text(text.replace(*CUT_FIRST_CALL))
    old = tmp_path / "cassettes" / "anthropic" / "one_tool_then_answer.stream.yaml"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"# the old recording\n")
    one_cell = (str(scenario), "--provider", "anthropic", "--stream", "on")
    assert record(tmp_path / "cassettes", "--source", "scripted", *one_cell) == 1
    assert old.read_bytes() == b"# the old recording\n"
    err = capsys.readouterr().err
    assert "call 1: the response did not arrive whole" in err and "left as it was" in err


def rejected_loop(call: LoopCall) -> LoopResult:
    """Answers, then sends one request the API rejects (a tool result with no call)."""
    result = reference_loop(call)
    # a loop that swallows the error: the recording must still be refused
    with contextlib.suppress(Exception):
        call.client.messages.create(
            model=call.model,
            max_tokens=10,
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}],
                }
            ],
        )
    return result


def test_a_run_the_api_rejected_is_not_recorded(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(copy)
    spec = "tests.commands.test_record:rejected_loop"
    assert record(copy, "--source", "scripted", ONE, "--provider", "anthropic", "--loop", spec) == 1
    assert snapshot(copy) == before
    assert "the emulator rejected a request (400" in capsys.readouterr().err


def test_a_corrupted_cassette_is_one_line_and_exit_2(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy / "openai" / "one_tool_then_answer.yaml"
    path.write_text(path.read_text().replace("code: 200", "code: OK", 1))
    assert run(copy, ONE) == 2
    err = capsys.readouterr().err
    assert f"{path}: interaction 1: response.status.code must be an HTTP status" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_missing_cassettes_are_listed_with_the_command_to_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, ONE, "--provider", "gemini") == 2
    err = capsys.readouterr().err
    assert "2 cassette(s) missing" in err and "harness record --source scripted" in err


def drifting_loop(call: LoopCall) -> LoopResult:
    """The reference loop, except that its second Anthropic request has another system text."""
    original = call.client.messages.create
    counter = itertools.count(1)

    def create(**kwargs: Any) -> Any:
        if next(counter) == 2:
            kwargs["system"] = "Answer in French."
        return original(**kwargs)

    call.client.messages.create = create
    return reference_loop(call)


def test_drift_warns_and_fails_only_with_strict(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = (
        ONE,
        "--provider",
        "anthropic",
        "--stream",
        "off",
        "--loop",
        "tests.commands.test_record:drifting_loop",
    )
    assert run(recorded, *args) == 0
    err = capsys.readouterr().err
    assert "warning (fails with --strict): replay.drift at call 2 system" in err
    assert "sent 'Answer in French.'" in err
    assert run(recorded, *args, "--strict") == 1
    assert "replay.drift at call 2" in capsys.readouterr().err


def test_drift_ignore_in_pyproject_leaves_a_field_out(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`drift_ignore` in [tool.harness] is read by `harness run` (the current folder's)."""
    Path("pyproject.toml").write_text('[tool.harness]\ndrift_ignore = ["anthropic:system"]\n')
    spec = "tests.commands.test_record:drifting_loop"
    args = (ONE, "--provider", "anthropic", "--stream", "off", "--loop", spec, "--strict")
    assert run(recorded, *args) == 0
    assert "replay.drift" not in capsys.readouterr().err
    Path("pyproject.toml").write_text('[tool.harness]\ndrift_ignore = ["gemini:system"]\n')
    assert run(recorded, *args) == 1


def test_model_override_is_refused_for_replay(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(recorded, ONE, "--model", "openai=gpt-5") == 2
    assert "--model does not apply to --source cassette" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------
# Live refresh, pointed at the emulator through the SDKs' own base-URL variables.


LEAKED: list[str] = []  # the URLs leaky_loop sent, keys included


def leaky_loop(call: LoopCall) -> LoopResult:
    """The reference loop with every credential position filled: each request also carries
    the fake keys in extra headers and in the query string."""
    http = getattr(call.client, "_client", None) or call.client._api_client._httpx_client
    assert isinstance(http, httpx2.Client)
    keys = list(FAKE_KEYS.values())

    def add_keys(request: httpx2.Request) -> None:
        for header in (
            "authorization",
            "x-api-key",
            "x-goog-api-key",
            "api-key",
            "proxy-authorization",
        ):
            request.headers[header] = f"Bearer {keys[0]}" if "auth" in header else keys[1]
        request.headers["cookie"] = f"session={keys[2]}"
        request.headers["x-my-gateway-key"] = keys[0]
        request.url = request.url.copy_merge_params({"key": keys[2], "api_key": keys[1]})
        LEAKED.append(str(request.url))

    http.event_hooks["request"] = [*http.event_hooks["request"], add_keys]
    return reference_loop(call)


def point_at(
    monkeypatch: pytest.MonkeyPatch, emulator: Emulator, scenario_id: str, run: str
) -> None:
    urls = emulator.base_urls(scenario_id, run)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", urls["anthropic"])
    monkeypatch.setenv("OPENAI_BASE_URL", urls["openai"])
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", urls["gemini"])
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)


def test_live_refresh_keeps_no_key_and_replays(
    emulator: Emulator,
    run_id: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    point_at(monkeypatch, emulator, "one_tool_then_answer", run_id)
    spec = "tests.commands.test_record:leaky_loop"
    assert record(tmp_path, "--source", "live", ONE, "--loop", spec) == 0
    err = capsys.readouterr()
    assert "est. $" in err.err and "estimated total: $" in err.out
    files = snapshot(tmp_path)
    assert len(files) == 6
    for name, data in files.items():
        text = data.decode()
        assert find_key(text) is None, name
        for key in FAKE_KEYS.values():
            assert key not in text, name
        assert "source: live" in text and "127.0.0.1" not in text
        assert "uri: https://" in text
    # the SDKs really sent the keys (so the scrubbing above was tested, not vacuous), and the
    # emulator's own log keeps neither the unlisted header nor the query credentials
    sent = emulator.log(run_id)
    assert sent and len(LEAKED) >= len(sent)
    assert all(FAKE_KEYS["GEMINI_API_KEY"] in url for url in LEAKED)
    assert all("x-my-gateway-key" not in e.headers and set(e.query) <= {"alt"} for e in sent)
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    assert run(tmp_path, ONE, "--strict") == 0


FAULTY = """\
title: A rate limit on the first call
rules: [L1]
system: You are a training assistant.
tools:
  - name: get_workout_history
    description: Logged workouts.
    effect: read
    parameters: {type: object, properties: {exercise: {type: string}}}
    result: "bench 3x5 @ 80 kg"
messages:
  - text: How is my bench press going?
    script:
      turns:
        - text: Let me look.
          calls: [{name: get_workout_history, arguments: {exercise: bench press}}]
          fault: {kind: rate_limit, times: 1, retry_after: 0.01}
        - answer: Going well.
      closing: I reached the step limit.
    expect: {ending: answer, rounds: 1, tools: [get_workout_history]}
"""


def test_live_refresh_retries_a_rate_limit_and_keeps_it_out(
    emulator: Emulator,
    run_id: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "rate_limited_first_call.yaml"
    path.write_text(FAULTY)
    emulator.add(load_scenario(path))
    point_at(monkeypatch, emulator, "rate_limited_first_call", run_id)
    folder = tmp_path / "cassettes"
    args = ("--source", "live", str(path), "--provider", "anthropic", "--stream", "off")
    assert record(folder, *args) == 0
    assert [e.status for e in emulator.log(run_id)] == [429, 200, 200]
    assert "/v1/messages: 429 Too Many Requests; retry 1/3 in 0.0s" in capsys.readouterr().err
    text = (folder / "anthropic" / "rate_limited_first_call.yaml").read_text()
    assert text.count("- request:") == 2 and "code: 429" not in text


def test_budget_stops_before_spending(
    emulator: Emulator,
    run_id: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    point_at(monkeypatch, emulator, "one_tool_then_answer", run_id)
    assert record(tmp_path, "--source", "live", ONE, "--budget", "0.0001") == 1
    assert "would pass the budget" in capsys.readouterr().err
    assert emulator.log(run_id) == [] and snapshot(tmp_path) == {}


def test_budget_is_for_live_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record(tmp_path, "--source", "scripted", ONE, "--budget", "1") == 2
    assert "applies to --source live" in capsys.readouterr().err


def test_source_is_required(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        record(tmp_path, ONE)
    assert caught.value.code == 2


def test_no_file_is_left_behind_by_a_refresh(recorded: Path) -> None:
    assert not [p for p in recorded.rglob("*") if p.name.startswith(".")]
    assert all(os.access(p, os.R_OK) for p in recorded.rglob("*.yaml"))


def test_findings_or_an_expected_error_do_not_stop_a_recording(tmp_path: Path) -> None:
    """As the README says: a scripted run that ends in its scenario's expected error is
    recorded, and so is a loop's run with findings (and one that raises: above)."""
    keeps_failing = str(SCENARIOS / "provider_keeps_failing.yaml")
    one_cell = ("--provider", "anthropic", "--stream", "off")
    assert record(tmp_path / "a", "--source", "scripted", keeps_failing, *one_cell) == 0
    assert list(snapshot(tmp_path / "a")) == ["anthropic/provider_keeps_failing.yaml"]
    shouting = ("--loop", "tests.checks.loops:shouting_loop")  # L2 findings, every call whole
    assert record(tmp_path / "b", "--source", "scripted", ONE, *one_cell, *shouting) == 0
    assert list(snapshot(tmp_path / "b")) == ["anthropic/one_tool_then_answer.yaml"]
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert (
        "findings, a loop that raised or a scripted run ending in its expected error do not "
        "stop it" in readme
    )
    assert "only from clean runs" not in readme
