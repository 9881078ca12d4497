"""The MCP tools that read an MR's files, with progress: each file of a diff read is an
MCP progress notification to an agent that asked for them (a `progressToken` in its
call), so a large diff shows it is moving before its one answer arrives (docs/
agent-tools.md). Imported when the server starts: the SDK's Context must resolve here
for the SDK to hand it to the tools."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from livereview.mcp.server import MR, PATHS, Tools
from livereview.tools import diffs, results


class StreamingTools:
    def __init__(self, tools: Tools) -> None:
        self.tools = tools

    async def diffstat(self, mr: MR, ctx: Context[Any, Any],
                       paths: PATHS | None = None) -> results.Diffstat:
        """Files the MR changes: path, status (added, modified, removed, renamed), lines
        added and removed, binary or not. Cheap: start here before reading the diff. Plain
        paths (no * ? [) are looked up alone where the host allows it."""
        async def progress(files: int) -> None:
            await ctx.report_progress(files, None, f"{files} files listed")
        return await self.tools._call(diffs.diffstat(self.tools.box, mr, paths or [],
                                                     progress=progress))

    async def diff(self, mr: MR, ctx: Context[Any, Any], paths: PATHS | None = None,
                   context: Annotated[int | None, Field(ge=0, le=diffs.MAX_CONTEXT, description=(
                       "Lines of context around each change (default: the host's diff, "
                       "usually 3)"))] = None) -> results.Diff:
        """The MR's unified diff, per file, with a progress notification per file read.
        Binary and oversized files carry a note instead of a diff; reading stops at the
        answer's size budget: the first file past it is named in `omitted` (ask for it
        and the rest with `paths`; `diffstat` lists every file)."""
        async def progress(files: int) -> None:
            await ctx.report_progress(files, None, f"{files} files read")
        return await self.tools._call(diffs.diff(self.tools.box, mr, paths or [], context,
                                                 progress=progress))
