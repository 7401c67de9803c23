"""Resilience with real peers: a real server killed under a real SDK client session."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, stdio_client
from mcp.types import TextContent

from conftest import NpmBins, Warden

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not Path("/proc").is_dir(), reason="walks /proc")]


def _stat(pid: int) -> tuple[int, str] | None:
    """(ppid, state) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[1]), fields[0]


def bridge_pid(state_dir: Path) -> int:
    """The bridge whose WARDEN_STATE_DIR is STATE_DIR (unique per test)."""
    want = f"WARDEN_STATE_DIR={state_dir}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"bridge" in cmdline and want in environ:
            return int(entry.name)
    raise AssertionError(f"no bridge with {want!r}")


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st and st[0] == pid and st[1] != "Z":
                out.append(int(entry.name))
    return out


async def test_a_killed_server_is_restarted_under_the_same_sdk_session(warden: Warden, npm_bins: NpmBins) -> None:
    params = warden.params("everything", [str(npm_bins.everything)], "backoff_ms=50")
    with anyio.fail_after(60):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                before = {t.name for t in (await session.list_tools()).tools}
                bridge = bridge_pid(warden.state_dir)
                [server] = children(bridge)
                os.kill(server, signal.SIGKILL)
                # The SDK session knows nothing of the restart: the bridge replays the
                # handshake to the new server, and tools/list (safe) is re-sent if it raced.
                after = {t.name for t in (await session.list_tools()).tools}
                assert after == before
                result = await session.call_tool("echo", {"message": "after restart"})
                assert isinstance(result.content[0], TextContent)
                assert result.content[0].text == "Echo: after restart"
                [new_server] = children(bridge)
                assert new_server != server

    kinds = [e["kind"] for e in warden.events("everything")]
    for want in ("server_exit", "restart", "replayed"):
        assert want in kinds, kinds
    assert kinds.count("session_start") == 1
