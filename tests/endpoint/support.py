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
    """On leaving, every exchange begun has ended, as at the end of a query (`settle`): the
    client has its reply before the server's thread ends the record, and stopping the endpoint
    does not wait for that thread, so a test reading the capture afterwards reads it whole."""
    with Endpoint() as endpoint:
        run = endpoint.open(Run(id="r", scenario_id=scenario_id, app=app, provider=provider))
        yield Served(endpoint=endpoint, run=run, base=f"{endpoint.root}/s/{scenario_id}/r/r")
        run.capture.settle()
