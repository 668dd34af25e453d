"""Project settings: what to run and the product's decisions, in `[tool.harness]` of the
project's `pyproject.toml` (the nearest one at or above the current folder). The CLI and the
pytest plugin read the same table; flags (and the plugin's own options) override it.

    [tool.harness]
    loop = "my_app.agent:run"   # the loop under test (default: the reference loop)
    # exec = "node agent.mjs"   # ...or a program under test (not with `loop`)
    scenarios = ["scenarios"]   # scenario files or folders
    cassettes = "cassettes"     # where cassettes are recorded and replayed from
    reports = "reports"         # results.json, index.html and junit.xml are written here
    models = { anthropic = "claude-sonnet-4-5" }   # per provider; scripted and live only
    max_rounds = 10             # the app's round budget, for scenarios that set none (L3)
    context_window = 20         # at most this many saved messages per query (L7)
    stream = "both"             # stream variants to run: both | on | off
    providers = ["anthropic", "openai", "gemini"]
    drift_ignore = ["max_tokens", "gemini:generationConfig.seed"]  # request fields not compared

`drift_ignore` names request fields a replay does not compare with the recording: a path of
keys (lists are passed through, `*` is any one key), for every provider or, with a
`provider:` prefix, for one (see README "Cassettes: record and replay").

Paths are relative to the folder of that pyproject.toml. A scenario's own `max_rounds` /
`context_window` override the project's. An unknown key or a wrong type is one clear line
(exit 2).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.errors import HarnessError
from harness.scenario.model import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_ROUNDS, Provider

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_SETTINGS_BYTES = 1024 * 1024
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "gemini")
Stream = Literal["both", "on", "off"]
# `[provider:]key.key…`; a key is letters, digits and `_`, or `*` for any one key.
DRIFT_PATH = re.compile(
    r"^(?:(?:anthropic|openai|gemini):)?(?:[A-Za-z0-9_]+|\*)(?:\.(?:[A-Za-z0-9_]+|\*))*$"
)


class SettingsError(HarnessError):
    """`[tool.harness]` cannot be read or holds something the harness does not take."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    max_rounds: int = DEFAULT_MAX_ROUNDS
    context_window: int = DEFAULT_CONTEXT_WINDOW
    stream: Stream = "both"
    providers: tuple[Provider, ...] = PROVIDERS
    drift_ignore: tuple[str, ...] = ()
    loop: str | None = None  # module:function; None (and no `exec`): the reference loop
    exec: str | None = None  # a shell command running the loop under test (harness.exec)
    scenarios: tuple[Path, ...] = ()  # empty: ./scenarios
    cassettes: Path | None = None  # None: ./cassettes
    reports: Path | None = None  # None: ./reports
    models: Mapping[str, str] = field(default_factory=dict)  # provider -> model
    file: str = ""  # where they were read from ("" for the defaults)


KNOWN = (
    "loop",
    "exec",
    "scenarios",
    "cassettes",
    "reports",
    "models",
    "max_rounds",
    "context_window",
    "stream",
    "providers",
    "drift_ignore",
)


def find_pyproject(start: Path | None = None) -> Path | None:
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            return path
    return None


def load_settings(start: Path | None = None) -> Settings:
    """The project's settings, or the defaults when no pyproject.toml has `[tool.harness]`."""
    path = find_pyproject(start)
    if path is None:
        return Settings()
    table = read_table(path)
    return settings_from(table, str(path)) if table is not None else Settings()


def read_table(path: Path) -> Mapping[str, Any] | None:
    """`[tool.harness]` of the TOML file at `path`, or None when it has none."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SETTINGS_BYTES + 1)
        if len(raw) > MAX_SETTINGS_BYTES:
            raise SettingsError(f"{path}: larger than {MAX_SETTINGS_BYTES} bytes")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read it as TOML: {exc}") from None
    return table_in(text, path)


def table_in(text: str, path: Path) -> Mapping[str, Any] | None:
    """`[tool.harness]` of a TOML text that belongs at `path` (named in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: cannot read it as TOML: {exc}") from None
    tool = data.get("tool")
    table = tool.get("harness") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.harness] must be a table")
    return table


