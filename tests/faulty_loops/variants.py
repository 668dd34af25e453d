"""How a faulty loop is made: the reference loop with one decision or one adapter method
replaced, so each fault is a few readable lines and nothing else differs.

- `reference_with(swaps)`: the reference loop with names in its modules replaced for the
  duration of one loop call (the loop's own functions and constants, or an adapter module's).
- `with_adapters(factories)`: the reference loop on a faulty adapter (usually a tiny subclass
  of the provider's adapter) for the providers named; the others keep theirs.
- `per_provider(loops)`: a different faulty loop per provider, where the fault is spelled in
  each provider's own module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest.mock import patch

from harness.loop.adapters import Adapter, adapter_for
from harness.loop.contract import Loop, LoopCall, LoopResult, ProviderName
from harness.loop.reference import reference_loop, run_loop

Swap = tuple[object, str, object]  # (module or class, attribute name, replacement)
SwapsFor = Callable[[LoopCall], tuple[Swap, ...]]
AdapterFactory = Callable[[LoopCall], Adapter[Any]]


@contextmanager
def replaced(swaps: tuple[Swap, ...]) -> Iterator[None]:
    with ExitStack() as stack:
        for target, name, value in swaps:
            stack.enter_context(patch.object(target, name, value))
        yield


def reference_with(*swaps: Swap) -> Loop:
    """The reference loop with `swaps` in place while it answers one message."""
    return reference_with_each_call(lambda call: swaps)


def reference_with_each_call(swaps_for: SwapsFor) -> Loop:
    """Like `reference_with`, for replacements that need the call (its tools, its provider)."""

    def loop(call: LoopCall) -> LoopResult:
        with replaced(swaps_for(call)):
            return reference_loop(call)

    return loop


def with_adapters(factories: Mapping[ProviderName, AdapterFactory]) -> Loop:
    def loop(call: LoopCall) -> LoopResult:
        factory = factories.get(call.provider, adapter_for)
        return run_loop(factory(call), call)

    return loop


def per_provider(loops: Mapping[ProviderName, Loop]) -> Loop:
    def loop(call: LoopCall) -> LoopResult:
        return loops.get(call.provider, reference_loop)(call)

    return loop
