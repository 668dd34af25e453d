"""Temporary files an atomic write left behind, and removing them.

Every file the harness writes goes through a temporary file beside it that is renamed over the
target (`harness.cassettes.files.write_atomic`, `harness.results.files.write_text_atomic`). A
SIGKILL (or power loss) between creating it and renaming it leaves the temporary file, which no
`finally` can remove. `harness record` removes such files when it starts: only names of the
exact shape `tempfile.mkstemp` gave them, only regular files (never a link), and only when
older than `STALE_AFTER` seconds, so a write still in progress in another process is left.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

# `tempfile.mkstemp(prefix=".NAME.", suffix=...)` names: its 8 random characters come from
# `tempfile._RandomNameSequence.characters` (lower-case letters, digits and underscore).
_RANDOM = r"[a-z0-9_]{8}"
CASSETTE_TEMP = re.compile(rf"\.[^/]+\.yaml\.{_RANDOM}\.tmp")  # `.NAME.yaml.XXXXXXXX.tmp`
REPORT_TEMP = re.compile(rf"\.[^/]+\.(?:json|html|xml)\.{_RANDOM}")  # `.results.json.XXXXXXXX`
STALE_AFTER = 600.0  # seconds; a write takes well under a second, even for a large report
DEFAULT_REPORTS = Path("reports")


def stale_temp_files(folder: Path, now: float | None = None) -> Iterator[Path]:
    """Our temporary files older than `STALE_AFTER` in `folder` and its direct subfolders
    (`cassettes/<provider>/`), never following a link."""
    limit = (time.time() if now is None else now) - STALE_AFTER
    for entry in _entries(folder, depth=1):
        if _is_our_temp(entry.name) and entry.stat(follow_symlinks=False).st_mtime < limit:
            yield Path(entry.path)


def _entries(folder: Path, depth: int) -> Iterator[os.DirEntry[str]]:
    """The regular files in `folder`, and down `depth` levels of real (not linked) folders."""
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except OSError:  # no such folder, or not readable: nothing to clean
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                yield entry
            elif depth > 0 and entry.is_dir(follow_symlinks=False):
                yield from _entries(Path(entry.path), depth - 1)


def _is_our_temp(name: str) -> bool:
    return bool(CASSETTE_TEMP.fullmatch(name) or REPORT_TEMP.fullmatch(name))


def remove_stale_temp_files(folders: Iterable[Path], now: float | None = None) -> list[Path]:
    """Remove our stale temporary files in `folders`; the ones removed (one that cannot be
    removed is left: cleaning up never stops a command)."""
    removed = []
    for folder in folders:
        for path in stale_temp_files(folder, now):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def clean_before_recording(cassettes: str | Path, say: Callable[[str], None]) -> None:
    """What `harness record` runs first: the cassette folder and `reports/` cleaned, and a
    line saying what was removed."""
    removed = remove_stale_temp_files([Path(cassettes), DEFAULT_REPORTS])
    if removed:
        names = ", ".join(str(p) for p in removed[:3]) + (", …" if len(removed) > 3 else "")
        say(f"harness record: removed {len(removed)} stale temporary file(s) ({names})")
