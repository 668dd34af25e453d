"""An endpoint with one run open for an app, for tests of the apps behind it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from harness.endpoint.server import App, Endpoint, Run


@dataclass(frozen=True)
class Served:
    endpoint: Endpoint
    run: Run
    base: str  # the run's base URL without any API version: POST f"{base}/v1/messages"


@contextmanager
def serving(app: App, provider: str = "anthropic", scenario_id: str = "s") -> Iterator[Served]:
    with Endpoint() as endpoint:
        run = endpoint.open(Run(id="r", scenario_id=scenario_id, app=app, provider=provider))
        yield Served(endpoint=endpoint, run=run, base=f"{endpoint.root}/s/{scenario_id}/r/r")
