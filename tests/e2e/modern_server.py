"""A small MCP server of the Python SDK 2.x (`MCPServer`, which speaks 2026-07-28 and the
legacy handshake), for the end-to-end tests of both protocol eras."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("e2e-modern")


@server.tool()
def echo(message: str) -> str:
    """Returns the message."""
    return message


if __name__ == "__main__":
    server.run()
