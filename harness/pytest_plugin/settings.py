"""The plugin's options: declared once (`add_options`), read and checked once (`Settings.read`).

Where a value comes from, first found: the command line, the pytest ini value
(`[tool.pytest.ini_options]` `harness_*`), the project's `[tool.harness]` (as the CLI reads it:
loop or exec, scenarios, cassettes, providers, stream, models), the default.

Only the standard library and pytest are imported here: pytest loads the plugin in every
session of the environment, and a session that does not ask for scenarios must not pay for the
harness (or the SDKs) at all; `[tool.harness]` is read only once collection is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

SOURCES = ("cassette", "scripted", "live")
RECORD_SOURCES = ("scripted", "live")
PROVIDERS = ("anthropic", "openai", "gemini")
STREAMS = ("both", "on", "off")
# pytest-recording's names (and vcrpy's, plus `rewrite`); see `harness.pytest_plugin.player`
# for what each does to a cassette.
RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
DEFAULT_SCENARIOS = "scenarios"
DEFAULT_CASSETTES = "cassettes"

Source = Literal["cassette", "scripted", "live"]
RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite"]
Provider = Literal["anthropic", "openai", "gemini"]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "harness: agent-loop scenarios as tests")
    add = group.addoption
    add("--harness", action="store_true", help="collect the scenarios as test items")
    add(
        "--harness-scenarios",
        action="append",
        metavar="PATH",
        help="scenario file or folder (repeatable; implies --harness; default: the "
        "harness_scenarios ini value, else ./scenarios)",
    )
    add("--harness-scenario", action="append", metavar="ID", help="only this scenario id")
    add(
        "--harness-provider",
        action="append",
        choices=PROVIDERS,
        help="only this provider (default: [tool.harness] providers, else all)",
    )
    add(
        "--harness-stream",
        choices=STREAMS,
        help="stream variants (default: [tool.harness] stream, else both)",
    )
    add("--harness-source", choices=SOURCES, help="where answers come from (cassette)")
    add(
        "--harness-cassettes",
        metavar="DIR",
        help="cassette folder (default: ini harness_cassettes, [tool.harness] cassettes, else "
        "./cassettes)",
    )
    add(
        "--harness-record-mode",
        choices=RECORD_MODES,
        default="none",
        help="when cassettes are (re)recorded, as pytest-recording: none (replay only, the "
        "default), once (record missing cassettes), new_episodes (also re-record cells whose "
        "requests left their recording), all / rewrite (re-record every cell)",
    )
    add(
        "--harness-record-from",
        choices=RECORD_SOURCES,
        default="scripted",
        help="where recordings come from (scripted: the emulator, the default; live: the APIs)",
    )
    add("--harness-strict", action="store_true", help="replay drift fails the item")
    add(
        "--harness-loop",
        metavar="MODULE:FUNCTION",
        help="the loop under test (default: ini harness_loop, [tool.harness] loop, else the "
        "reference loop)",
    )
    add(
        "--harness-exec",
        metavar="COMMAND",
        help="the loop under test is a program (any language), run via the shell once per user "
        "message: the query as JSON on stdin, the answer as JSON on stdout",
    )
    add(
        "--harness-exec-timeout",
        type=float,
        metavar="SECONDS",
        help="--harness-exec: kill the program after this long per user message (120)",
    )
    add(
        "--harness-report",
        metavar="DIR",
        help="write results.json, index.html and junit.xml for the cells this session ran "
        "into DIR (under pytest-xdist: one report, the workers' cells merged)",
    )
    parser.addini(
        "harness_scenarios", "scenario files or folders; setting it collects them", "paths"
    )
    parser.addini("harness_source", "default --harness-source", default="cassette")
    parser.addini("harness_cassettes", "default --harness-cassettes", default="")
    parser.addini("harness_report", "default --harness-report (a folder)", default="")
    parser.addini("harness_loop", "default --harness-loop (module:function)", default="")
    parser.addini("harness_exec", "default --harness-exec (a shell command)", default="")
    parser.addini("harness_exec_timeout", "default --harness-exec-timeout (seconds)", default="")


@dataclass(frozen=True, kw_only=True)
class Settings:
    enabled: bool
    scenario_paths: tuple[Path, ...]  # absolute
    scenario_ids: tuple[str, ...]  # empty: all
    providers: tuple[Provider, ...] | None
    stream: bool | None
    source: Source
    cassettes: Path
    record_mode: RecordMode
    record_from: Literal["scripted", "live"]
    strict: bool
    loop: str | None  # None: the reference loop (or `exec`)
    exec: str | None = None  # a program under test (harness.exec): a shell command
    exec_timeout: float | None = None  # None: harness.exec's default
    models: Mapping[str, str] = field(default_factory=dict)  # [tool.harness] models
    report: Path | None = None  # where to write the session's results and reports

    @classmethod
    def read(cls, config: pytest.Config) -> Settings:
        """The options, command line over ini; `pytest.UsageError` on a bad combination."""
        opt = config.option
        here = config.invocation_params.dir
        root = config.inipath.parent if config.inipath else config.rootpath
        ini_paths: list[Path] = list(config.getini("harness_scenarios"))
        given = [here / p for p in opt.harness_scenarios or ()]
        enabled = bool(opt.harness or given or ini_paths or opt.harness_scenario)
        project = _project(root) if enabled else ProjectDefaults()
        source = opt.harness_source or _ini_choice(config, "harness_source", SOURCES)
        loop = opt.harness_loop or config.getini("harness_loop") or None
        program = opt.harness_exec or config.getini("harness_exec") or None
        if opt.harness_loop and program and not opt.harness_exec:
            program = None  # --harness-loop on the command line overrides an ini program
        elif opt.harness_exec and loop and not opt.harness_loop:
            loop = None  # and --harness-exec an ini loop
        if loop is None and program is None:
            loop, program = project.loop, project.exec
        paths = given or ini_paths or list(project.scenarios) or [root / DEFAULT_SCENARIOS]
        cassettes = _first_path(
            (here, opt.harness_cassettes), (root, config.getini("harness_cassettes"))
        )
        report = _first_path((here, opt.harness_report), (root, config.getini("harness_report")))
        settings = cls(
            enabled=enabled,
            scenario_paths=tuple(p.resolve() for p in paths),
            scenario_ids=tuple(opt.harness_scenario or ()),
            providers=tuple(opt.harness_provider or ()) or project.providers,
            stream={"both": None, "on": True, "off": False}[opt.harness_stream or project.stream],
            source=source,
            cassettes=(cassettes or project.cassettes or root / DEFAULT_CASSETTES).resolve(),
            record_mode=opt.harness_record_mode,
            record_from=opt.harness_record_from,
            strict=bool(opt.harness_strict),
            loop=loop,
            exec=program,
            exec_timeout=_exec_timeout(config),
            models=project.models,
            report=report,
        )
        settings.check()
        return settings

    def check(self) -> None:
        if self.record_mode != "none" and self.source != "cassette":
            raise pytest.UsageError(
                f"--harness-record-mode {self.record_mode} records cassettes, so it needs "
                f"--harness-source cassette (not {self.source}); choose where recordings come "
                "from with --harness-record-from scripted|live"
            )
        if self.loop is not None and self.exec is not None:
            raise pytest.UsageError(
                "--harness-loop and --harness-exec both name the loop under test: give one"
            )
        if self.exec_timeout is not None and self.exec_timeout <= 0:
            raise pytest.UsageError("--harness-exec-timeout takes a positive number of seconds")
        if self.loop is not None:
            module, sep, function = self.loop.partition(":")
            if not (module and sep and function):
                raise pytest.UsageError(
                    f"--harness-loop {self.loop!r}: write it as module:function, "
                    "e.g. my_app.agent:run"
                )
        if not self.enabled:
            return
        for path in self.scenario_paths:
            if not path.exists():
                raise pytest.UsageError(f"harness scenarios: {path}: no such file or folder")
        known = {p.stem for p in self._files()}
        unknown = [i for i in self.scenario_ids if i not in known]
        if unknown:
            raise pytest.UsageError(
                f"--harness-scenario {', '.join(unknown)}: no such scenario in "
                f"{', '.join(str(p) for p in self.scenario_paths)}"
            )

    def _files(self) -> list[Path]:
        return [
            file
            for path in self.scenario_paths
            for file in (sorted(path.glob("*.yaml")) if path.is_dir() else [path])
        ]

    def wants(self, file_path: Path) -> bool:
        """A scenario file of ours: one named, or a *.yaml directly in a folder named."""
        if file_path.suffix != ".yaml":
            return False
        for path in self.scenario_paths:
            if file_path == path or (path.is_dir() and file_path.parent == path):
                return not self.scenario_ids or file_path.stem in self.scenario_ids
        return False


SETTINGS = pytest.StashKey[Settings]()


def _exec_timeout(config: pytest.Config) -> float | None:
    given = config.option.harness_exec_timeout
    if given is not None:
        return float(given)
    value = str(config.getini("harness_exec_timeout")).strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise pytest.UsageError(
            f"ini harness_exec_timeout = {value!r}: give a number of seconds"
        ) from None


@dataclass(frozen=True, kw_only=True)
class ProjectDefaults:
    """What `[tool.harness]` gives the plugin: the values no option or ini value set."""

    loop: str | None = None
    exec: str | None = None
    scenarios: tuple[Path, ...] = ()
    cassettes: Path | None = None
    providers: tuple[Provider, ...] | None = None
    stream: str = "both"
    models: Mapping[str, str] = field(default_factory=dict)


def _project(root: Path) -> ProjectDefaults:
    """`[tool.harness]` of the nearest pyproject.toml at or above the project root."""
    import harness.scenario  # noqa: F401  # first: harness.settings needs it loaded (a cycle)
    from harness.settings import SettingsError, load_settings

    try:
        table = load_settings(root)
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    return ProjectDefaults(
        loop=table.loop,
        exec=table.exec,
        scenarios=table.scenarios,
        cassettes=table.cassettes,
        providers=table.providers,
        stream=table.stream,
        models=table.models,
    )


def _first_path(*given: tuple[Path, str | None]) -> Path | None:
    """The first value set, from the folder it is relative to (the invocation folder for an
    option, the ini file's for an ini value)."""
    for base, value in given:
        if value:
            return (base / value).resolve()
    return None


def _ini_choice(config: pytest.Config, name: str, choices: tuple[str, ...]) -> Source:
    value = str(config.getini(name))
    if value not in choices:
        raise pytest.UsageError(f"ini {name} = {value!r}: choose one of {', '.join(choices)}")
    return value  # type: ignore[return-value]
