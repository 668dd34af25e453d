"""The cassette source: every cell answered from its committed recording by a replay app at
the endpoint on 127.0.0.1, network blocked (loopback only).

All the cassettes a run needs are read and checked before the first cell runs, so a missing or
broken file stops the run at once with one clear error (exit 2), not halfway through.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.cassettes import network
from harness.cassettes.cassette import Cassette, cassette_path
from harness.cassettes.files import load_cassette
from harness.cassettes.replay import ReplayApp
from harness.emulator.runlog import LogEntry
from harness.endpoint.local import LocalTransport
from harness.endpoint.server import Endpoint, Run
from harness.errors import CassetteError
from harness.findings import Finding
from harness.loop.clients import shared_transport
from harness.scenario.model import Provider, Scenario
from harness.sources import Opened, pick_model

REPLAY_KEY = "harness-replay-dummy-key"
DEFAULT_FOLDER = Path("cassettes")
MAX_LISTED = 8

CellKey = tuple[str, str, bool]  # scenario id, provider, stream


class CassetteSource:
    name = "cassette"
    api_key = REPLAY_KEY

    def __init__(
        self,
        cells: Iterable[tuple[Scenario, Provider, bool]],
        folder: str | Path = DEFAULT_FOLDER,
        in_process: bool = True,
    ) -> None:
        """`in_process`: the harness's own sync clients reach the replay without a socket
        (harness/endpoint/local.py); False sends them over loopback HTTP like any other."""
        self.folder = Path(folder)
        self.cassettes = _load_all(self.folder, list(cells))
        self._apps: dict[CellKey, ReplayApp] = {}
        network.block()
        self.endpoint = Endpoint().start()
        self._local = LocalTransport(self.endpoint, shared_transport()) if in_process else None
        self._closed = False

    @property
    def root(self) -> str:
        return self.endpoint.root

    def model(self, scenario: Scenario, provider: Provider) -> str:
        """The model the recording was made with (both stream variants record the same)."""
        for stream in (False, True):
            cassette = self.cassettes.get((scenario.id, provider, stream))
            if cassette is not None and cassette.meta is not None:
                return cassette.meta.model
        return pick_model(scenario, provider, {})

    def open(self, scenario: Scenario, provider: Provider, stream: bool, run_id: str) -> Opened:
        key = (scenario.id, provider, stream)
        cassette = self.cassettes.get(key)
        if cassette is None:
            raise CassetteError(f"no cassette was loaded for {scenario.id} on {provider}")
        app = ReplayApp(cassette, provider, hint=rerecord_hint(scenario, provider, stream))
        self._apps[key] = app
        run = self.endpoint.open(
            Run(id=run_id, scenario_id=scenario.id, app=app, provider=provider)
        )
        return Opened(
            run=run,
            base_urls=self.endpoint.base_urls(scenario.id, run_id),
            api_key=REPLAY_KEY,
            model=self.model(scenario, provider),
            transport=self._local,
        )

    def close_run(self, run_id: str) -> None:
        self.endpoint.close(run_id)

    def findings(self, scenario: Scenario, provider: Provider, stream: bool) -> list[Finding]:
        app = self._apps.get((scenario.id, provider, stream))
        return [] if app is None else app.findings()

    def rejections(self, run_id: str) -> list[LogEntry]:
        return []

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.endpoint.stop()
            network.unblock()


def rerecord_hint(scenario: Scenario, provider: str, stream: bool) -> str:
    variant = " --stream on" if stream else " --stream off"
    return (
        f"If the loop changed on purpose, re-record: harness record --source scripted "
        f"{scenario.path} --provider {provider}{variant}"
    )


def _load_all(
    folder: Path, cells: list[tuple[Scenario, Provider, bool]]
) -> dict[CellKey, Cassette]:
    loaded: dict[CellKey, Cassette] = {}
    missing: list[str] = []
    for scenario, provider, stream in cells:
        path = cassette_path(folder, provider, scenario.id, stream)
        if not path.is_file():
            missing.append(str(path))
            continue
        cassette = load_cassette(path)
        _check_meta(cassette, scenario.id, provider, stream)
        loaded[(scenario.id, provider, stream)] = cassette
    if missing:
        listed = ", ".join(missing[:MAX_LISTED])
        more = f" and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
        raise CassetteError(
            f"{len(missing)} cassette(s) missing: {listed}{more}. Record them with "
            "`harness record --source scripted` (or --source live), or run with "
            "--source scripted"
        )
    return loaded


def _check_meta(cassette: Cassette, scenario_id: str, provider: str, stream: bool) -> None:
    meta = cassette.meta
    if meta is None:
        return  # a foreign vcrpy cassette: nothing to check
    wanted = {"scenario": scenario_id, "provider": provider, "stream": stream}
    found = {"scenario": meta.scenario, "provider": meta.provider, "stream": meta.stream}
    for field, value in wanted.items():
        if found[field] != value:
            raise CassetteError(
                f"{cassette.path}: `harness.{field}` is {found[field]!r} but this file is the "
                f"cassette of {scenario_id} on {provider}{' (stream)' if stream else ''}; "
                "was it renamed or copied? Re-record it with `harness record`"
            )
