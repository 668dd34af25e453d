"""Two results files compared for what a run found, not when or where it ran: timings, the run's
own metadata (start, end, argv, shard, parts) and the endpoint's port (each run picks a free
one, and it is in every captured URL and Host header) are left out."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PORT = re.compile(r"127\.0\.0\.1:[0-9]+")


def comparable(path: Path) -> Any:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("run")
    for cell in data["cells"]:
        cell.pop("timing")
        for exchange in cell["exchanges"]:
            exchange.pop("elapsed")
        for tool_run in cell["tool_runs"]:
            tool_run.pop("elapsed")
    return json.loads(PORT.sub("127.0.0.1:PORT", json.dumps(data)))


def outputs(folder: Path) -> list[str]:
    """--results / --html / --junit into `folder`."""
    return [
        *("--results", str(folder / "results.json"), "--html", str(folder / "index.html")),
        *("--junit", str(folder / "junit.xml")),
    ]
