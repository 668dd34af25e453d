"""Project settings: product decisions the checks read, in `[tool.harness]` of the project's
`pyproject.toml` (the nearest one at or above the current folder).

    [tool.harness]
    max_rounds = 10          # the app's round budget, for scenarios that set none (L3)
    context_window = 20      # at most this many saved messages per query (L7)
    stream = "both"          # stream variants to run: both | on | off
    providers = ["anthropic", "openai", "gemini"]
    drift_ignore = ["max_tokens", "gemini:generationConfig.seed"]  # request fields not compared

`drift_ignore` names request fields a replay does not compare with the recording: a path of
keys (lists are passed through, `*` is any one key), for every provider or, with a
`provider:` prefix, for one (see README "Cassettes: record and replay").

A scenario's own `max_rounds` / `context_window` override the project's; `--provider` and
`--stream` override these. An unknown key or a wrong type is one clear line (exit 2).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
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
    file: str = ""  # where they were read from ("" for the defaults)


KNOWN = ("max_rounds", "context_window", "stream", "providers", "drift_ignore")


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
    table = _table(path)
    return settings_from(table, str(path)) if table is not None else Settings()


def _table(path: Path) -> Mapping[str, Any] | None:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SETTINGS_BYTES + 1)
        if len(raw) > MAX_SETTINGS_BYTES:
            raise SettingsError(f"{path}: larger than {MAX_SETTINGS_BYTES} bytes")
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read it as TOML: {exc}") from None
    tool = data.get("tool")
    table = tool.get("harness") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.harness] must be a table")
    return table


def settings_from(table: Mapping[str, Any], file: str) -> Settings:
    where = f"{file}: [tool.harness]"
    unknown = sorted(set(table) - set(KNOWN))
    if unknown:
        raise SettingsError(
            f"{where}: unknown key {unknown[0]!r}; the harness reads {', '.join(KNOWN)}"
        )
    return Settings(
        max_rounds=_integer(table, "max_rounds", DEFAULT_MAX_ROUNDS, 1, 100, where),
        context_window=_integer(table, "context_window", DEFAULT_CONTEXT_WINDOW, 1, 1000, where),
        stream=_stream(table.get("stream", "both"), where),
        providers=_providers(table.get("providers", list(PROVIDERS)), where),
        drift_ignore=_drift_ignore(table.get("drift_ignore", []), where),
        file=file,
    )


def _integer(
    table: Mapping[str, Any], key: str, default: int, low: int, high: int, where: str
) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SettingsError(
            f"{where} {key}: must be an integer from {low} to {high} (got {value!r})"
        )
    return value


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
