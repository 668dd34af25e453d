"""Secrets never reach a file or an output line: fake keys planted in every header, query
parameter, URL userinfo, body field, tool result, loop error text and environment variable,
on every source (scripted, live through the emulator, cassette replay) and after a refused
re-record, appear in no file the harness writes (results, HTML, JUnit, cassettes, the parse
cache) and in neither stdout nor stderr."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from harness.cli import main
from harness.emulator.server import Emulator
from harness.loop.contract import LoopCall, LoopResult
from harness.loop.reference import reference_loop
from harness.scenario import load_scenario

# Key-shaped values (the scan knows their shapes) and opaque ones (only known because an
# environment variable holds them, or because they sit in a credential position).
ANTHROPIC = "sk-ant-api03-" + "Plant0Key1" * 5
OPENAI = "sk-proj-" + "Plant2Key3" * 5
GOOGLE = "AIzaSy" + "Plant4Key5" * 4
OAUTH = "ya29." + "Plant6Key7" * 4
ENV_SECRET = "opaque-gateway-value-4711"  # no key shape: known from MY_GATEWAY_TOKEN only
USER_PW = "hunter2-userinfo-pw"
PLANTED = (ANTHROPIC, OPENAI, GOOGLE, OAUTH, ENV_SECRET, USER_PW)

# Credential headers nobody listed in a denylist: the allowlist must drop them all.
HEADERS = {
    "authorization": f"Bearer {OPENAI}",
    "x-api-key": ANTHROPIC,
    "x-goog-api-key": GOOGLE,
    "api-key": OPENAI,
    "x-custom-auth": ENV_SECRET,
    "helicone-auth": f"Bearer {ANTHROPIC}",
    "ocp-apim-subscription-key": ENV_SECRET,
    "openai-organization": ENV_SECRET,
    "cookie": f"session={OAUTH}",
}
QUERY = {"key": GOOGLE, "token": ENV_SECRET, "apikey": OPENAI, "api-key": OAUTH, "sig": ENV_SECRET}

SCENARIO = f"""\
title: A user pastes a key; the tool result holds a gateway token
rules: [L1, L2]
system: You are Gymnasia's training assistant.
tools:
  - name: get_workout_history
    description: The user's logged workouts.
    effect: read
    parameters:
      type: object
      properties:
        exercise: {{type: string}}
      required: [exercise]
    result: "bench 3x5 @ 80 kg (gateway token {ENV_SECRET}, backup {OAUTH})"
messages:
  - text: "My key is {ANTHROPIC}; how is my bench press going?"
    script:
      turns:
        - text: Let me look.
          calls:
            - name: get_workout_history
              arguments: {{exercise: bench press}}
        - answer: You added 2.5 kg in three days.
      closing: I reached the step limit for this answer. Shall I continue?
    expect:
      ending: answer
      rounds: 1
      tools: [get_workout_history]
"""
CLEAN_SCENARIO = (
    SCENARIO.replace(ENV_SECRET, "none").replace(OAUTH, "none").replace(ANTHROPIC, "secret")
)


def leaky_loop(call: LoopCall) -> LoopResult:
    """The reference loop, with credentials in every header and query position, and a key in
    its error text."""
    http = getattr(call.client, "_client", None) or call.client._api_client._httpx_client
    assert isinstance(http, httpx2.Client)

    def plant(request: httpx2.Request) -> None:
        request.headers.update(HEADERS)
        request.url = request.url.copy_merge_params(QUERY)

    http.event_hooks["request"] = [*http.event_hooks["request"], plant]
    result = reference_loop(call)
    return LoopResult(
        answer=result.answer,
        chat=result.chat,
        error=f"upstream said: invalid x-api-key {ANTHROPIC} for {ENV_SECRET}",
    )


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scenario folder, a private parse cache and the secret environment variable."""
    (tmp_path / "leaky").mkdir()
    (tmp_path / "leaky" / "pasted_key.yaml").write_text(SCENARIO)
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "pasted_key.yaml").write_text(CLEAN_SCENARIO)
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MY_GATEWAY_TOKEN", ENV_SECRET)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def assert_nothing_leaked(folder: Path, output: pytest.CaptureResult[str]) -> None:
    written = [p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".yaml")]
    written += [p for p in (folder / "cassettes").rglob("*.yaml")]
    assert written, "the run wrote nothing: the test would prove nothing"
    for path in written:
        text = path.read_text("utf-8", "replace")
        for secret in PLANTED:
            assert secret not in text, f"{secret[:12]}… reached {path.relative_to(folder)}"
    for stream in (output.out, output.err):
        for secret in PLANTED:
            assert secret not in stream


def common_args(folder: Path, scenarios: str) -> list[str]:
    reports = folder / "reports"
    return [
        str(folder / scenarios),
        "--loop",
        "tests.test_secrets:leaky_loop",
        "--results",
        str(reports / "results.json"),
        "--html",
        str(reports / "index.html"),
        "--junit",
        str(reports / "junit.xml"),
    ]


def test_scripted_run_writes_no_secret(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--source", "scripted", *common_args(world, "leaky")]) == 1
    assert_nothing_leaked(world, capsys.readouterr())
    assert "[REDACTED]" in (world / "reports" / "results.json").read_text()


def test_live_run_through_the_emulator_writes_no_secret(
    world: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(world / "leaky" / "pasted_key.yaml")
    with Emulator([scenario]) as emulator:
        for provider, url in emulator.base_urls(scenario.id, "live").items():
            with_user = url.replace("http://", f"http://admin:{USER_PW}@")
            variable = {"anthropic": "ANTHROPIC", "openai": "OPENAI", "gemini": "GOOGLE_GEMINI"}
            monkeypatch.setenv(f"{variable[provider]}_BASE_URL", with_user)
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC)
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
        monkeypatch.setenv("GEMINI_API_KEY", GOOGLE)
        code = main(["run", "--source", "live", *common_args(world, "leaky")])
        assert emulator.log("live"), "the live run never reached the emulator"
    assert code == 1
    assert_nothing_leaked(world, capsys.readouterr())


def test_replay_drift_and_refused_rerecord_write_no_secret(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassettes = world / "cassettes"
    clean = str(world / "clean")
    assert main(["record", "--source", "scripted", "--cassettes", str(cassettes), clean]) == 0
    recorded = {p: p.read_bytes() for p in cassettes.rglob("*.yaml")}
    assert len(recorded) == 6
    capsys.readouterr()

    # Replay, the CI default: every request drifts (planted query parameters) and the drift
    # messages name the URL; the loop's error text holds a key.
    args = ["run", "--cassettes", str(cassettes), *common_args(world, "clean")]
    assert main(args) == 1
    replayed = capsys.readouterr()
    assert "drift" in (world / "reports" / "results.json").read_text()
    assert_nothing_leaked(world, replayed)

    # A re-record of the leaky scenario (same id) is refused by the secret scan: no cassette
    # changes and nothing reaches the parse cache.
    leaky = str(world / "leaky")
    code = main(["record", "--source", "scripted", "--cassettes", str(cassettes), leaky])
    refused = capsys.readouterr()
    assert code != 0 and "nothing was saved" in refused.out + refused.err
    assert {p: p.read_bytes() for p in cassettes.rglob("*.yaml")} == recorded
    assert_nothing_leaked(world, refused)
