"""Where a run's model answers come from: the scripted emulator or the live APIs (the cassette
source lives in `harness.cassettes.source`). Every source is an endpoint on 127.0.0.1 that
records each exchange as it arrives; per cell it opens a run there and hands out the run's base
URLs, a dummy key and the model."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import httpx2

from harness.emulator.runlog import LogEntry
from harness.emulator.server import Emulator
from harness.endpoint.forward import ForwardApp, RetryPolicy
from harness.endpoint.server import Endpoint, Run, base_urls
from harness.errors import HarnessError
from harness.findings import Finding
from harness.providers import BASE_URL_VARIABLES, DEFAULT_MODELS, KEY_VARIABLES, key_from_env
from harness.scenario.model import Provider, Scenario

SCRIPTED_KEY = "harness-scripted-dummy-key"
LIVE_KEY = "harness-live-dummy-key"
# The SDKs' own default base URLs (providers.md §7): where the live source forwards unless the
# SDK's base-URL variable names another (a gateway, or in the tests the emulator).
REAL_BASE_URLS: Mapping[str, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/",
}


@dataclass(frozen=True, kw_only=True)
class Opened:
    """A cell's run at the source's endpoint: what the loop is handed, and what it sent."""

    run: Run
    base_urls: Mapping[str, str]  # per provider, as each SDK takes it
    api_key: str
    model: str
    # The transport of the sync clients the harness hands the loop; None: the shared pool
    # (over loopback HTTP). A replay serves its run in-process (harness/endpoint/local.py).
    transport: httpx2.BaseTransport | None = None

    def env(self) -> dict[str, str]:
        """The SDKs' own variables, pointing every provider at this run."""
        return sdk_env(self.base_urls, self.api_key)


class Source(Protocol):
    name: str
    api_key: str  # the dummy key its endpoint accepts

    @property
    def root(self) -> str:
        """The endpoint's root URL (requests without a run prefix go to the open run)."""
        ...

    def model(self, scenario: Scenario, provider: Provider) -> str: ...

    def open(self, scenario: Scenario, provider: Provider, stream: bool, run_id: str) -> Opened:
        """Open the cell's run at the endpoint (closed again with `close_run`)."""
        ...

    def close_run(self, run_id: str) -> None: ...

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
    api_key = SCRIPTED_KEY

    def __init__(self, scenarios: Iterable[Scenario], models: Mapping[str, str]) -> None:
        self.models = dict(models)
        self.emulator = Emulator(scenarios).start()

    @property
    def root(self) -> str:
        return self.emulator.root

    def model(self, scenario: Scenario, provider: Provider) -> str:
        return pick_model(scenario, provider, self.models)

    def open(self, scenario: Scenario, provider: Provider, stream: bool, run_id: str) -> Opened:
        run = self.emulator.open_run(scenario.id, run_id, provider)
        return Opened(
            run=run,
            base_urls=self.emulator.base_urls(scenario.id, run_id),
            api_key=SCRIPTED_KEY,
            model=self.model(scenario, provider),
        )

    def close_run(self, run_id: str) -> None:
        self.emulator.close_run(run_id)

    def rejections(self, run_id: str) -> list[LogEntry]:
        """Requests the emulator rejected as the real API would (not injected faults)."""
        return [e for e in self.emulator.log(run_id) if e.error is not None and e.fault is None]

    def findings(self, scenario: Scenario, provider: Provider, stream: bool) -> list[Finding]:
        return []

    def close(self) -> None:
        self.emulator.stop()


class LiveSource:
    """The real APIs, through a forwarding recorder on 127.0.0.1. Keys come from the SDKs'
    usual variables and never reach the loop (it gets a dummy the forwarder swaps); requests
    go on to each SDK's default base URL, or to the one ANTHROPIC_BASE_URL / OPENAI_BASE_URL /
    GOOGLE_GEMINI_BASE_URL names, as in any program."""

    name = "live"
    api_key = LIVE_KEY

    def __init__(
        self,
        providers: Iterable[Provider],
        models: Mapping[str, str],
        env: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.models = dict(models)
        self.retry = retry
        self.keys = {p: key_from_env(p, env) for p in providers}
        self.upstreams = {
            p: env.get(variable) or REAL_BASE_URLS[p] for p, variable in BASE_URL_VARIABLES.items()
        }
        self.client = httpx2.Client(timeout=None, follow_redirects=False)
        self.endpoint = Endpoint().start()

    @property
    def root(self) -> str:
        return self.endpoint.root

    def model(self, scenario: Scenario, provider: Provider) -> str:
        return pick_model(scenario, provider, self.models)

    def open(self, scenario: Scenario, provider: Provider, stream: bool, run_id: str) -> Opened:
        if provider not in self.keys:
            raise HarnessError(f"no key was read for {provider}")
        app = ForwardApp(
            provider=provider,
            upstream=self.upstreams[provider],
            real_key=self.keys[provider],
            dummy_key=LIVE_KEY,
            client=self.client,
            retry=self.retry,
        )
        run = self.endpoint.open(
            Run(id=run_id, scenario_id=scenario.id, app=app, provider=provider)
        )
        return Opened(
            run=run,
            base_urls=self.endpoint.base_urls(scenario.id, run_id),
            api_key=LIVE_KEY,
            model=self.model(scenario, provider),
        )

    def close_run(self, run_id: str) -> None:
        self.endpoint.close(run_id)

    def rejections(self, run_id: str) -> list[LogEntry]:
        return []

    def findings(self, scenario: Scenario, provider: Provider, stream: bool) -> list[Finding]:
        return []

    def close(self) -> None:
        self.endpoint.stop()
        self.client.close()


def sdk_env(urls: Mapping[str, str], api_key: str) -> dict[str, str]:
    """The SDKs' own base-URL and key variables for these base URLs (per provider)."""
    out: dict[str, str] = {}
    for provider, variable in BASE_URL_VARIABLES.items():
        out[variable] = urls[provider]
        for key_variable in KEY_VARIABLES[provider]:
            out[key_variable] = api_key
    return out


def endpoint_env(root: str, api_key: str) -> dict[str, str]:
    """The SDKs' own variables for the endpoint at `root`, without a run prefix."""
    return sdk_env(base_urls(root), api_key)


# google-genai warns on every client it builds when both of its key variables are set
# (google/genai/_api_client.py, get_env_api_key: "Both GOOGLE_API_KEY and GEMINI_API_KEY are
# set. Using GOOGLE_API_KEY."). `sdk_environment` sets both to the same dummy on purpose (a
# developer's real key in either must never be used), so that warning is noise on every cell.
GENAI_CLIENT_LOGGER = "google_genai._api_client"
BOTH_GEMINI_KEYS = "Both GOOGLE_API_KEY and GEMINI_API_KEY are set"


class BothGeminiKeys(logging.Filter):
    """Drops google-genai's warning about both key variables, and nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(BOTH_GEMINI_KEYS)


@contextmanager
def sdk_environment(source: Source) -> Iterator[None]:
    """For the duration, the SDKs' base-URL and key variables point at the source's endpoint
    (no run prefix: each request goes to the cell running for its provider). So a client the
    loop builds from the environment — at import, or kept in a module — is captured too, and
    never reaches a real API with a developer's key. The previous values come back after."""
    saved = {name: os.environ.get(name) for name in endpoint_env("", "")}
    os.environ.update(endpoint_env(source.root, source.api_key))
    quiet = BothGeminiKeys()
    logging.getLogger(GENAI_CLIENT_LOGGER).addFilter(quiet)
    try:
        yield
    finally:
        logging.getLogger(GENAI_CLIENT_LOGGER).removeFilter(quiet)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
