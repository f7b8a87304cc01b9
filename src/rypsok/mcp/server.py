"""The MCP server over the application services, on the SDK's low-level ``Server``.

The low-level server is used rather than the decorator API so that rypsok owns validation
(REQ-MCP-004: refusals that list valid values), the error shape (REQ-ERR-002/003), the tool
order (REQ-MCP-009) and the schemas (REQ-MCP-008) exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from rypsok import __version__
from rypsok.contract.responses import to_json_text
from rypsok.contract.tools import SERVER_INSTRUCTIONS, ToolDefinition
from rypsok.services.calls import Services

INVALID_PARAMS = -32602

# Who is calling, for the HTTP transport's per-caller scopes and limits; stdio has one caller.
CallerOf = Callable[[ServerRequestContext[Any]], tuple[str, frozenset[str] | None]]


def _stdio_caller(_: ServerRequestContext[Any]) -> tuple[str, frozenset[str] | None]:
    return "local", None


def to_sdk_tool(definition: ToolDefinition) -> mcp_types.Tool:
    """One tool definition in the SDK's type."""
    a = definition.annotations
    return mcp_types.Tool(
        name=definition.name.value,
        title=definition.title,
        description=definition.description,
        input_schema=definition.input_schema,
        output_schema=definition.output_schema,
        annotations=mcp_types.ToolAnnotations(
            read_only_hint=a.read_only,
            destructive_hint=a.destructive,
            idempotent_hint=a.idempotent,
            open_world_hint=a.open_world,
        ),
    )


def build_server(
    services: Services, *, structured_content: bool, caller_of: CallerOf = _stdio_caller
) -> Server[Any]:
    """The SDK server serving the three tools through ``services``."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        _, permitted = caller_of(ctx)
        return mcp_types.ListToolsResult(tools=[to_sdk_tool(d) for d in services.tools(permitted)])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        if not services.knows(params.name):
            # An unknown tool is the one protocol error of REQ-ERR-003.
            raise MCPError(INVALID_PARAMS, "Unknown tool; call tools/list for the valid names.")
        caller, permitted = caller_of(ctx)
        result = await services.call(
            params.name, params.arguments, caller=caller, permitted=permitted
        )
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=to_json_text(result.structured))],
            structured_content=result.structured if structured_content else None,
            is_error=result.is_error,
        )

    def input_schema(name: str) -> dict[str, Any] | None:
        for definition in services.tools():
            if definition.name.value == name:
                return definition.input_schema
        return None

    return Server(
        "rypsok",
        version=__version__,
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )
