"""A remote MCP server for the tests of `warden bridge --remote`: the Python SDK 2.x's
`MCPServer` over Streamable HTTP on 127.0.0.1 (loopback only).

    remote_server.py PORT [--json] [--stateless] [--sse [--sse-path PATH]] [--token TOKEN]

`--json` answers with JSON bodies instead of event streams; `--stateless` keeps no session
(no `Mcp-Session-Id`); `--sse` speaks only the deprecated HTTP+SSE transport (2024-11-05: GET
`/sse`, or `--sse-path PATH`, and POST `/messages/`); `--token` makes every request need `Authorization: Bearer TOKEN`;
`--echo-doc TEXT` gives `echo` another description (a tool that changed since it was pinned).
Tools: `echo {message}`, `wipe {path}` (destructive: it only says what it would do) and `headers`
(the request headers it was sent that start with `mcp-` or `x-`)."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

args = sys.argv[1:]
port = int(args[0])
token = args[args.index("--token") + 1] if "--token" in args else None

server = MCPServer("e2e-remote")


ECHO_DOC = args[args.index("--echo-doc") + 1] if "--echo-doc" in args else "Returns the message."


@server.tool(description=ECHO_DOC)
def echo(message: str) -> str:
    return message


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def wipe(path: str) -> str:
    """Would delete PATH (it only says so)."""
    return f"wiped {path}"


@server.tool()
def headers(ctx: Context) -> str:
    """The request's mcp-* and x-* headers."""
    request = ctx.request_context.request
    seen = {k: v for k, v in request.headers.items() if k.startswith(("mcp-", "x-"))} if request else {}
    return repr(sorted(seen.items()))


if __name__ == "__main__":
    app_kwargs = {"json_response": "--json" in args, "stateless_http": "--stateless" in args}
    if "--sse" in args:
        import uvicorn

        path = args[args.index("--sse-path") + 1] if "--sse-path" in args else "/sse"
        uvicorn.run(server.sse_app(sse_path=path), host="127.0.0.1", port=port, log_level="warning")
    elif token is None:
        server.run(transport="streamable-http", host="127.0.0.1", port=port, **app_kwargs)
    else:
        import uvicorn
        from starlette.responses import JSONResponse

        app = server.streamable_http_app(**app_kwargs)

        async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
            if scope["type"] == "http":
                auth = dict(scope["headers"]).get(b"authorization", b"").decode()
                if auth != f"Bearer {token}":
                    await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                    return
            await app(scope, receive, send)

        uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")