def settings_from(table: Mapping[str, Any], file: str) -> Settings:
    """`file`'s folder is what the table's paths are relative to."""
    where = f"{file}: [tool.harness]"
    unknown = sorted(set(table) - set(KNOWN))
    if unknown:
        raise SettingsError(
            f"{where}: unknown key {unknown[0]!r}; the harness reads {', '.join(KNOWN)}"
        )
    root = Path(file).parent
    loop = _loop(table.get("loop"), where)
    program = _text(table, "exec", where)
    if loop is not None and program is not None:
        raise SettingsError(f"{where}: loop and exec both name the loop under test; keep one")
    cassettes, reports = _text(table, "cassettes", where), _text(table, "reports", where)
    return Settings(
        max_rounds=_integer(table, "max_rounds", DEFAULT_MAX_ROUNDS, 1, 100, where),
        context_window=_integer(table, "context_window", DEFAULT_CONTEXT_WINDOW, 1, 1000, where),
        stream=_stream(table.get("stream", "both"), where),
        providers=_providers(table.get("providers", list(PROVIDERS)), where),
        drift_ignore=_drift_ignore(table.get("drift_ignore", []), where),
        loop=loop,
        exec=program,
        scenarios=tuple(_under(root, p) for p in _paths(table.get("scenarios", []), where)),
        cassettes=None if cassettes is None else _under(root, cassettes),
        reports=None if reports is None else _under(root, reports),
        models=_models(table.get("models", {}), where),
        file=file,
    )


def _under(root: Path, value: str) -> Path:
    """`value` from the settings' folder; relative to the current folder when inside it, as
    paths appear in messages and reports."""
    path = root / value
    try:
        return Path(os.path.relpath(path)) if path.resolve().is_relative_to(Path.cwd()) else path
    except ValueError:  # another drive (Windows)
        return path


def _integer(
    table: Mapping[str, Any], key: str, default: int, low: int, high: int, where: str
) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SettingsError(
            f"{where} {key}: must be an integer from {low} to {high} (got {value!r})"
        )
    return value


def _text(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise SettingsError(f"{where} {key}: must be a non-empty string (got {value!r})")
    return value


def _loop(value: Any, where: str) -> str | None:
    if value is None:
        return None
    module, sep, function = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not (module and sep and function):
        raise SettingsError(
            f'{where} loop: write it as "module:function", e.g. "my_app.agent:run" (got {value!r})'
        )
    return f"{module}:{function}"


def _paths(value: Any, where: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or any(not isinstance(p, str) or not p for p in items):
        raise SettingsError(
            f"{where} scenarios: must be a folder or file, or a list of them (got {value!r})"
        )
    return items


def _models(value: Any, where: str) -> dict[str, str]:
    good = isinstance(value, dict) and all(
        k in PROVIDERS and isinstance(v, str) and v for k, v in value.items()
    )
    if not good:
        raise SettingsError(
            f'{where} models: must be a table of provider = "model" with providers among '
            f"{', '.join(PROVIDERS)} (got {value!r})"
        )
    return dict(value)


def _stream(value: Any, where: str) -> Stream:
    if value not in ("both", "on", "off"):
        raise SettingsError(f'{where} stream: must be "both", "on" or "off" (got {value!r})')
    stream: Stream = value
    return stream


def _providers(value: Any, where: str) -> tuple[Provider, ...]:
    if not isinstance(value, list) or not value or any(p not in PROVIDERS for p in value):
        raise SettingsError(
            f"{where} providers: must be a non-empty list of {', '.join(PROVIDERS)} (got {value!r})"
        )
    return tuple(p for p in PROVIDERS if p in value)


def _drift_ignore(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise SettingsError(f"{where} drift_ignore: must be a list of field paths (got {value!r})")
    for path in value:
        if not isinstance(path, str) or not DRIFT_PATH.match(path):
            raise SettingsError(
                f"{where} drift_ignore: {path!r} is not a field path; write keys joined by dots, "
                'optionally after a provider, e.g. "max_tokens" or "gemini:generationConfig.seed"'
            )
    return tuple(value)
