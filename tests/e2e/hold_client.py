"""A client that connects through `warden bridge` with the MCP SDK and then blocks forever.

test_real_peers.py runs it as a separate process and SIGKILLs it, to check that the bridge
then takes the server's whole process tree down with it.

Usage: python hold_client.py PARAMS_JSON [--busy]
  PARAMS_JSON: StdioServerParameters as JSON ({"command": ..., "args": [...], "env": {...}, ...})
  --busy: also start a 60 s `trigger-long-running-operation` and wait for its first progress
          notification, so the server is in the middle of a call when the client dies (its
          pending timer keeps Node alive after stdin closes: the bridge must escalate).
Prints one line `READY <server name>` to stdout once the handshake and an echo call succeeded
(and, with --busy, the long call is running).
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client


async def main(params: StdioServerParameters, busy: bool) -> None:
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            result = await session.call_tool("echo", {"message": "hold"})
            assert not result.is_error, result
            async with anyio.create_task_group() as tg:
                if busy:
                    running = anyio.Event()

                    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                        running.set()

                    tg.start_soon(
                        lambda: session.call_tool(
                            "trigger-long-running-operation",
                            {"duration": 60, "steps": 60},
                            progress_callback=on_progress,
                        )
                    )
                    await running.wait()
                print(f"READY {init.server_info.name}", flush=True)
                await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, StdioServerParameters.model_validate(json.loads(sys.argv[1])), "--busy" in sys.argv[2:])
