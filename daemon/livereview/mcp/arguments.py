"""The MCP server, with arguments that do not fit a tool's schema said in one line.

The SDK answers such a call with pydantic's own report: several lines per field, and a
link to pydantic's documentation. An agent needs the argument's name and what was wrong,
as `livereview mr` says it on the command line (DESIGN §13: one operations layer, two
faces, the same one-line errors). Imported only when the server starts (the SDK loads
slowly, and no other command needs it).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError


def said(tool: str, error: ValidationError) -> str:
    """`file: missing argument path; argument line: Input should be a valid integer` —
    names and pydantic's short reason only: the rejected values are the caller's data."""
    problems = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "(the arguments)"
        problems.append(f"missing argument {name}" if item["type"] == "missing"
                        else f"argument {name}: {item['msg']}")
    return " ".join(f"{tool}: {'; '.join(problems)}".split())


class Server(MCPServer[Any]):
    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(said(name, exc.__cause__)) from exc.__cause__
            raise
