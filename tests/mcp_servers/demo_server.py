"""A 9-tool MCP server built with the official `mcp` SDK, for memlet's MCP tests.

    python demo_server.py stdio [--no-tools] [--exit] [--tools-file PATH] [--extras] [--loose]
    python demo_server.py sse|streamable-http PORT [--extras]

The 9 tools include pydantic-model arguments whose schemas use `$defs`/`$ref`, `anyOf` with null and nested objects.
`--exit` makes the process quit before speaking MCP (a server that dies at start). `slow_tool` sleeps for as long
as asked, to test timeouts. `--tools-file PATH` serves the tools only while PATH holds "all" (read at start, so a
test can change the server's tools between connections). `--extras` adds `read_env` and `whoami` (what the server
received: an environment variable, the request's headers) and `refuse`, which answers with a JSON-RPC error.
`--loose` adds `any_value`, whose schema gives its argument no `type` (Letta graded such a tool INVALID).
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel, Field


class Address(BaseModel):
    street: str
    city: str
    zip_code: str | None = None


class Person(BaseModel):
    name: str
    age: int = Field(ge=0)
    address: Address | None = None


class Task(BaseModel):
    title: str
    done: bool = False
    tags: list[str] = Field(default_factory=list)


class Inner(BaseModel):
    key: str
    values: list[int]


class Filters(BaseModel):
    kind: str | None = None
    limits: list[Inner] | None = None


server = MCPServer("memlet-demo")


def add_tools(srv: MCPServer) -> None:
    @srv.tool()
    def echo(message: str) -> str:
        """Echo a message back."""
        return f"Echo: {message}"

    @srv.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return f"Result: {a + b}"

    @srv.tool()
    def multiply(a: float, b: float) -> str:
        """Multiply two numbers."""
        return f"Result: {a * b}"

    @srv.tool()
    def reverse_string(text: str) -> str:
        """Reverse a string."""
        return text[::-1]

    @srv.tool()
    def create_person(person: Person) -> str:
        """Store a person with an optional nested address."""
        city = person.address.city if person.address else "nowhere"
        return f"Created {person.name} ({person.age}) in {city}"

    @srv.tool()
    def manage_tasks(tasks: list[Task], action: str = "list") -> str:
        """Act on a list of tasks."""
        return f"{action}: " + ", ".join(t.title for t in tasks)

    @srv.tool()
    def search_with_filters(query: str, filters: dict[str, str] | None = None) -> str:
        """Search with free-form filters."""
        return f"search {query} with {sorted((filters or {}).items())}"

    @srv.tool()
    def process_nested_data(data: Filters) -> str:
        """Process nested objects with optional lists of objects."""
        return f"kind={data.kind} limits={len(data.limits or [])}"

    @srv.tool()
    async def slow_tool(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"


def add_extras(srv: MCPServer) -> None:
    @srv.tool()
    def read_env(name: str) -> str:
        """An environment variable of the server process."""
        return os.environ.get(name, "<unset>")

    @srv.tool()
    def whoami(ctx: Context) -> str:
        """The headers of the HTTP request that called this tool."""
        return json.dumps({k.lower(): v for k, v in (ctx.headers or {}).items()}, sort_keys=True)

    @srv.tool()
    def refuse(reason: str) -> str:
        """Answer the call with a JSON-RPC error (not a result with isError)."""
        raise MCPError(code=INVALID_PARAMS, message=f"refused: {reason}")


def add_loose(srv: MCPServer) -> None:
    @srv.tool()
    def any_value(value: str) -> str:
        """Describe any value."""
        return f"got {value!r}"

    tool = srv._tool_manager.get_tool("any_value")
    assert tool is not None
    tool.parameters = {"type": "object", "properties": {"value": {"description": "anything"}}, "required": ["value"]}


def _serves_tools(args: list[str]) -> bool:
    if "--no-tools" in args:
        return False
    if "--tools-file" in args:
        path = args[args.index("--tools-file") + 1]
        return Path(path).read_text().strip() == "all"
    return True


def main() -> None:
    args = sys.argv[1:]
    if "--exit" in args:
        sys.exit(3)
    if _serves_tools(args):
        add_tools(server)
    if "--extras" in args:
        add_extras(server)
    if "--loose" in args:
        add_loose(server)
    transport = args[0] if args else "stdio"
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run(transport, host="127.0.0.1", port=int(args[1]))  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
