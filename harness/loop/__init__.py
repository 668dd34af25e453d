"""Agent loops: the contract any loop implements, and the reference loop."""

from harness.loop.contract import LoopCall, LoopResult, ToolError, ToolSpec

__all__ = ["LoopCall", "LoopResult", "ToolError", "ToolSpec"]
