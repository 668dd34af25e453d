"""`harness audit`: the wire-only checks on cassettes recorded from the emulator (clean), on
copies broken in the test (caught at the right interaction), in every body form another
project's cassette may use (plain vcrpy YAML, gzip, SSE text), and on files it cannot read
(one line, exit 2, never a traceback)."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cassettes.read import read_cassette
from harness.checks import catalogue
from harness.cli import main
from harness.commands.audit import WIRE_RULES
from harness.limits import MAX_BODY_BYTES
from tests.conftest import REALWIRE_BATCHES, SCENARIOS

Body = dict[str, Any]
RECORDED = ("parallel_requests_one_turn", "openai_reasoning_across_rounds")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Cassettes recorded from the emulator by `harness record` (both stream variants)."""
    folder = tmp_path_factory.mktemp("recorded")
    scenarios = [str(SCENARIOS / f"{name}.yaml") for name in RECORDED]
    assert main(["record", "--source", "scripted", "--cassettes", str(folder), *scenarios]) == 0
    return folder


def audit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---- cassette forms ----------------------------------------------------------------------------


def load(path: Path) -> Body:
    data: Body = yaml.safe_load(path.read_text("utf-8"))
    return data


def save(data: Body, path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    return path


def plain_vcrpy(source: Path, target: Path, gzipped: bool = False) -> Path:
    """The cassette as vcrpy's stock serializer writes it: bodies as strings exactly as
    sent (SSE as its text), and with `gzipped` the responses as `!!binary` gzip bytes."""
    interactions = []
    for item in read_cassette(source):
        headers = {k: list(v) for k, v in item.response_headers.items()}
        body: Any = item.response_text
        if gzipped:
            body = gzip.compress(body.encode("utf-8"))
            headers["Content-Encoding"] = ["gzip"]
        interactions.append(
            {
                "request": {
                    "method": item.method,
                    "uri": item.uri,
                    "headers": {k: list(v) for k, v in item.request_headers.items()},
                    "body": item.request_text,
                },
                "response": {
                    "status": {"code": item.status, "message": "OK"},
                    "headers": headers,
                    "body": {"string": body},
                },
            }
        )
    return save({"interactions": interactions, "version": 1}, target)


def edited(source: Path, target: Path, number: int, edit: Callable[[Body], None]) -> Path:
    """A copy with the request body of interaction `number` (1-based) changed by `edit`."""
    data = load(source)
    body = copy.deepcopy(data["interactions"][number - 1]["request"]["parsed_body"])
    edit(body)
    data["interactions"][number - 1]["request"]["parsed_body"] = body
    return save(data, target)


# ---- clean ----------------------------------------------------------------------------------


def test_cassettes_recorded_from_the_emulator_are_clean(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = audit(capsys, str(recorded))
    assert code == 0, out + err
    assert not err
    files = sorted(recorded.rglob("*.yaml"))
    assert len(files) == 8
    for path in files:
        assert f"ok        {path}  (" in out
    assert "8 cassettes, " in out and "8 clean, 0 with findings (0 findings), 0 unreadable" in out


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_plain_vcrpy_gzip_and_sse_forms_read_the_same(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], gzipped: bool
) -> None:
    for path in sorted(recorded.rglob("*.yaml")):
        target = tmp_path / path.relative_to(recorded)
        target.parent.mkdir(exist_ok=True)
        converted = plain_vcrpy(path, target, gzipped)
        assert "parsed_body" not in converted.read_text() and "events:" not in converted.read_text()
    code, out, err = audit(capsys, str(tmp_path))
    assert code == 0, out + err
    assert out.count(", streamed)") == 4  # SSE bodies read as streams
    assert "8 clean, 0 with findings" in out


# ---- broken ---------------------------------------------------------------------------------


def _store_true(body: Body) -> None:
    body["store"] = True


def _drop_last_result(body: Body) -> None:
    body["messages"][-1]["content"].pop()


def _unsign(body: Body) -> None:
    for part in body["contents"][1]["parts"]:
        part.pop("thoughtSignature", None)


def _drop_reasoning(body: Body) -> None:
    body["input"] = [i for i in body["input"] if i.get("type") != "reasoning"]


BROKEN = [
    ("openai/parallel_requests_one_turn.yaml", _store_true, "openai.store_false", "store"),
    ("anthropic/parallel_requests_one_turn.yaml", _drop_last_result, "L6", "messages[2]"),
    (
        "anthropic/parallel_requests_one_turn.stream.yaml",
        _drop_last_result,
        "L6",
        "messages[2]",
    ),
    (
        "gemini/parallel_requests_one_turn.yaml",
        _unsign,
        "gemini.content_unchanged",
        "contents[1]",
    ),
    (
        "openai/openai_reasoning_across_rounds.stream.yaml",
        _drop_reasoning,
        "openai.reasoning_resent",
        "input[1]",
    ),
]


@pytest.mark.parametrize(("name", "edit", "rule", "path"), BROKEN)
@pytest.mark.parametrize("form", ["parsed", "plain", "gzip"])
def test_a_broken_copy_is_caught_at_its_interaction(
    recorded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    edit: Callable[[Body], None],
    rule: str,
    path: str,
    form: str,
) -> None:
    broken = edited(recorded / name, tmp_path / "broken.yaml", 2, edit)
    if form != "parsed":
        broken = plain_vcrpy(broken, tmp_path / f"broken-{form}.yaml", form == "gzip")
    code, out, _ = audit(capsys, str(broken))
    assert code == 1, out
    assert f"findings  {broken}  (" in out
    assert f"  {broken}:2: {rule} at {path}" in out, out
    assert "0 clean, 1 with findings" in out


def test_findings_are_listed_by_interaction_and_quiet_lists_only_them(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = recorded / "openai/openai_reasoning_across_rounds.yaml"
    broken = edited(source, tmp_path / "broken.yaml", 3, _drop_reasoning)
    broken = edited(broken, broken, 1, _store_true)
    clean = recorded / "gemini/parallel_requests_one_turn.yaml"
    code, out, _ = audit(capsys, str(clean), str(broken), "--quiet")
    assert code == 1
    lines = out.splitlines()
    where = [line.split(": ")[0] for line in lines[:-1]]
    assert where == [f"  {broken}:1", f"  {broken}:3", f"  {broken}:3"]  # store; L8, reasoning
    assert lines[-1].startswith("2 cassettes, ")
    assert str(clean) not in out


def test_an_interaction_that_is_no_model_call_is_skipped_and_named(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = load(recorded / "anthropic/parallel_requests_one_turn.yaml")
    extra = copy.deepcopy(data["interactions"][0])
    extra["request"].update(method="GET", uri="https://api.anthropic.com/v1/models")
    data["interactions"].insert(0, extra)
    path = save(data, tmp_path / "with_models.yaml")
    code, out, _ = audit(capsys, str(path))
    assert code == 0, out
    assert f"  {path}:1: skipped, not a model call: GET https://api.anthropic.com/v1/models" in out
    assert "(3 interactions; anthropic)" in out


# ---- unreadable -----------------------------------------------------------------------------


def _missing_response(data: Body) -> Body:
    del data["interactions"][1]["response"]
    return data


def _bad_gzip(data: Body) -> Body:
    response = data["interactions"][1]["response"]
    response["body"] = {"string": gzip.compress(b'{"id": 1}')[:-9]}  # truncated stream
    response.pop("parsed_body", None)
    return data


CORRUPT: list[tuple[str, Callable[[Body], Any] | str, str]] = [
    ("not YAML", "interactions: [\n  - {request: ", "not valid YAML"),
    ("not a cassette", "- just\n- a list\n", "not a vcrpy cassette"),
    ("empty", "", "not a vcrpy cassette"),
    ("an interaction without response", _missing_response, "interaction 2: malformed"),
    ("a truncated gzip body", _bad_gzip, "interaction 2: unreadable body"),
]


def _set(*path: str | int, value: Any) -> Callable[[Body], Body]:
    """A copy of the cassette with the field at `path` (under interaction 2) set to `value`."""

    def edit(data: Body) -> Body:
        node = data["interactions"][1]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        node.pop("parsed_body", None) if path[-1] == "body" else None
        return data

    return edit


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + f"\ninteractions: [*a{levels - 1}]\n"


GZIP_BOMB = gzip.compress(b"0" * (MAX_BODY_BYTES + 1))  # ~33 KB that inflates to 32 MiB + 1
DEEP_JSON = "[" * 2000 + "]" * 2000

# Issue 14's attack classes on `harness audit`: each one line naming the file (and the
# interaction and field when it is inside one), exit 2, never a traceback.
HOSTILE: list[tuple[str, Callable[[Body], Any] | str | bytes, str]] = [
    ("request as a list", _set("request", value=[1, 2]), "interaction 2: malformed"),
    ("headers as a string", _set("request", "headers", value="x"), "request.headers must be"),
    ("an unclosed IPv6 URL", _set("request", "uri", value="http://[::1"), "not a valid URL"),
    ("a port that is no number", _set("request", "uri", value="http://h:x/"), "valid URL"),
    ("a URL with no host", _set("request", "uri", value="file:///etc/passwd"), "http(s) URL"),
    ("a status that is no number", _set("response", "status", value={"code": "x"}), "number"),
    (
        "a gzip bomb",
        _set("response", "body", value={"string": GZIP_BOMB}),
        "interaction 2: a compressed body inflates past 32 MiB",
    ),
    (
        "JSON nested 2,000 deep",
        _set("request", "body", value=DEEP_JSON),
        "interaction 2: malformed interaction: request.body: nested deeper than 100 levels",
    ),
    (
        "a lone surrogate in a JSON body",
        _set("request", "body", value='{"text": "\\ud800"}'),
        "request.body: text: holds a lone surrogate (\\ud800)",
    ),
    ("an alias bomb", _bomb(), "line 6: aliases (*a4 and others) expand to more than 100,000"),
    ("YAML nested 500 deep", "interactions: " + "[" * 500 + "]" * 500, "deeper than 100"),
    ("not UTF-8", b"interactions: []\n# caf\xe9\n", "line 2: not UTF-8 text (byte 0xe9"),
]


@pytest.mark.parametrize(("case", "content", "says"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_a_hostile_cassette_is_one_line_and_exit_2(
    recorded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    content: Callable[[Body], Any] | str | bytes,
    says: str,
) -> None:
    test_an_unreadable_cassette_is_one_line_and_exit_2(
        recorded, tmp_path, capsys, case, content, says
    )


def test_a_symlink_to_dev_zero_is_refused_at_the_size_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    code, _, err = audit(capsys, str(link))
    assert code == 2
    assert err == f"error     {link}: larger than 64 MiB, the limit for this kind of file\n"


@pytest.mark.parametrize(("case", "content", "says"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_an_unreadable_cassette_is_one_line_and_exit_2(
    recorded: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    content: Callable[[Body], Any] | str | bytes,
    says: str,
) -> None:
    bad = tmp_path / "bad.yaml"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif isinstance(content, str):
        bad.write_text(content, "utf-8")
    else:
        save(content(load(recorded / "anthropic/parallel_requests_one_turn.yaml")), bad)
    good = recorded / "gemini/parallel_requests_one_turn.yaml"
    code, out, err = audit(capsys, str(bad), str(good))
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"error     {bad}: ") and says in err, err
    assert "Traceback" not in err + out
    assert f"ok        {good}" in out  # the others are still audited
    assert "1 clean, 0 with findings (0 findings), 1 unreadable" in out


def test_missing_paths_and_empty_folders_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = audit(capsys, str(tmp_path / "nope.yaml"), str(tmp_path))
    assert code == 2
    assert err.splitlines() == [
        f"error     {tmp_path / 'nope.yaml'}: no such file or folder",
        f"error     {tmp_path}: no *.yaml or *.yml cassettes in this folder",
    ]


def test_no_cassette_named_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "name at least one cassette" in err


# ---- help and rules -------------------------------------------------------------------------


def test_help_reads_well(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["audit", "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for words in ("vcrpy cassette", "gzip", "SSE", "FILE:INTERACTION", "Exit codes", "--quiet"):
        assert words in out


def test_the_rules_named_in_the_help_are_the_wire_only_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    wire_only = [e.id for e in catalogue() if e.needs == "wire"]
    assert WIRE_RULES.split() == wire_only
    assert main(["audit", "--rules"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines() if not line.startswith(" ")]
    assert listed == wire_only


# ---- the real recordings --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("batch", "at_least"),
    [
        pytest.param(
            batch,
            count,
            id=batch.name,
            marks=pytest.mark.skipif(not batch.is_dir(), reason=f"no real recordings in {batch}"),
        )
        for batch, count in zip(REALWIRE_BATCHES, (25, 9), strict=True)
    ],
)
def test_every_real_recording_is_read(
    capsys: pytest.CaptureFixture[str], batch: Path, at_least: int
) -> None:
    code, out, err = audit(capsys, str(batch))
    assert not err, err
    assert code == 1  # a few OpenAI recordings break the stateless rules (see the README)
    files = sorted(batch.rglob("*.yaml"))
    assert len(files) >= at_least
    assert out.splitlines()[-1].startswith(f"{len(files)} cassettes, ")
    assert "0 unreadable" in out and "check itself failed" not in out
    flagged = {line.split()[1] for line in out.splitlines() if line.startswith("findings ")}
    # OpenAI files leave store unset or chain by previous_response_id (see the README); one
    # Anthropic file calls again after a final answer, resending a server tool's call as its
    # own (L2), which the API rejected
    l2 = "pydantic-ai__error_400_tool_use_without_tool_result__claude-3-5-sonnet.yaml"
    assert all("/openai/" in path or path.endswith(l2) or "error_400" in path for path in flagged)
    # a recorded rejection is evidence that the request was wrong: a finding with its message
    rejected = [line for line in out.splitlines() if "api.rejected" in line]
    assert {"error_400" in line for line in rejected} <= {True}
    assert all("the API rejected the request (400): " in line for line in rejected)


def test_a_recorded_rejection_is_a_finding_with_the_providers_message(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = sorted(recorded.rglob("parallel_requests_one_turn.yaml"))[0]
    data = load(source)
    response = data["interactions"][0]["response"]
    message = "messages.0: something the API refused"
    response["status"] = {"code": 400, "message": "Bad Request"}
    response.pop("parsed_body", None)
    response["body"] = {
        "string": json.dumps(
            {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        )
    }
    path = save(data, tmp_path / "rejected.yaml")
    code, out, _ = audit(capsys, str(path))
    assert code == 1
    assert f"api.rejected: the API rejected the request (400): {message}" in out


def test_a_recorded_rate_limit_is_no_verdict_on_the_request(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = sorted(recorded.rglob("parallel_requests_one_turn.yaml"))[0]
    data = load(source)
    data["interactions"][0]["response"]["status"] = {"code": 429, "message": "Too Many Requests"}
    path = save(data, tmp_path / "limited.yaml")
    _, out, _ = audit(capsys, str(path))
    assert "api.rejected" not in out
