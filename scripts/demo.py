"""A short tour of `warden bridge` in front of a real MCP server, with the real Python SDK.

Run it through scripts/run-app.sh, which installs what it needs.
"""

import hashlib
import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "tests/e2e/node_modules/.bin/mcp-server-everything"


def bridge(warden: str, state: str, *sets: str) -> StdioServerParameters:
    args = ["bridge", "--server", "everything"]
    for s in sets:
        args += ["--set", s]
    args += ["--", str(EVERYTHING)]
    env = dict(os.environ, WARDEN_STATE_DIR=state, WARDEN_CONFIG=os.path.join(state, "config.toml"))
    return StdioServerParameters(command=warden, args=args, env=env)


async def main(warden: str) -> None:
    with tempfile.TemporaryDirectory() as state:
        print(f"$ warden bridge --server everything -- {EVERYTHING.name}")
        async with stdio_client(bridge(warden, state, "idle_timeout_ms=1500")) as (r, w):
            async with ClientSession(r, w) as s:
                init = await s.initialize()
                print(f"  connected to {init.server_info.name} {init.server_info.version} through the bridge")
                tools = await s.list_tools()
                print(f"  {len(tools.tools)} tools, e.g. {', '.join(t.name for t in tools.tools[:4])}")
                echo = await s.call_tool("echo", {"message": "hello through warden"})
                print(f"  echo -> {echo.content[0].text}")

                async def progress(p, total, message):
                    print(f"    progress {p:g}/{total:g}")

                print("  a 3 s tool with progress every 0.5 s, idle_timeout_ms = 1500 (progress keeps it alive):")
                done = await s.call_tool(
                    "trigger-long-running-operation", {"duration": 3, "steps": 6}, progress_callback=progress
                )
                print(f"  -> {done.content[0].text}")
                print("  the same tool without progress reporting, 4 s in 2 steps, idle limit 1.5 s:")
                try:
                    await s.call_tool("trigger-long-running-operation", {"duration": 4, "steps": 2})
                except Exception as e:  # the SDK raises its MCP error type
                    print(f"  -> {e}")
        # The server's name and a hash of it (`paths::file_stem`).
        log = Path(state, "logs", f"everything-{hashlib.sha256(b'everything').hexdigest()[:16]}.jsonl")
        print(f"\nEvent log ({log.name}, metadata only):")
        for line in log.read_text().splitlines():
            print("  " + line)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/warden"))
