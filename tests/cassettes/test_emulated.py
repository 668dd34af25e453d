"""`harness emulate --record`'s cassettes: naming, what goes in which file, when a run is written
(idle, at stop, again once it grew; never when empty), atomic writes and the secret scan."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import pytest

from harness.cassettes.emulated import SOURCE, EmulateRecorder, emulated_path, write_planned
from harness.cassettes.files import load_cassette
from harness.commands.common import load_all
from harness.emulator.server import Emulator

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = load_all([str(ROOT / "scenarios" / "answer_without_tools.yaml")])[0]
QUESTION = SCENARIO.messages[0].text


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[tuple[Emulator, EmulateRecorder, list[str]]]:
    lines: list[str] = []
    recorder = EmulateRecorder(tmp_path, "default", say=lines.append, idle=5.0)
    emulator = Emulator([SCENARIO], on_run=recorder.add).start()
    try:
        yield emulator, recorder, lines
    finally:
        emulator.stop()


def ask_anthropic(emulator: Emulator, run: str, stream: bool = False) -> None:
    url = emulator.base_urls(SCENARIO.id, run)["anthropic"]
    client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
    request = {
        "model": "claude-test",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    if stream:
        with client.messages.stream(**request) as events:  # type: ignore[arg-type]
            events.get_final_message()
    else:
        client.messages.create(**request)  # type: ignore[arg-type]


def ask_openai(emulator: Emulator, run: str) -> None:
    url = emulator.base_urls(SCENARIO.id, run)["openai"]
    client = openai.OpenAI(base_url=url, api_key="dummy", max_retries=0)
    client.responses.create(model="gpt-test", input=QUESTION, store=False)


@pytest.mark.parametrize(
    ("stream", "run", "name"),
    [
        (False, "default", "s.yaml"),
        (True, "default", "s.stream.yaml"),
        (False, "ci-2", "s@ci-2.yaml"),
        (True, "ci-2", "s.stream@ci-2.yaml"),
        (False, "a.stream", "s@a.stream.yaml"),  # not the streamed file of run "a"
    ],
)
def test_names(stream: bool, run: str, name: str) -> None:
    assert emulated_path("out", "gemini", "s", stream, run, "default") == Path("out/gemini") / name


def test_a_run_is_written_once_idle_split_by_provider_and_stream(
    recording: tuple[Emulator, EmulateRecorder, list[str]], tmp_path: Path
) -> None:
    emulator, recorder, lines = recording
    ask_anthropic(emulator, "default")
    ask_anthropic(emulator, "default", stream=True)
    ask_openai(emulator, "default")
    capture = emulator.capture("default")
    assert capture is not None
    capture.settle()  # every reply written (the server thread ends it) before the clock is read
    recorder.tick(now=time.time())  # just ended: not idle yet
    assert lines == [] and not any(tmp_path.rglob("*.yaml"))
    recorder.tick(now=time.time() + 60)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml"))
    expected = [f"anthropic/{SCENARIO.id}.stream.yaml", f"anthropic/{SCENARIO.id}.yaml"]
    assert written == [*expected, f"openai/{SCENARIO.id}.yaml"]
    assert len(lines) == 3 and all(line.startswith("harness emulate: wrote ") for line in lines)
    cassette = load_cassette(tmp_path / "anthropic" / f"{SCENARIO.id}.stream.yaml")
    assert cassette.meta is not None
    assert (cassette.meta.source, cassette.meta.scenario, cassette.meta.stream) == (
        SOURCE,
        SCENARIO.id,
        True,
    )
    assert cassette.interactions[0].request.uri == "https://api.anthropic.com/v1/messages"
    assert "x-api-key" not in cassette.interactions[0].request.headers


def test_nothing_new_writes_nothing_and_growth_rewrites(
    recording: tuple[Emulator, EmulateRecorder, list[str]], tmp_path: Path
) -> None:
    emulator, recorder, lines = recording
    ask_anthropic(emulator, "r1")
    recorder.tick(now=time.time() + 60)
    recorder.tick(now=time.time() + 120)
    recorder.flush()
    assert len(lines) == 1 and f"{SCENARIO.id}@r1.yaml" in lines[0]
    ask_anthropic(emulator, "r1")
    recorder.flush()
    assert len(lines) == 2
    path = tmp_path / "anthropic" / f"{SCENARIO.id}@r1.yaml"
    assert len(load_cassette(path).interactions) == 2


def test_a_run_with_no_exchange_writes_nothing(tmp_path: Path) -> None:
    lines: list[str] = []
    recorder = EmulateRecorder(tmp_path, "default", say=lines.append, idle=1.0)
    with Emulator([SCENARIO], on_run=recorder.add) as emulator:
        emulator.base_urls(SCENARIO.id, "unused")  # a run id handed out, never called
    recorder.tick(now=time.time() + 60)
    recorder.flush()
    assert lines == [] and not any(tmp_path.rglob("*"))


def test_a_request_that_is_no_model_call_is_left_out_and_named(
    recording: tuple[Emulator, EmulateRecorder, list[str]], tmp_path: Path
) -> None:
    import urllib.error
    import urllib.request

    emulator, recorder, lines = recording
    models = emulator.base_urls(SCENARIO.id, "default")["anthropic"] + "/v1/models"
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(models, timeout=10)
    ask_anthropic(emulator, "default")
    recorder.flush()
    assert any("GET" in line and "left out: no model call" in line for line in lines)
    cassette = load_cassette(tmp_path / "anthropic" / f"{SCENARIO.id}.yaml")
    assert len(cassette.interactions) == 1


def test_idle_zero_writes_only_at_stop(tmp_path: Path) -> None:
    lines: list[str] = []
    recorder = EmulateRecorder(tmp_path, "default", say=lines.append, idle=0)
    with Emulator([SCENARIO], on_run=recorder.add) as emulator:
        ask_anthropic(emulator, "default")
        recorder.tick(now=time.time() + 3600)
        assert lines == []
    recorder.flush()
    assert len(lines) == 1


def test_secret_in_a_body_is_refused_and_the_old_file_kept(
    recording: tuple[Emulator, EmulateRecorder, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulator, recorder, lines = recording
    ask_anthropic(emulator, "default")
    recorder.flush()
    path = tmp_path / "anthropic" / f"{SCENARIO.id}.yaml"
    before = path.read_bytes()
    secret = "planted-secret-value-0123456789"
    monkeypatch.setenv("MY_APP_TOKEN", secret)
    url = emulator.base_urls(SCENARIO.id, "default")["anthropic"]
    client = anthropic.Anthropic(base_url=url, api_key="dummy", max_retries=0)
    client.messages.create(
        model="claude-test",
        max_tokens=64,
        system=f"token {secret}",
        messages=[{"role": "user", "content": QUESTION}],
    )
    recorder.flush()
    assert path.read_bytes() == before
    assert "not written" in lines[-1] and secret not in "\n".join(lines)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_write_is_atomic_an_interrupted_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from harness.cassettes.emulated import Planned

    path = tmp_path / "anthropic" / "s.yaml"
    path.parent.mkdir()
    path.write_text("old: true\n")

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_planned(Planned(path=path, text="new: true\n", interactions=1), ())
    assert path.read_text() == "old: true\n"
    assert [p.name for p in path.parent.iterdir()] == ["s.yaml"]


def test_unchanged_text_is_not_rewritten(tmp_path: Path) -> None:
    from harness.cassettes.emulated import Planned

    planned = Planned(path=tmp_path / "x.yaml", text="a: 1\n", interactions=1)
    assert write_planned(planned, ()) is True
    assert write_planned(planned, ()) is False
