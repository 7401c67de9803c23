"""Both protocol eras through the bridge, with the real Python SDK 2.x (issue 45, in steps).
Its client in `auto` mode probes `server/discover` and stays on 2026-07-28 with a server that
speaks it; there is no `initialize`, so the session's client is named by each request's
`_meta`. `warden probe` tells the eras apart the same way: `server/discover` first, then
`initialize`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.types import Implementation

from conftest import Warden
from test_tool_figures import daemon  # noqa: F401  (the fixture)

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("modern_server.py")
MODERN_ONLY = Path(__file__).with_name("modern_only_server.py")


async def test_a_modern_clients_name_is_in_warden_status(warden: Warden, daemon: dict[str, str]) -> None:  # noqa: F811
    params = StdioServerParameters(
        command=str(warden.binary),
        args=warden.bridge_args("modern", [sys.executable, str(SERVER)]),
        env=daemon,
    )
    with anyio.fail_after(60):
        async with Client(params, mode="auto", client_info=Implementation(name="e2e-modern-client", version="9.1")) as client:
            assert client.session.discover_result is not None, "the SDK stayed on 2026-07-28"
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == ["echo"]
            deadline = time.monotonic() + 20
            while True:
                out = subprocess.run(
                    [str(warden.binary), "status", "--json"],
                    env=daemon, capture_output=True, text=True, timeout=20, check=True,
                )
                sessions = json.loads(out.stdout)["sessions"]
                clients = [s.get("client") for s in sessions if s.get("server") == "modern"]
                if clients and clients[0] is not None:
                    break
                assert time.monotonic() < deadline, sessions
                await anyio.sleep(0.1)
    assert clients == ["e2e-modern-client 9.1"], sessions


def probe(warden: Warden, command: list[str]) -> dict:
    """`warden probe --json -- COMMAND` on its own (a socket no supervisor listens on)."""
    env = {**os.environ, **warden.env, "WARDEN_SOCKET": str(warden.tmp / "no-supervisor.sock")}
    out = subprocess.run(
        [str(warden.binary), "probe", "--json", "--", *command],
        env=env, capture_output=True, text=True, timeout=90,
    )
    return json.loads(out.stdout)


def test_the_probe_finds_a_modern_only_server_modern(warden: Warden) -> None:
    r = probe(warden, [sys.executable, str(MODERN_ONLY)])
    assert (r["ok"], r["era"], r["tool_names"]) == (True, "modern", ["echo", "confirm", "whoami"]), r


def test_the_probe_finds_the_sdks_dual_era_server_modern(warden: Warden) -> None:
    # It answers `initialize` too; `server/discover` comes first, so it is probed as modern.
    r = probe(warden, [sys.executable, str(SERVER)])
    assert (r["ok"], r["era"], r["tool_names"]) == (True, "modern", ["echo"]), r
