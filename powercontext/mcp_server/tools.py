"""The tool registry: every declared operation that names an MCP tool.

A tool is part of its operation's declaration (``ToolSpec`` in the app's
``operations.py``); arguments, schemas and behaviour come from the operation
itself (``catalogue``). The names, argument names, required sets and JSON types
of the tools the reference also offers are compared with its ``tools/list`` by
tests/mcp/test_reference_tools.py.
"""

from __future__ import annotations

from handoffs import operations as handoffs
from lifecycle import operations as lifecycle
from powercontext.access import operations as access
from sessions_app import operations as sessions
from sources import operations as sources

from .catalogue import Tool

TOOLS: tuple[Tool, ...] = tuple(
    Tool(operation)
    for app in (sources, handoffs, sessions, lifecycle, access)
    for operation in app.OPERATIONS
    if operation.tool is not None
)
REGISTRY: dict[str, Tool] = {tool.name: tool for tool in TOOLS}
assert len(REGISTRY) == len(TOOLS), "two tools of one name"
