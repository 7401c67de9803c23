"""What `warden bridge --remote` adds per call over loopback HTTP, beside a direct client.

    remote.py WARDEN OUT_MD [--calls N]

The Python SDK 2.x's Streamable HTTP server (tests/e2e/remote_server.py, `--json`) on a loopback
port; N sequential `echo` calls (after 50 to warm up) with the SDK's client in `auto` mode,
(a) straight to the URL over HTTP and (b) over stdio through `warden bridge --remote URL`
(the bridge, then `warden-remote`, then HTTP), in one run, alternating rounds of 100 so drift
hits both. Then the same beside a server behind OAuth (tests/e2e/oauth_server.py): the bridge
signed in once (`warden auth login`, a private keychain, the stand-in browser), the direct
client with a token the server knows from the start, so that what the sign-in's token check
costs each call shows as the difference of the two added p50s. Writes a table with p50/p95 of
each and the bridge's added p50 to OUT_MD.
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
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "e2e" / "remote_server.py"
OAUTH = REPO / "tests" / "e2e" / "oauth_server.py"
BROWSER = REPO / "tests" / "e2e" / "browser_standin.py"
TOKEN = "bench-token-0123456789abcdef"
sys.path.insert(0, str(REPO / "tests"))
from keychain import private_keychain  # noqa: E402  (tests/keychain.py)


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


def serve(argv: list[str], port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, *argv], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return server
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{argv[0]} did not listen on {port}")


async def measure(direct: object, bridged: StdioServerParameters, calls: int) -> tuple[list[float], list[float]]:
    direct_ms: list[float] = []
    bridged_ms: list[float] = []
    async with Client(direct, mode="auto") as d, Client(bridged, mode="auto") as via:
        await timed(d, 50)
        await timed(via, 50)
        for _ in range(max(1, calls // 100)):
            direct_ms += await timed(d, 100)
            bridged_ms += await timed(via, 100)
    return direct_ms, bridged_ms


async def main(warden: str, out_md: Path, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "WARDEN_CONFIG": os.path.join(tmp, "absent.toml"),
            "WARDEN_STATE_DIR": os.path.join(tmp, "state"),
            "WARDEN_SOCKET": os.path.join(tmp, "no.sock"),
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        server = serve([str(SERVER), str(port), "--json"], port)
        try:
            bridged = StdioServerParameters(command=warden, args=["bridge", "--server", "bench", "--remote", url], env=env)
            direct_ms, bridged_ms = await measure(url, bridged, calls)
        finally:
            server.terminate()
            server.wait(10)
        # Signed in: the bridge's token from the keychain, the direct client's given.
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        bus, keychain = private_keychain(Path(tmp))
        server = serve([str(OAUTH), str(port), "--bench-token", TOKEN], port)
        try:
            signed = {**env, "DBUS_SESSION_BUS_ADDRESS": bus, "BROWSER": f"{sys.executable} {BROWSER} {os.path.join(tmp, 'browser.log')}"}
            subprocess.run([warden, "auth", "login", url], env={**os.environ, **signed}, check=True, capture_output=True, timeout=120)
            bridged = StdioServerParameters(command=warden, args=["bridge", "--server", "bench-oauth", "--remote", url], env=signed)
            direct = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}))
            auth_direct_ms, auth_bridged_ms = await measure(direct, bridged, calls)
        finally:
            server.terminate()
            server.wait(10)
            for proc in keychain:
                proc.terminate()
                proc.wait(10)

    def p(xs: list[float], q: float) -> float:
        return statistics.quantiles(xs, n=100)[int(q) - 1]

    added = statistics.median(bridged_ms) - statistics.median(direct_ms)
    auth_added = statistics.median(auth_bridged_ms) - statistics.median(auth_direct_ms)
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
        f"| behind OAuth: direct, with a bearer token | {statistics.median(auth_direct_ms):.2f} | {p(auth_direct_ms, 95):.2f} |",
        f"| behind OAuth: `warden bridge --remote`, signed in once (token from the keychain) | {statistics.median(auth_bridged_ms):.2f} | {p(auth_bridged_ms, 95):.2f} |",
        "",
        (
            f"The bridge adds **{added:.2f} ms** at p50 per call."
            if added >= 0
            else f"The bridged path is **{-added:.2f} ms faster** at p50 per call: the SDK's own HTTP client costs more"
            " than its stdio client plus the bridge and `warden-remote` (Rust, one kept-alive connection)."
        ),
        "",
        f"Behind OAuth the bridge adds **{auth_added:.2f} ms** at p50 (without: {added:.2f} ms): the sign-in's token"
        f" check costs {auth_added - added:+.2f} ms a call, after the one sign-in (the token is read from the keychain"
        " once per session and kept in memory; the server checks it on both paths alike).",
        "",
    ]
    out_md.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args[args.index("--calls") + 1]) if "--calls" in args else 1000
    anyio.run(main, args[0], Path(args[1]), n)
