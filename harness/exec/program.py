"""Running the program for one query: through the shell, in its own process group, the query on
stdin, stdout kept (bounded) and the tail of stderr kept, killed whole at the timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

MAX_STDOUT_BYTES = 64 * 1024 * 1024  # an answer is a chat, not a log: more is bad output
STDERR_TAIL_BYTES = 64 * 1024  # kept of stderr (its last lines go into findings)
DRAIN_SECONDS = 5.0  # after the process ends, for pipes a stray descendant may hold open


@dataclass(frozen=True, kw_only=True)
class Finished:
    returncode: int | None  # None: killed at the timeout
    stdout: bytes
    stdout_overflow: bool  # more than MAX_STDOUT_BYTES came
    stderr_tail: bytes

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_program(
    command: str, stdin: bytes, env: Mapping[str, str], timeout: float, cwd: str | None = None
) -> Finished:
    """Run `command` via the shell; whatever it does, this returns within about `timeout`
    plus a few seconds (a program that hangs, never reads stdin, or floods stdout)."""
    process = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, killed whole
    )
    assert process.stdin and process.stdout and process.stderr
    out, err = _Reader(process.stdout, MAX_STDOUT_BYTES), _Reader(process.stderr, None)
    writer = threading.Thread(target=_write, args=(process.stdin, stdin), daemon=True)
    for thread in (out.thread, err.thread, writer):
        thread.start()
    try:
        returncode: int | None = process.wait(timeout)
    except subprocess.TimeoutExpired:
        returncode = None
    finally:
        _kill_group(process)  # descendants left behind go too
        if process.poll() is None:
            process.wait()
    for thread in (out.thread, err.thread, writer):
        thread.join(DRAIN_SECONDS)
    return Finished(
        returncode=returncode,
        stdout=bytes(out.data),
        stdout_overflow=out.overflow,
        stderr_tail=bytes(err.data[-STDERR_TAIL_BYTES:]),
    )


class _Reader:
    """Reads a pipe to its end in a thread, keeping at most `limit` bytes (None: the tail)."""

    def __init__(self, pipe: IO[bytes], limit: int | None) -> None:
        self.pipe, self.limit = pipe, limit
        self.data = bytearray()
        self.overflow = False
        self.thread = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.pipe.read1(65536):  # type: ignore[attr-defined]
                self.data += chunk
                if self.limit is None:
                    del self.data[: max(0, len(self.data) - 2 * STDERR_TAIL_BYTES)]
                elif len(self.data) > self.limit:
                    self.overflow = True
                    del self.data[self.limit :]
        with contextlib.suppress(OSError):
            self.pipe.close()


def _write(pipe: IO[bytes], data: bytes) -> None:
    """The query; a program that never reads it (or exits first) is not an error here."""
    with contextlib.suppress(OSError, ValueError):
        pipe.write(data)
    with contextlib.suppress(OSError, ValueError):
        pipe.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
