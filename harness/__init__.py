"""harness: conformance and recording test harness for tool-calling agent loops."""

__version__ = "0.1.0"

PROVIDERS = ("anthropic", "openai", "gemini")
