"""The scrubbing policy, one attack class per test: headers and query parameters by allowlist,
no userinfo, the last scan on every written text and console line, nothing cached before the
scan, drift messages without credentials."""

from __future__ import annotations

import io
from pathlib import Path

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cassettes.build import REQUEST_HEADERS as CASSETTE_REQUEST_HEADERS
from harness.cassettes.build import RESPONSE_HEADERS as CASSETTE_RESPONSE_HEADERS
from harness.cassettes.cassette import Cassette, Interaction, RecordedRequest, RecordedResponse
from harness.cassettes.recorder import Prepared, save_recording
from harness.cassettes.replay import ReplayApp
from harness.cassettes.usage import Usage
from harness.endpoint.capture import Recorded
from harness.endpoint.server import Answer, Incoming
from harness.results.files import write_text_atomic
from harness.runner import Cell
from harness.scenario import load_scenario
from harness.scrub import (
    QUERY_PARAMS,
    REDACTED,
    RedactingWriter,
    environment_secrets,
    find_key,
    kept_request_headers,
    kept_response_headers,
    redact,
    scrub_url,
)
from tests.conftest import SCENARIOS
from tests.endpoint.support import serving

KEY = "sk-ant-api03-" + "Scrub0Key1" * 5
CUSTOM_CREDENTIAL_HEADERS = (
    "x-custom-auth",
    "helicone-auth",
    "ocp-apim-subscription-key",
    "openai-organization",
    "openai-project",
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
    "proxy-authorization",
)


def test_cassettes_keep_a_subset_of_what_the_policy_allows() -> None:
    assert all(kept_request_headers([(h, "v")]) for h in CASSETTE_REQUEST_HEADERS)
    assert all(kept_response_headers([(h, "v")]) for h in CASSETTE_RESPONSE_HEADERS)


@pytest.mark.parametrize("header", CUSTOM_CREDENTIAL_HEADERS)
def test_capture_keeps_no_credential_header(header: str) -> None:
    class Echo:
        def answer(self, incoming: Incoming, record: Recorded) -> Answer:
            return Answer(
                status=200,
                headers=[
                    (header, KEY),
                    ("request-id", "req_1"),
                    ("content-type", "application/json"),
                ],
                chunks=[b"{}"],
            )

    with serving(Echo()) as served:
        httpx2.post(
            f"{served.base}/v1/messages", headers={header: KEY, "anthropic-version": "1"}, json={}
        )
    (exchange,) = served.run.capture.exchanges()
    assert header not in exchange.request_headers and header not in exchange.response_headers
    assert exchange.request_headers["anthropic-version"] == "1"
    assert exchange.response_headers["request-id"] == "req_1"


@pytest.mark.parametrize(
    "name", ["key", "api_key", "access_token", "token", "apikey", "api-key", "sig", "Key"]
)
def test_query_credentials_are_dropped_from_urls(name: str) -> None:
    url = scrub_url(f"https://h/v1beta/models/m:streamGenerateContent?alt=sse&{name}=s3cr3t")
    assert url == "https://h/v1beta/models/m:streamGenerateContent?alt=sse"


@pytest.mark.parametrize(
    ("url", "scrubbed"),
    [
        ("http://user:pw@127.0.0.1:5/v1", "http://127.0.0.1:5/v1"),
        ("http://token@h/v1/messages?beta=true", "http://h/v1/messages?beta=true"),
        ("http://[::1", "http://[::1"),  # unparseable: never raises
        ("http://u:pw@[::1/x?key=k", "http://[::1/x"),
    ],
)
def test_userinfo_is_stripped_from_urls(url: str, scrubbed: str) -> None:
    assert scrub_url(url) == scrubbed


def test_redact_replaces_key_shapes_secret_values_and_userinfo() -> None:
    text = f"got {KEY} and opaque-value-123 from http://admin:pw@proxy:8080/v1"
    assert redact(text, ["opaque-value-123"]) == (
        f"got {REDACTED} and {REDACTED} from http://proxy:8080/v1"
    )


def test_secret_looking_environment_variables_are_known() -> None:
    env = {"MY_GATEWAY_TOKEN": "opaque-value-123", "HOME": "/root/long/path", "API_KEY": "short"}
    assert environment_secrets(env) == ["opaque-value-123"]


def test_every_written_report_file_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTERNAL_SERVICE_SECRET", "opaque-value-123")
    target = write_text_atomic(tmp_path / "r.json", f'{{"a": "{KEY} opaque-value-123"}}')
    assert target.read_text() == f'{{"a": "{REDACTED} {REDACTED}"}}'


