"""Agents outside the process, in any language (`harness run --exec COMMAND`).

The language-neutral loop contract: once per user message of each cell the harness starts
COMMAND through the shell, with the SDKs' variables pointing at the cell's run on the endpoint,
writes the query (`schemas/query.json`) on its stdin and reads the answer
(`schemas/answer.json`) from its stdout. The scenario's tools are served by the harness — plain
HTTP (`POST {tools_url}{name}`) and MCP (streamable HTTP at `mcp_url`) — and every call lands in
the cell's tool log, so the rules that read it (L1, L4, L11) judge the program too.

Only `failure` is imported by the runner; the rest loads when `--exec` is used.
"""
