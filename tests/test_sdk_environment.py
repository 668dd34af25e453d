"""`sdk_environment` points the SDKs' variables at the endpoint for a run, sets both Gemini key
variables to the dummy (a developer's real key in either is never used), and keeps
google-genai's warning about both being set off the console — only that warning."""

from __future__ import annotations

import logging
import os

import pytest
from google import genai

from harness.sources import GENAI_CLIENT_LOGGER, ScriptedSource, sdk_environment
from tests.conftest import library


def test_both_gemini_keys_are_the_dummy_and_genai_says_nothing_about_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza" + "RealLooking0Key" * 3)
    source = ScriptedSource(library()[:1], {})
    try:
        with caplog.at_level(logging.WARNING), sdk_environment(source):
            assert os.environ["GEMINI_API_KEY"] == os.environ["GOOGLE_API_KEY"]
            assert os.environ["GOOGLE_API_KEY"] == source.api_key
            genai.Client()
            logging.getLogger(GENAI_CLIENT_LOGGER).warning("another warning stays")
    finally:
        source.close()
    said = [r.getMessage() for r in caplog.records]
    assert not any("Both GOOGLE_API_KEY" in m for m in said), said
    assert "another warning stays" in said
    assert os.environ["GEMINI_API_KEY"].startswith("AIza")  # restored


def test_outside_a_run_genai_warns_as_usual(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "dummy-one")
    monkeypatch.setenv("GOOGLE_API_KEY", "dummy-two")
    with caplog.at_level(logging.WARNING):
        genai.Client()
    assert any("Both GOOGLE_API_KEY" in r.getMessage() for r in caplog.records)
