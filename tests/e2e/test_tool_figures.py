"""Figures per tool from a real session: server-everything through the bridge, driven by the
Python SDK, with `warden daemon` as the supervisor. `warden status --json --server NAME`
lists each tool's calls, errors, timeouts, p50/p95 and bytes out, and the minute series of the
server page's chart counts the same requests."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from conftest import NpmBins, Warden

pytestmark = pytest.mark.anyio


@pytest.fixture
def daemon(warden: Warden) -> Iterator[dict[str, str]]:
    """A `warden daemon` on a socket of this test; yields the environment that reaches it."""
    env = {**warden.env, "WARDEN_SOCKET": str(warden.tmp / "control.sock")}
    proc = subprocess.Popen([str(warden.binary), "daemon"], env=env, stderr=warden.errlog)
    try:
        deadline = time.monotonic() + 20
        while not (warden.tmp / "control.sock").exists():
            assert proc.poll() is None, f"warden daemon exited: {warden.stderr_text()[-2000:]}"
            assert time.monotonic() < deadline, "warden daemon did not listen within 20 s"
            time.sleep(0.05)
        yield env
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def server_status(warden: Warden, env: dict[str, str], name: str) -> dict[str, Any]:
    out = subprocess.run(
        [str(warden.binary), "status", "--json", "--server", name],
        env=env, capture_output=True, text=True, timeout=20, check=True,
    )
    report = json.loads(out.stdout)
    [server] = report["servers"]
    return server


async def test_status_has_each_tools_calls_errors_timeouts_and_latency(
    warden: Warden, npm_bins: NpmBins, daemon: dict[str, str]
) -> None:
    params = StdioServerParameters(
        command=str(warden.binary),
        args=warden.bridge_args(
            "everything", [str(npm_bins.everything)], "idle_timeout_ms=1000", "stderr_is_activity=false"
        ),
        env=daemon,
    )
    with anyio.fail_after(60):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()  # pins them (pin_tools = "warn" by default)
                for i in range(3):
                    await session.call_tool("echo", {"message": f"call {i} " + "x" * 1000})
                with pytest.raises(MCPError):
                    # Silent for 2 s per step: the bridge times it out after 1 s.
                    await session.call_tool("trigger-long-running-operation", {"duration": 4, "steps": 2})

    # The supervisor takes the bridge's events in as they stream; wait until the last is in.
    deadline = time.monotonic() + 20
    while True:
        server = server_status(warden, daemon, "everything")
        tools = {t["name"]: t for t in server["tools"]}
        if "trigger-long-running-operation" in tools and tools.get("echo", {}).get("calls") == 3:
            break
        assert time.monotonic() < deadline, server
        time.sleep(0.1)

    echo = tools["echo"]
    assert (echo["calls"], echo["errors"], echo["timeouts"]) == (3, 0, 0), echo
    assert echo["bytes_out"] > 3 * 1000, "three results echoing 1,000 bytes each"
    assert 0 <= echo["p50_ms"] <= echo["p95_ms"], echo
    assert echo["pin"] == "approved", "pinned on first sight, unchanged since"
    slow = tools["trigger-long-running-operation"]
    assert (slow["calls"], slow["errors"], slow["timeouts"]) == (1, 0, 1), slow
    assert set(tools) == {"echo", "trigger-long-running-operation"}, "only tools/call has tools"
    # The chart's series counts the same requests (initialize and tools/list included).
    assert sum(p["requests"] for p in server["latency"]) == server["requests"], server
    assert sum(p["timeouts"] for p in server["latency"]) == server["timeouts"] == 1, server


def test_status_of_an_unknown_server_says_so(warden: Warden, daemon: dict[str, str]) -> None:
    out = subprocess.run(
        [str(warden.binary), "status", "--server", "nosuch"],
        env=daemon, capture_output=True, text=True, timeout=20,
    )
    assert out.returncode == 1, out
    assert "knows no server `nosuch`" in out.stderr, out.stderr
