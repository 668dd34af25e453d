"""The Responses API's stored responses (`openai_store`): chains rebuilt oldest first, runs
apart, and every bound (responses per run, runs, bytes) kept."""

from __future__ import annotations

import threading

from harness.emulator.limits import Limits
from harness.emulator.openai_store import ResponseStore, responses_of

ASK = {"role": "user", "content": "Weather in Paris?"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
ANSWER = {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}


class Owner:
    """Stands for the emulator's server state."""

    limits = Limits(log_runs=3)


def test_a_chain_is_every_earlier_input_and_output_oldest_first() -> None:
    store = ResponseStore(runs=10)
    store.keep("r", "resp_1", None, [ASK], [CALL])
    store.keep("r", "resp_2", "resp_1", [OUTPUT], [ANSWER])
    assert store.chain("r", "resp_2") == [ASK, CALL, OUTPUT, ANSWER]
    assert store.chain("r", "resp_1") == [ASK, CALL]


def test_an_unknown_id_or_another_runs_id_has_no_chain() -> None:
    store = ResponseStore(runs=10)
    store.keep("r", "resp_1", None, [ASK], [CALL])
    assert store.chain("r", "resp_9") is None
    assert store.chain("other", "resp_1") is None


def test_a_dropped_link_ends_the_chain_and_a_loop_stops() -> None:
    store = ResponseStore(runs=10)
    store.keep("r", "resp_2", "resp_gone", [OUTPUT], [ANSWER])
    assert store.chain("r", "resp_2") == [OUTPUT, ANSWER]
    store.keep("r", "resp_a", "resp_b", [ASK], [CALL])
    store.keep("r", "resp_b", "resp_a", [OUTPUT], [ANSWER])  # a step played again
    assert store.chain("r", "resp_b") == [ASK, CALL, OUTPUT, ANSWER]


def test_a_run_keeps_its_newest_responses() -> None:
    store = ResponseStore(runs=10, per_run=2)
    for n in range(3):
        store.keep("r", f"resp_{n}", None, [ASK], [ANSWER])
    assert store.get("r", "resp_0") is None
    assert store.get("r", "resp_1") and store.get("r", "resp_2")


def test_the_runs_written_to_most_recently_are_kept() -> None:
    store = ResponseStore(runs=2)
    for run in ("a", "b", "a", "c"):
        store.keep(run, "resp_1", None, [ASK], [ANSWER])
    assert sorted(store.runs) == ["a", "c"]


def test_the_byte_budget_drops_the_oldest_responses_first() -> None:
    store = ResponseStore(runs=10, max_bytes=1)
    store.keep("a", "resp_1", None, [ASK], [ANSWER])
    store.keep("a", "resp_2", None, [ASK], [ANSWER])
    assert list(store.runs["a"]) == ["resp_2"]  # the newest always stays
    store.keep("b", "resp_1", None, [ASK], [ANSWER])
    assert list(store.runs) == ["b"]
    assert store.bytes == store.runs["b"]["resp_1"].size


def test_each_emulator_has_one_store_bounded_by_its_run_cap() -> None:
    owner, other = Owner(), Owner()
    assert responses_of(owner, "r").store is responses_of(owner, "s").store
    assert responses_of(owner, "r").store is not responses_of(other, "r").store
    assert responses_of(owner, "r").store.runs_cap == 3


def test_parallel_writers_keep_the_bounds() -> None:
    store = ResponseStore(runs=4, per_run=5)

    def write(run: str) -> None:
        for n in range(50):
            store.keep(run, f"resp_{n}", f"resp_{n - 1}" if n else None, [ASK], [ANSWER])

    threads = [threading.Thread(target=write, args=(f"run{k}",)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.runs) <= 4
    assert all(len(r) <= 5 for r in store.runs.values())
    assert store.bytes == sum(e.size for r in store.runs.values() for e in r.values())
    for run in store.runs:
        # A run evicted by the others and made again keeps fewer links: how many depends on
        # the threads' timing, never more than its bound, and every link is whole.
        chain = store.chain(run, "resp_49")
        assert chain and len(chain) <= 10 and chain == [ASK, ANSWER] * (len(chain) // 2)
