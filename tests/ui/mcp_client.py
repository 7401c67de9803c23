"""An MCP client (the real Python SDK) through `warden bridge`, driven line by line on stdin.

The UI tests keep it running as a session the app watches, and ask it to call tools:
  stdin:  {"tool": NAME, "arguments": {...}}      one JSON object per line
  stdout: READY                                    once the handshake and one echo call succeeded
          {"ok": bool, "text": "...", "error": "..."}  one line per call

Usage: python mcp_client.py PARAMS_JSON   (StdioServerParameters as JSON)
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


async def main(params: StdioServerParameters) -> None:
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("echo", {"message": "ready"})
            assert not result.is_error, result
            print("READY", flush=True)
            stdin = anyio.wrap_file(sys.stdin)
            async for line in stdin:
                if not line.strip():
                    continue
                ask = json.loads(line)
                try:
                    r = await session.call_tool(ask["tool"], ask.get("arguments", {}))
                    text = "".join(getattr(c, "text", "") for c in r.content)
                    emit({"ok": not r.is_error, "text": text})
                except Exception as e:  # an MCP error response: report it, keep the session
                    emit({"ok": False, "error": str(e)})


if __name__ == "__main__":
    anyio.run(main, StdioServerParameters.model_validate(json.loads(sys.argv[1])))
