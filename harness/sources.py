"""Where a run's model answers come from: the scripted emulator or the live APIs (the
cassette source lives in `harness.cassettes.source`). Each gives, per cell, the base URL and key
to build the official SDK client with."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx2

from harness.emulator.server import Emulator, LogEntry
from harness.errors import HarnessError
from harness.findings import Finding
from harness.providers import DEFAULT_MODELS, key_from_env
from harness.scenario.model import Provider, Scenario

SCRIPTED_KEY = "harness-scripted-dummy-key"


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    base_url: str | None  # None: the SDK's default, or its base-URL variable if set
    api_key: str
    model: str


class Source(Protocol):
    name: str

    def endpoint(self, scenario: Scenario, provider: Provider, run_id: str) -> Endpoint: ...

    def transport(
        self, scenario: Scenario, provider: Provider, stream: bool
    ) -> httpx2.BaseTransport | None:
        """The transport under the capture (None: real HTTP). Replay serves from here."""
        ...

    def rejections(self, run_id: str) -> list[LogEntry]: ...

    def findings(self, scenario: Scenario, provider: Provider, stream: bool) -> list[Finding]:
        """The source's own findings on a cell it served (replay: drift, missing or unused
        recordings)."""
        ...

    def close(self) -> None: ...


def pick_model(scenario: Scenario, provider: Provider, overrides: Mapping[str, str]) -> str:
    return overrides.get(provider) or scenario.models.get(provider) or DEFAULT_MODELS[provider]


class ScriptedSource:
    """The in-process emulator; one server for the whole run, one run id per cell."""

    name = "scripted"

    def __init__(self, scenarios: Iterable[Scenario], models: Mapping[str, str]) -> None:
        self.models = dict(models)
        self.emulator = Emulator(scenarios).start()

    def endpoint(self, scenario: Scenario, provider: Provider, run_id: str) -> Endpoint:
        return Endpoint(
            base_url=self.emulator.base_urls(scenario.id, run_id)[provider],
            api_key=SCRIPTED_KEY,
            model=pick_model(scenario, provider, self.models),
        )

    def transport(
        self, scenario: Scenario, provider: Provider, stream: bool
    ) -> httpx2.BaseTransport | None:
        return None

    def rejections(self, run_id: str) -> list[LogEntry]:
        """Requests the emulator rejected as the real API would (not injected faults)."""
        return [e for e in self.emulator.log(run_id) if e.error is not None and e.fault is None]

    def findings(self, scenario: Scenario, provider: Provider, stream: bool) -> list[Finding]:
        return []

    def close(self) -> None:
        self.emulator.stop()


class LiveSource:
    """The real APIs, keys from the SDKs' usual variables. Base URLs are left to the SDKs, so
    ANTHROPIC_BASE_URL / OPENAI_BASE_URL / GOOGLE_GEMINI_BASE_URL apply as in any program."""

    name = "live"

    def __init__(
        self,
        providers: Iterable[Provider],
        models: Mapping[str, str],
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.models = dict(models)
        self.keys = {p: key_from_env(p, env) for p in providers}

    def endpoint(self, scenario: Scenario, provider: Provider, run_id: str) -> Endpoint:
        if provider not in self.keys:
            raise HarnessError(f"no key was read for {provider}")
        return Endpoint(
            base_url=None,
            api_key=self.keys[provider],
            model=pick_model(scenario, provider, self.models),
        )

    def transport(
        self, scenario: Scenario, provider: Provider, stream: bool
    ) -> httpx2.BaseTransport | None:
        return None

    def rejections(self, run_id: str) -> list[LogEntry]:
        return []

    def findings(self, scenario: Scenario, provider: Provider, stream: bool) -> list[Finding]:
        return []

    def close(self) -> None:
        """Nothing to stop."""
