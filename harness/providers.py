"""Provider facts the harness itself needs: default models, key and base-URL variables, and
Gemini's retry settings. The SDK clients are built in `harness.loop.clients`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from harness.errors import ProviderError
from harness.scenario.model import Provider

# Current default models (none on its SDK's deprecation list as of anthropic 2.14, openai
# 3.57, google-genai 3.6); a scenario's `models:` and `--model` override them.
DEFAULT_MODELS: Mapping[Provider, str] = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5.4-mini",
    "gemini": "gemini-3.5-flash",
}

# The variables each SDK reads its key from, in the SDK's own order of preference.
KEY_VARIABLES: Mapping[Provider, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),  # google-genai: GOOGLE_API_KEY wins
}
BASE_URL_VARIABLES: Mapping[Provider, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
}


def key_from_env(provider: Provider, env: Mapping[str, str] | None = None) -> str:
    """The API key for `provider` from its usual variables, or one clear error naming them."""
    env = os.environ if env is None else env
    for name in KEY_VARIABLES[provider]:
        if env.get(name):
            return env[name]
    names = " or ".join(KEY_VARIABLES[provider])
    raise ProviderError(
        f"the live source needs {names} set in the environment for {provider}; "
        f"set it, or leave {provider} out with --provider"
    )


# google-genai makes ONE attempt unless given retry options (google-genai 3.6
# `_api_client.retry_args`: no options -> `stop_after_attempt(1)`), where the Anthropic and
# OpenAI SDKs retry twice by default; so a rate limit one of those rides out failed the Gemini
# cell. With options it retries 408, 429, 500, 502, 503, 504 (its `_RETRY_HTTP_STATUS_CODES`,
# Gemini's overloaded is a 503) and transport errors, with exponential backoff; it does not read
# retry-after. The delays mirror the other two SDKs (0.5 s doubling to at most 8 s, a little
# jitter) instead of google-genai's 1 s..60 s with up to 1 s of jitter.
GEMINI_RETRY_INITIAL_DELAY = 0.5
GEMINI_RETRY_MAX_DELAY = 8.0
GEMINI_RETRY_JITTER = 0.25


def gemini_retry_options(max_retries: int) -> Any:
    """google-genai's `HttpRetryOptions` for `max_retries` retries after the first attempt."""
    from google.genai import types

    return types.HttpRetryOptions(
        attempts=max_retries + 1,
        initial_delay=GEMINI_RETRY_INITIAL_DELAY,
        max_delay=GEMINI_RETRY_MAX_DELAY,
        exp_base=2.0,
        jitter=GEMINI_RETRY_JITTER,
    )
