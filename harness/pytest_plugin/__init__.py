"""The pytest plugin (entry point `pytest11: harness`): scenarios collected as test items, one per
cell, `scenario_id[provider]` or `scenario_id[provider-stream]`.

Nothing happens unless asked: `--harness`, `--harness-scenarios PATH` or the ini value
`harness_scenarios` turn collection on. Until then this module imports only pytest and the
standard library, so other test suites in the environment do not pay for the harness or the SDKs.
`-p no:harness` removes the plugin altogether.

Each pytest process (each pytest-xdist worker) builds its own `Player` — its own emulator and
sources — at its first item, and closes it when the session ends.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

from harness.pytest_plugin.settings import SETTINGS, Settings, add_options

if TYPE_CHECKING:
    from harness.loop.contract import Loop
    from harness.pytest_plugin.items import ScenarioFile
    from harness.pytest_plugin.player import Player

LOOP = pytest.StashKey["Loop"]()
PLAYER = pytest.StashKey["Player"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    settings = Settings.read(config)
    config.stash[SETTINGS] = settings
    if not settings.enabled:
        return
    config.addinivalue_line(
        "markers", "harness: a harness scenario cell (scenario × provider × stream variant)"
    )
    if settings.report is not None and not hasattr(config, "workerinput"):
        from harness.pytest_plugin.report import ReportWriter

        # The one process that writes the report: the only one, or the xdist controller.
        config.pluginmanager.register(ReportWriter(settings, settings.report), "harness-report")
    _visit_scenarios(config, settings)


def _visit_scenarios(config: pytest.Config, settings: Settings) -> None:
    """With no paths on the command line (testpaths or the current folder), make pytest visit
    the scenario folders too; paths given explicitly are left as they are."""
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    here = config.invocation_params.dir
    visited = [(here / arg.split("::")[0]).resolve() for arg in config.args]
    for path in settings.scenario_paths:
        if not any(path == v or v in path.parents for v in visited):
            config.args.append(str(path))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    settings = parent.config.stash.get(SETTINGS, None)
    if settings is None or not settings.enabled or not settings.wants(file_path):
        return None
    from harness.pytest_plugin.items import ScenarioFile

    file: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return file


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Import the loop under test before anything runs: a loop that cannot be imported is a
    usage error, as a bad option is. A pytest-xdist worker leaves that to the controller and
    imports the loop at its first item."""
    config = session.config
    settings = config.stash.get(SETTINGS, None)
    if settings is None or not settings.enabled or config.option.collectonly:
        return
    if hasattr(config, "workerinput"):
        return
    from harness.errors import HarnessError

    try:
        config.stash[LOOP] = _load_loop(settings)
    except HarnessError as exc:
        raise pytest.UsageError(str(exc).replace("--loop", "--harness-loop", 1)) from None


def _load_loop(settings: Settings) -> Loop:
    if settings.exec is not None:
        from harness.exec.loop import DEFAULT_TIMEOUT, ExecLoop

        return ExecLoop(command=settings.exec, timeout=settings.exec_timeout or DEFAULT_TIMEOUT)
    from harness.runner import REFERENCE_LOOP, load_loop

    return load_loop(settings.loop or REFERENCE_LOOP)


def player_for(session: pytest.Session) -> Player:
    """This process's player, built at its first item from the items it collected."""
    config = session.config
    player = config.stash.get(PLAYER, None)
    if player is None:
        from harness.pytest_plugin.items import ScenarioItem
        from harness.pytest_plugin.player import Player

        ours = [i for i in session.items if isinstance(i, ScenarioItem)]
        scenarios = list({i.scenario.id: i.scenario for i in ours}.values())
        providers = sorted({i.cell.provider for i in ours})
        settings = config.stash[SETTINGS]
        loop = config.stash.get(LOOP, None) or _load_loop(settings)
        player = Player(settings, scenarios, providers, loop)
        config.stash[PLAYER] = player
    return player


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pluggy.Result[Any], None]:
    """`--harness-report`: the cell's result rides on its call report (to the controller)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        from harness.pytest_plugin.report import CELL, CELL_ATTRIBUTE

        text = item.stash.get(CELL, None)
        if text is not None:
            setattr(report, CELL_ATTRIBUTE, text)


def pytest_sessionfinish(session: pytest.Session) -> None:
    player = session.config.stash.get(PLAYER, None)
    if player is not None:
        player.close()
        del session.config.stash[PLAYER]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line on where the cells' answers came from (read from the reports, so it counts
    the items of every pytest-xdist worker)."""
    if not terminalreporter.config.stash[SETTINGS].enabled:
        return
    from harness.pytest_plugin.items import SOURCE_PROPERTY

    hows = [
        str(value)
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", None) == "call"
        for name, value in getattr(report, "user_properties", ())
        if name == SOURCE_PROPERTY
    ]
    if hows:
        counts = ", ".join(f"{hows.count(h)} {h}" for h in sorted(set(hows)))
        terminalreporter.write_line(f"harness: {len(hows)} cell(s): {counts}")
