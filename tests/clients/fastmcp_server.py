"""A FastMCP server (PyPI `fastmcp`, pinned in requirements.txt), the way its users write
one, for our client and mounts to reach: a plain tool, one that reports progress and logs,
one that asks the user, one that fails with more than words, a prompt and a resource.

Usage: fastmcp_server.py            (stdio)
       fastmcp_server.py --http PORT (Streamable HTTP at http://127.0.0.1:PORT/mcp)
"""

import sys

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult

mcp = FastMCP("fastmcp-upstream")


@mcp.tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@mcp.tool
async def count_to(n: int, ctx: Context) -> str:
    """Count to n, reporting each step and logging the last."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    await ctx.info(f"counted to {n}")
    return f"counted to {n}"


QUESTION = "Your favourite colour?"
FORM = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}


@mcp.tool
async def favourite_colour(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user for their favourite colour: in the handshake era with a request to the
    client during the call; at 2026-07-28 by answering that input is required and reading
    the answer when the client calls again (FastMCP's two ways, one per era)."""
    try:
        answer = await ctx.elicit(QUESTION, response_type=str)
    except ToolError:
        responses = ctx.input_responses or {}
        if "colour" not in responses:
            params = mcp_types.ElicitRequestFormParams(message=QUESTION, requested_schema=FORM)
            return mcp_types.InputRequiredResult(input_requests={"colour": mcp_types.ElicitRequest(params=params)})
        answer = responses["colour"]
        if answer.action == "accept":
            return f"you like {answer.content['value']}"
        return f"no colour ({answer.action})"
    if answer.action == "accept":
        return f"you like {answer.data}"
    return f"no colour ({answer.action})"


# A one-pixel PNG.
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@mcp.tool
def reserve(sku: str) -> ToolResult:
    """Reserve an item. Everything is out of stock: the error says so to the user, shows
    the shelf, and gives the alternatives as structured content."""
    notice = mcp_types.TextContent(
        type="text",
        text=f"{sku} is out of stock",
        annotations=mcp_types.Annotations(audience=["user"], priority=0.9),
    )
    shelf = mcp_types.ImageContent(type="image", data=PIXEL, mime_type="image/png")
    return ToolResult(
        content=[notice, shelf],
        structured_content={"sku": sku, "available": 0, "instead": ["B-2"]},
        is_error=True,
    )


@mcp.prompt
def limerick(subject: str) -> str:
    """Ask for a limerick."""
    return f"Write a limerick about {subject}."


@mcp.resource("fastmcp://greeting")
def greeting() -> str:
    """A greeting."""
    return "hello from FastMCP"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        mcp.run(show_banner=False)