def test_console_lines_are_redacted_even_when_a_key_is_split_across_writes() -> None:
    out = io.StringIO()
    writer = RedactingWriter(out, ["opaque-value-123"])
    writer.write(f"progress {KEY[:10]}")
    writer.write(f"{KEY[10:]} opaque-")
    writer.write("value-123\rnext\n")
    writer.write("tail without newline")
    writer.flush()
    assert out.getvalue() == f"progress {REDACTED} {REDACTED}\rnext\ntail without newline"


def test_drift_messages_name_no_query_credential() -> None:
    recorded = Interaction(
        number=1,
        request=RecordedRequest(
            method="POST", uri="https://h/v1/messages", headers={}, body={"a": 1}, is_json=True
        ),
        response=RecordedResponse(status=200, reason="OK", headers={}, json={}),
    )
    cassette = Cassette(path="c.yaml", meta=None, interactions=(recorded,))
    app = ReplayApp(cassette, "anthropic")
    with serving(app) as served, httpx2.Client() as client:
        client.post(f"{served.base}/v1/messages?key={KEY}&token=t0ken-value", json={"a": 2})
        client.post(f"{served.base}/v1/messages?key={KEY}", json={"a": 2})  # nothing left
    findings = app.findings()
    assert {f.rule for f in findings} == {"replay.drift", "replay.missing_recording"}
    text = " ".join(f.message for f in findings)
    assert KEY not in text and "t0ken-value" not in text


def test_a_refused_rerecord_caches_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CASSETTE_CACHE", str(cache))
    scenario = load_scenario(SCENARIOS / "one_tool_then_answer.yaml")
    path = tmp_path / "anthropic" / "one_tool_then_answer.yaml"
    path.parent.mkdir()
    path.write_text("interactions: []\n")
    prepared = Prepared(
        cell=Cell(scenario=scenario, provider="anthropic", stream=False),
        path=path,
        run=None,
        text=f"interactions:\n- request: {{body: {KEY}}}\n",
        problem=None,
        usage=Usage(),
        model="m",
    )
    saved = save_recording(prepared)
    assert saved.verdict == "not written" and "nothing was saved" in (saved.problem or "")
    assert path.read_text() == "interactions: []\n"
    cached = [p.read_text() for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert all(KEY not in text for text in cached)


PREFIXED = st.sampled_from([KEY, "sk-proj-" + "Abc123def456" * 3, "sk-svcacct-" + "x1" * 12])
BOUNDED = st.sampled_from(
    ["sk-" + "Abc123def456" * 3, "AIzaSy" + "Q1w2E3r4" * 4, "ya29." + "a0Af" * 6]
)
DELIMITED = st.text(max_size=40).map(lambda t: t + " ")


@settings(max_examples=200, deadline=None)
@given(before=st.text(max_size=40), key=PREFIXED, after=st.text(max_size=40))
def test_no_prefixed_key_survives_redaction_wherever_it_sits(
    before: str, key: str, after: str
) -> None:
    text = redact(before + key + after, [])
    assert key not in text and find_key(text) is None


@settings(max_examples=200, deadline=None)
@given(before=st.one_of(st.just(""), DELIMITED), key=BOUNDED, after=st.text(max_size=40))
def test_no_key_survives_redaction_after_a_delimiter(before: str, key: str, after: str) -> None:
    text = redact(before + key + after, [])
    assert key not in text and find_key(text) is None


@settings(max_examples=300, deadline=None)
@given(
    user=st.text(st.characters(codec="ascii", exclude_characters="/?#@"), min_size=1, max_size=12),
    host=st.text(st.characters(codec="ascii", exclude_characters="/?#@:"), max_size=12),
    query=st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8)), max_size=4),
)
def test_scrubbed_urls_keep_only_allowed_parameters_and_no_userinfo(
    user: str, host: str, query: list[tuple[str, str]]
) -> None:
    from urllib.parse import parse_qsl, urlencode, urlsplit

    url = scrub_url(f"http://{user}@{host}/v1/x?{urlencode(query)}")
    assert "@" not in url.split("/v1", 1)[0]
    try:
        parsed = urlsplit(url)
    except ValueError:
        return  # an unparseable host: scrub_url already dropped query and userinfo
    assert all(k.lower() in QUERY_PARAMS for k, _ in parse_qsl(parsed.query))
