"""`harness run --shard K/N`: a deterministic part of a run's cells, for a CI matrix.

The cells are sorted by id and dealt round-robin: cell i of the sorted list (from 0) goes to
shard i mod N + 1. The split depends only on the cell ids, so every machine cuts the same
library the same way, and shard sizes differ by at most one. `harness report` merges the
shards' results files back into one (`harness.results.merge`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.runner import Cell
    from harness.scenario.model import Scenario

SHARD = re.compile(r"^(?P<index>[0-9]+)/(?P<count>[0-9]+)$")


@dataclass(frozen=True, kw_only=True)
class Shard:
    """Shard `index` of `count` of a run whose every cell id, in run order, is `selection`;
    `library` fingerprints the scenario files it was cut from."""

    index: int
    count: int
    selection: tuple[str, ...]
    library: str

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N, else one line saying how to write it."""
    found = SHARD.match(text.strip())
    index, count = (int(found["index"]), int(found["count"])) if found else (0, 0)
    if not found or not 1 <= index <= count:
        raise HarnessError(
            f"--shard {text!r}: write it as K/N with 1 <= K <= N, e.g. --shard 1/2 and "
            "--shard 2/2 for a two-job CI matrix"
        )
    return index, count


def shard_of(
    chosen: Sequence[Cell], scenarios: Sequence[Scenario], text: str
) -> tuple[list[int], Shard]:
    """The places (from 1, in run order) of shard `text`'s cells among `chosen`, and what the
    results file records of the shard."""
    index, count = parse_shard(text)
    ranked = sorted(range(len(chosen)), key=lambda i: chosen[i].id)
    mine = {i for rank, i in enumerate(ranked) if rank % count == index - 1}
    shard = Shard(
        index=index,
        count=count,
        selection=tuple(c.id for c in chosen),
        library=library_digest(scenarios),
    )
    return [i + 1 for i in sorted(mine)], shard


def library_digest(scenarios: Sequence[Scenario]) -> str:
    """A fingerprint of the scenario files (id and bytes), so shards cut from different
    versions of a library are not merged."""
    digest = hashlib.sha256()
    for scenario in sorted(scenarios, key=lambda s: s.id):
        digest.update(scenario.id.encode() + b"\0")
        digest.update(hashlib.sha256(Path(scenario.path).read_bytes()).digest())
    return f"sha256:{digest.hexdigest()[:16]}"
