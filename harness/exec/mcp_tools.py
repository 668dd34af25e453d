"""The MCP server endpoint: a scenario's tools over MCP (streamable HTTP), for agents that take
their tools from an MCP server and run unmodified. Tool names, descriptions and input schemas
are the scenario's; a result is text content, a failing tool (`ToolError`) an `isError` result,
as an MCP server reports a tool's own failure. Every call goes through the cell's `ToolSpec`,
so it is recorded in the cell's tool log exactly as an in-process call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from harness.exec.tool_calls import run_tool
from harness.loop.contract import ToolSpec

# token -> the query's tools, or None once the query is over (or never began)
Lookup = Callable[[str], Mapping[str, ToolSpec] | None]


def mcp_server(lookup: Lookup) -> Server[Any]:
    """One MCP server for every query; the query is the `<token>` in the request's path."""

    def tools_of(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, ToolSpec]:
        request = ctx.request
        token = str(getattr(request, "path_params", {}).get("token", ""))
        tools = lookup(token)
        if tools is None:
            raise MCPError(
                INVALID_PARAMS, f"no query is running under {token!r} (it ended, or never began)"
            )
        return tools

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=dict(spec.parameters),
                )
                for spec in tools_of(ctx).values()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tools = tools_of(ctx)
        spec = tools.get(params.name)
        if spec is None:
            raise MCPError(
                INVALID_PARAMS,
                f"no tool {params.name!r} in this scenario; its tools: {', '.join(tools) or '-'}",
            )
        arguments = dict(params.arguments or {})
        # In a worker thread: a tool takes a little time, and calls made at once must overlap
        # in the tool log as they did at the agent (L4), not queue behind each other here.
        text, is_error = await anyio.to_thread.run_sync(run_tool, spec, arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server("harness", on_list_tools=list_tools, on_call_tool=call_tool)
