"""No network during a replay: non-loopback connects and lookups fail at once, loopback works,
and the guard is lifted when the replay ends."""

from __future__ import annotations

import socket

import httpx2
import pytest

from harness.cassettes import network
from harness.cassettes.source import CassetteSource
from harness.emulator.server import Emulator
from harness.runner import cells
from tests.cassettes.conftest import Library, scenarios

# TEST-NET-3 (RFC 5737): never routed, so even a guard bug cannot reach anything.
UNROUTABLE = ("203.0.113.7", 443)


def test_non_loopback_connect_is_blocked() -> None:
    with network.no_network(), socket.socket() as sock, pytest.raises(network.NetworkBlocked):
        sock.connect(UNROUTABLE)
    assert not network.blocked()


def test_name_lookup_is_blocked() -> None:
    with network.no_network(), pytest.raises(network.NetworkBlocked, match=r"api\.openai\.com"):
        socket.getaddrinfo("api.openai.com", 443)


def test_loopback_still_works(emulator: Emulator) -> None:
    with network.no_network(), httpx2.Client() as client:
        assert client.get(f"{emulator.root}/nowhere").status_code == 404


def test_guards_nest() -> None:
    network.block()
    network.block()
    network.unblock()
    assert network.blocked()
    network.unblock()
    assert not network.blocked()
    assert socket.socket.connect is not network._guarded_connect


def test_a_loop_that_builds_its_own_client_cannot_reach_the_api(library: Library) -> None:
    """While the cassette source is open, the real API is out of reach."""
    chosen = cells(scenarios(["one_tool_then_answer"]), ["anthropic"], stream=False)
    source = CassetteSource([(c.scenario, c.provider, c.stream) for c in chosen], library.folder)
    try:
        with httpx2.Client() as client, pytest.raises(httpx2.ConnectError, match="network blocked"):
            client.post("https://api.anthropic.com/v1/messages", json={})
    finally:
        source.close()
    assert not network.blocked()
