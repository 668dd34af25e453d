"""Which emulated API serves a path. Provider modules are imported on first use."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from harness.emulator.wire import WireApi

GEMINI_PATH = re.compile(
    r"^/(?P<version>v1|v1beta)/models/(?P<model>[^/:]+):(?P<action>generateContent|streamGenerateContent)$"
)
_MODULES = {
    "anthropic": "harness.emulator.anthropic_messages",
    "openai-responses": "harness.emulator.openai_responses",
    "openai-chat": "harness.emulator.openai_chat",
    "gemini": "harness.emulator.gemini_api",
}
PROVIDER_OF_API = {
    "anthropic": "anthropic",
    "openai-responses": "openai",
    "openai-chat": "openai",
    "gemini": "gemini",
}


@dataclass(frozen=True, kw_only=True)
class Route:
    api: str
    model: str | None = None  # from the path (Gemini)
    stream: bool | None = None  # from the path (Gemini); None: read from the body


def route(path: str) -> Route | None:
    if path == "/v1/messages":
        return Route(api="anthropic")
    if path == "/v1/responses":
        return Route(api="openai-responses")
    if path == "/v1/chat/completions":
        return Route(api="openai-chat")
    match = GEMINI_PATH.match(path)
    if match:
        return Route(
            api="gemini", model=match["model"], stream=match["action"] == "streamGenerateContent"
        )
    return None


def wire_api(name: str) -> WireApi:
    module = importlib.import_module(_MODULES[name])
    api: WireApi = module.API
    return api
