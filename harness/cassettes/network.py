"""No network during a replay. The replay transport never opens a socket, but a loop under test
may build its own client (or a library may phone home); while a guard is held, connecting a
socket to anything but loopback (or resolving a name that is not local) raises, so a replay can
neither reach a real API nor spend money, whatever the loop does.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from typing import Any

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", ""})


class NetworkBlocked(ConnectionRefusedError):
    """A replay tried to reach the network."""


_lock = threading.Lock()
_holders = 0
_saved: dict[str, Callable[..., Any]] = {}


def is_loopback(host: Any) -> bool:
    if isinstance(host, (bytes, bytearray)):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _address_allowed(family: int, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", None):
        return True  # local by nature
    host = address[0] if isinstance(address, tuple) and address else address
    return is_loopback(host)


def _blocked(what: str) -> NetworkBlocked:
    return NetworkBlocked(
        f"network blocked during cassette replay: {what}. Replay serves recorded answers "
        "only; record with `harness record --source live` to reach the real API"
    )


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _address_allowed(self.family, address):
        raise _blocked(f"connect to {address!r}")
    return _saved["connect"](self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _address_allowed(self.family, address):
        raise _blocked(f"connect to {address!r}")
    return _saved["connect_ex"](self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not is_loopback(host):
        raise _blocked(f"name lookup of {host!r}")
    return _saved["getaddrinfo"](host, *args, **kwargs)


def block() -> None:
    """Start blocking (counted: every `block()` needs its `unblock()`)."""
    global _holders
    with _lock:
        _holders += 1
        if _holders > 1:
            return
        _saved["connect"] = socket.socket.connect
        _saved["connect_ex"] = socket.socket.connect_ex
        _saved["getaddrinfo"] = socket.getaddrinfo
        socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
        socket.getaddrinfo = _guarded_getaddrinfo


def unblock() -> None:
    global _holders
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders > 0:
            return
        socket.socket.connect = _saved.pop("connect")  # type: ignore[method-assign]
        socket.socket.connect_ex = _saved.pop("connect_ex")  # type: ignore[method-assign]
        socket.getaddrinfo = _saved.pop("getaddrinfo")


def blocked() -> bool:
    with _lock:
        return _holders > 0


class no_network:  # lower case: it reads as a phrase, `with no_network(): ...`
    def __enter__(self) -> None:
        block()

    def __exit__(self, *exc: object) -> None:
        unblock()
