"""What `warden bridge --remote` adds per call over loopback HTTP, beside a direct client.

    remote.py WARDEN OUT_MD [--calls N]

The Python SDK 2.x's Streamable HTTP server (tests/e2e/remote_server.py, `--json`) on a loopback
port; N sequential `echo` calls (after 50 to warm up) with the SDK's client in `auto` mode,
(a) straight to the URL over HTTP and (b) over stdio through `warden bridge --remote URL`
(the bridge, then `warden-remote`, then HTTP), in one run, alternating rounds of 100 so drift
hits both. Writes a table with p50/p95 of each and the bridge's added p50 to OUT_MD.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import StdioServerParameters
from mcp.client import Client

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "e2e" / "remote_server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def timed(client: Client, n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        await client.call_tool("echo", {"message": f"m{i}"})
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def main(warden: str, out_md: Path, calls: int) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([sys.executable, str(SERVER), str(port), "--json"], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                "WARDEN_CONFIG": os.path.join(tmp, "absent.toml"),
                "WARDEN_STATE_DIR": os.path.join(tmp, "state"),
                "WARDEN_SOCKET": os.path.join(tmp, "no.sock"),
            }
            bridged = StdioServerParameters(command=warden, args=["bridge", "--server", "bench", "--remote", url], env=env)
            direct_ms: list[float] = []
            bridged_ms: list[float] = []
            async with Client(url, mode="auto") as direct, Client(bridged, mode="auto") as via:
                await timed(direct, 50)
                await timed(via, 50)
                rounds = max(1, calls // 100)
                for _ in range(rounds):
                    direct_ms += await timed(direct, 100)
                    bridged_ms += await timed(via, 100)
    finally:
        server.terminate()
        server.wait(10)

    def p(xs: list[float], q: float) -> float:
        return statistics.quantiles(xs, n=100)[int(q) - 1]

    added = statistics.median(bridged_ms) - statistics.median(direct_ms)
    lines = [
        "# Remote servers: the bridge beside a direct client (loopback HTTP)",
        "",
        f"`{' '.join(['tests/bench/remote.py', 'WARDEN', 'OUT', '--calls', str(calls)])}` (run by `scripts/bench.sh`): the Python SDK 2.x's",
        "Streamable HTTP server (JSON answers) on 127.0.0.1, and its client in `auto` mode (2026-07-28),",
        f"{len(direct_ms)} sequential `echo` calls each way, alternating rounds of 100.",
        "",
        "| path | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| direct (SDK client → HTTP) | {statistics.median(direct_ms):.2f} | {p(direct_ms, 95):.2f} |",
        f"| `warden bridge --remote` (SDK client → stdio → bridge → warden-remote → HTTP) | {statistics.median(bridged_ms):.2f} | {p(bridged_ms, 95):.2f} |",
        "",
        (
            f"The bridge adds **{added:.2f} ms** at p50 per call."
            if added >= 0
            else f"The bridged path is **{-added:.2f} ms faster** at p50 per call: the SDK's own HTTP client costs more"
            " than its stdio client plus the bridge and `warden-remote` (Rust, one kept-alive connection)."
        ),
        "",
    ]
    out_md.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args[args.index("--calls") + 1]) if "--calls" in args else 1000
    anyio.run(main, args[0], Path(args[1]), n)
