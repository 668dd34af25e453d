"""`expect.tools`: the expected tools in the expected order, where runs that overlapped in time
have no order between them (which one started first is the scheduler's choice; running them at
once is L4's finding, every time)."""

from __future__ import annotations

from harness.outcome import overlapping, ran_as_expected
from harness.tools import ToolRun


def run(seq: int, name: str, started: float, ended: float) -> ToolRun:
    return ToolRun(
        seq=seq,
        name=name,
        arguments={},
        result="ok",
        is_error=False,
        started=started,
        ended=ended,
        thread=1,
        after_call=1,
    )


ONE_BY_ONE = [run(1, "a", 0.0, 1.0), run(2, "b", 1.0, 2.0), run(3, "c", 2.5, 3.0)]
AT_ONCE = [run(1, "b", 0.0, 1.0), run(2, "a", 0.5, 1.5), run(3, "c", 2.0, 3.0)]


def test_runs_one_at_a_time_in_the_expected_order_match() -> None:
    assert ran_as_expected(["a", "b", "c"], ONE_BY_ONE)


def test_runs_one_at_a_time_in_another_order_do_not() -> None:
    assert not ran_as_expected(["b", "a", "c"], ONE_BY_ONE)


def test_runs_that_overlapped_match_in_either_order() -> None:
    assert ran_as_expected(["a", "b", "c"], AT_ONCE)
    assert ran_as_expected(["b", "a", "c"], AT_ONCE)


def test_an_overlapping_group_must_still_hold_the_expected_tools_at_its_place() -> None:
    assert not ran_as_expected(["a", "c", "b"], AT_ONCE)  # c came after both, alone
    assert not ran_as_expected(["a", "a", "c"], AT_ONCE)
    assert not ran_as_expected(["a", "b"], AT_ONCE)
    assert not ran_as_expected(["a", "b", "c", "d"], AT_ONCE)


def test_groups_are_runs_that_overlapped_in_start_order() -> None:
    chained = [run(3, "c", 1.4, 2.0), run(1, "a", 0.0, 1.0), run(2, "b", 0.9, 1.5)]
    assert [[r.name for r in g] for g in overlapping(chained)] == [["a", "b", "c"]]
    assert [[r.name for r in g] for g in overlapping(ONE_BY_ONE)] == [["a"], ["b"], ["c"]]
    assert overlapping([]) == []
