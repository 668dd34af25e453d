"""Token usage read from the responses' own usage fields, and an ESTIMATED cost.

The prices are list prices in USD per million tokens as published by each provider when this
table was written; they change, cached and batch pricing is ignored, and thinking tokens are
counted as output. Use the figures to size a refresh, never as a bill. A model missing from
the table is priced at its provider's most expensive listed rate, so a `--budget` errs on the
safe side.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens


# Sources (list prices; third-party pages quote the providers' pricing pages):
# - claude-sonnet-4-6 $3/$15, gpt-5.4 family: https://kissapi.ai/blog/gpt-5-4-mini-nano-api-guide.html
# - gpt-5.4-mini $0.75/$4.50, gpt-5.5 $5/$30: https://wavespeed.ai/blog/ko/posts/gpt-5-4-mini-pricing/
# - gemini-3.5-flash $1.50/$9: https://docs.apiyi.com/ko/models/gemini-3-5-flash.md (a reseller's
#   list price; UNCONFIRMED against Google's page)
# - gemini 3 flash/pro preview, 3.1 flash-lite: https://github.com/schlebek/ai-wish-generator/releases/tag/v3.2.0
PRICES: Mapping[str, Mapping[str, Price]] = {
    "anthropic": {
        "claude-sonnet-4-6": Price(input=3.0, output=15.0),
        "claude-opus-4-6": Price(input=5.0, output=25.0),
        "claude-opus-4-5": Price(input=5.0, output=25.0),
        "claude-opus-4-1": Price(input=15.0, output=75.0),
        "claude-opus-4": Price(input=15.0, output=75.0),
        "claude-sonnet-4-5": Price(input=3.0, output=15.0),
        "claude-sonnet-4": Price(input=3.0, output=15.0),
        "claude-haiku-4-5": Price(input=1.0, output=5.0),
        "claude-3-5-haiku": Price(input=0.8, output=4.0),
    },
    "openai": {
        "gpt-5.5": Price(input=5.0, output=30.0),
        "gpt-5.4-nano": Price(input=0.20, output=1.25),
        "gpt-5.4-mini": Price(input=0.75, output=4.50),
        "gpt-5.4": Price(input=2.50, output=15.0),
        "gpt-5-nano": Price(input=0.05, output=0.40),
        "gpt-5-mini": Price(input=0.25, output=2.0),
        "gpt-5": Price(input=1.25, output=10.0),
        "gpt-4.1-mini": Price(input=0.40, output=1.60),
        "gpt-4.1": Price(input=2.0, output=8.0),
        "gpt-4o-mini": Price(input=0.15, output=0.60),
        "gpt-4o": Price(input=2.50, output=10.0),
    },
    "gemini": {
        "gemini-3.5-flash": Price(input=1.50, output=9.0),
        "gemini-3.1-pro-preview": Price(input=2.0, output=12.0),
        "gemini-3.1-flash-lite": Price(input=0.25, output=1.50),
        "gemini-3-pro-preview": Price(input=2.0, output=12.0),
        "gemini-3-flash-preview": Price(input=0.50, output=3.0),
        "gemini-2.5-pro": Price(input=1.25, output=10.0),
        "gemini-2.5-flash-lite": Price(input=0.10, output=0.40),
        "gemini-2.5-flash": Price(input=0.30, output=2.50),
    },
}


@dataclass(frozen=True, kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )

    def cost(self, price: Price) -> float:
        return (self.input_tokens * price.input + self.output_tokens * price.output) / 1e6


def price_for(provider: str, model: str) -> tuple[Price, bool]:
    """The price of `model` (longest matching name prefix) and whether it was listed."""
    table = PRICES.get(provider, {})
    names = sorted((n for n in table if model.startswith(n)), key=len, reverse=True)
    if names:
        return table[names[0]], True
    worst = max(
        table.values(), key=lambda p: p.input + p.output, default=Price(input=15.0, output=75.0)
    )
    return worst, False


def usage_of(provider: str, documents: Iterable[Any]) -> Usage:
    """The usage one response reports: its JSON body, or a stream's events' data. Counters in
    streams are cumulative (the last one wins), so the largest value seen is taken."""
    tokens_in = tokens_out = 0
    for doc in documents:
        found = _usage_fields(provider, doc)
        if found is not None:
            tokens_in, tokens_out = max(tokens_in, found[0]), max(tokens_out, found[1])
    return Usage(input_tokens=tokens_in, output_tokens=tokens_out)


def _usage_fields(provider: str, doc: Any) -> tuple[int, int] | None:
    if not isinstance(doc, Mapping):
        return None
    if provider == "gemini":
        meta = doc.get("usageMetadata")
        if not isinstance(meta, Mapping):
            return None
        return _int(meta, "promptTokenCount"), _int(meta, "candidatesTokenCount") + _int(
            meta, "thoughtsTokenCount"
        )
    usage = doc.get("usage")
    if not isinstance(usage, Mapping):
        inner = doc.get("message") if provider == "anthropic" else doc.get("response")
        usage = inner.get("usage") if isinstance(inner, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    if provider == "anthropic":  # cache reads/writes priced as plain input: an upper bound
        tokens_in = sum(
            _int(usage, k)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return tokens_in, _int(usage, "output_tokens")
    return (
        _int(usage, "input_tokens") or _int(usage, "prompt_tokens"),
        _int(usage, "output_tokens") or _int(usage, "completion_tokens"),
    )


def _int(mapping: Mapping[str, Any], key: str) -> int:
    value = mapping.get(key)
    return value if isinstance(value, int) else 0
