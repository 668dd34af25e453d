"""The endpoint: where every source listens (127.0.0.1) and records each exchange as it arrives.

Scripted (the emulator), cassette (a replay server) and live (a forwarding recorder in front of
the real API) are the same HTTP server with a different app behind it, so any HTTP client —
the SDKs sync or async, httpx, aiohttp, a subprocess, another language — is captured the same
way, with nothing to monkeypatch. The harness's own sync clients may reach a replay in-process
(`local`): the same routing, capture and app, without the socket.
"""
