"""The emulated Responses API's stored responses: what `previous_response_id` continues.

The real API keeps every response made under `store: true` (its default) and lets a later
request continue it by `previous_response_id`, sending only the new input items; under
`store: false` nothing is kept and the id is unknown (O4). The emulator keeps the responses of
each run apart (a run is one loop's conversation, as one API key's are on the real API), in a
store owned by the server (`Context.responses`), bounded:

- the newest `STORED_PER_RUN` (1,000) responses of a run;
- the runs written to most recently, as many as the run log keeps (`Limits.log_runs`);
- `STORED_BYTES` (64 MiB) of stored items over all runs, the oldest responses dropped first.

A response is kept with its own input items, its output and the id it continued, so a chain
is rebuilt by walking back (at most `STORED_PER_RUN` links; a link that was dropped ends the
walk, as an expired response would). Ids are deterministic per scenario step, so a step played
twice in one run replaces its earlier entry; the walk stops at an id it has already seen.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.emulator.limits import MIB, Limits

STORED_PER_RUN = 1_000
STORED_BYTES = 64 * MIB

Item = Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class StoredResponse:
    """One kept response: the input its request sent, what it answered, what it continued."""

    response_id: str
    previous_id: str | None
    input: tuple[Item, ...]
    output: tuple[Item, ...]
    size: int


class ResponseStore:
    """Every run's kept responses on one emulator. Thread-safe."""

    def __init__(
        self,
        runs: int,
        per_run: int = STORED_PER_RUN,
        max_bytes: int = STORED_BYTES,
    ) -> None:
        self.runs_cap, self.per_run, self.max_bytes = runs, per_run, max_bytes
        self.lock = threading.Lock()
        self.runs: OrderedDict[str, OrderedDict[str, StoredResponse]] = OrderedDict()
        self.bytes = 0

    def keep(
        self,
        run: str,
        response_id: str,
        previous_id: str | None,
        input_items: Sequence[Item],
        output: Sequence[Item],
    ) -> None:
        size = _size(input_items) + _size(output)
        entry = StoredResponse(
            response_id=response_id,
            previous_id=previous_id,
            input=tuple(input_items),
            output=tuple(output),
            size=size,
        )
        with self.lock:
            responses = self.runs.pop(run, None) or OrderedDict()
            self.runs[run] = responses  # now the most recently written run
            replaced = responses.pop(response_id, None)
            self.bytes -= replaced.size if replaced else 0
            responses[response_id] = entry
            self.bytes += size
            self._trim(responses)

    def get(self, run: str, response_id: str) -> StoredResponse | None:
        with self.lock:
            responses = self.runs.get(run)
            return responses.get(response_id) if responses else None

    def chain(self, run: str, response_id: str) -> list[Item] | None:
        """The items a request continuing `response_id` stands on (every earlier input and
        output, oldest first), or None when the run holds no such response."""
        with self.lock:
            responses = self.runs.get(run)
            entry = responses.get(response_id) if responses else None
            if responses is None or entry is None:
                return None
            links: list[StoredResponse] = []
            seen: set[str] = set()
            while entry is not None and entry.response_id not in seen:
                if len(links) >= self.per_run:
                    break
                links.append(entry)
                seen.add(entry.response_id)
                entry = responses.get(entry.previous_id) if entry.previous_id else None
        items: list[Item] = []
        for link in reversed(links):
            items.extend(link.input)
            items.extend(link.output)
        return items

    def _trim(self, newest: OrderedDict[str, StoredResponse]) -> None:
        while len(newest) > self.per_run:
            _, dropped = newest.popitem(last=False)
            self.bytes -= dropped.size
        while len(self.runs) > self.runs_cap:
            _, run = self.runs.popitem(last=False)
            self.bytes -= sum(e.size for e in run.values())
        while self.bytes > self.max_bytes and self._drop_oldest():
            pass

    def _drop_oldest(self) -> bool:
        """Drop the oldest response of the run written to least recently (never the entry
        just written: it is the newest of the newest run)."""
        for run, responses in self.runs.items():
            if len(responses) > 1 or run != next(reversed(self.runs)):
                _, dropped = responses.popitem(last=False)
                self.bytes -= dropped.size
                if not responses:
                    del self.runs[run]
                return True
        return False


@dataclass(frozen=True, kw_only=True)
class RunResponses:
    """One run's view of its emulator's store (what `Context.responses` hands the API)."""

    store: ResponseStore
    run: str

    def keep(
        self,
        response_id: str,
        previous_id: str | None,
        input_items: Sequence[Item],
        output: Sequence[Item],
    ) -> None:
        self.store.keep(self.run, response_id, previous_id, input_items, output)

    def chain(self, response_id: str) -> list[Item] | None:
        return self.store.chain(self.run, response_id)


_STORES: weakref.WeakKeyDictionary[object, ResponseStore] = weakref.WeakKeyDictionary()
_STORES_LOCK = threading.Lock()


def responses_of(owner: object, run: str) -> RunResponses:
    """The run's stored responses on the emulator `owner` (its server state): one store per
    owner, made on first use and gone with it."""
    with _STORES_LOCK:
        store = _STORES.get(owner)
        if store is None:
            limits = getattr(owner, "limits", None)
            runs = limits.log_runs if isinstance(limits, Limits) else Limits().log_runs
            store = _STORES[owner] = ResponseStore(runs=runs)
    return RunResponses(store=store, run=run)


def _size(items: Sequence[Item]) -> int:
    return len(json.dumps(list(items), ensure_ascii=False, default=str))
