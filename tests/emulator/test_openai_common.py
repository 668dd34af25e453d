"""What both emulated OpenAI APIs share: the error envelope, malformed JSON, injected faults."""

from __future__ import annotations

import json

import pytest

from harness.emulator import openai_common as common
from harness.emulator.openai_chat import API as CHAT
from harness.emulator.openai_responses import API as RESPONSES
from harness.emulator.wire import ApiError

APIS = [RESPONSES, CHAT]


def envelope(err: ApiError) -> dict[str, object]:
    reply = RESPONSES.error(err)
    assert reply.headers["content-type"] == "application/json"
    assert reply.headers["x-request-id"].startswith("req_")
    result: dict[str, object] = json.loads(b"".join(reply.chunks))
    return result


@pytest.mark.parametrize("api", APIS, ids=lambda a: a.name)
def test_malformed_json(api: common.OpenAiErrors) -> None:
    err = api.malformed("Expecting value: line 1 column 1 (char 0)")
    assert (err.status, err.rule) == (400, "malformed_json")
    assert envelope(err) == {
        "error": {
            "message": "We could not parse the JSON body of your request. (HINT: This likely "
            "means you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
            "payload, but what was sent was not valid JSON. If you have trouble figuring out how "
            "to fix this, please contact us through our help center at help.openai.com.)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


@pytest.mark.parametrize(
    ("retry_after", "wait", "header"),
    [(None, "1s", "1"), (2.0, "2s", "2"), (0.25, "250ms", "0.25"), (6.596, "6.596s", "6.596")],
)
def test_rate_limit(retry_after: float | None, wait: str, header: str) -> None:
    err = CHAT.fault("rate_limit", retry_after)
    assert (err.status, err.rule, err.kind, err.code) == (
        429,
        "rate_limit",
        "tokens",
        "rate_limit_exceeded",
    )
    assert err.message.startswith("Rate limit reached for gpt-4o in organization org-")
    assert f"Please try again in {wait}. Visit https://platform.openai.com/account/rate-limits" in (
        err.message
    )
    reply = CHAT.error(err)
    assert reply.status == 429 and reply.headers["retry-after"] == header
    body = json.loads(b"".join(reply.chunks))
    assert body["error"]["type"] == "tokens" and body["error"]["code"] == "rate_limit_exceeded"


def test_server_error() -> None:
    err = RESPONSES.fault("server_error", None)
    assert (err.status, err.kind, err.code, err.param) == (500, "server_error", None, None)
    assert err.message.startswith("The server had an error processing your request. Sorry about")
    assert "(Please include the request ID req_" in err.message


def test_overloaded_is_503() -> None:
    err = RESPONSES.fault("overloaded", None)
    assert (err.status, err.kind) == (503, "server_error")
    assert err.message.startswith("That model is currently overloaded with other requests.")


def test_pieces_rebuild_the_text() -> None:
    for text in ['{"city":"Paris","n":3}', "Sunny in both.  Done ", "", "×2,869,461**"]:
        assert "".join(common.pieces(text)) == text
    assert common.pieces('{"city":"Paris"}')[:3] == ['{"', "city", '":"']
