"""The ripgrep fallback with real peers: mcp-ripgrep killed under a real SDK session, and the
same search answered by Warden's local ripgrep with the same result."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, stdio_client
from mcp.types import TextContent

from conftest import NpmBins, Warden
from test_resilience import bridge_pid, children

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not Path("/proc").is_dir(), reason="walks /proc")]


async def test_mcp_ripgrep_killed_falls_back_to_local_ripgrep(warden: Warden, npm_bins: NpmBins, rg: str, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("alpha\nneedle one\n")
    (tree / "b.py").write_text("needle = 2\n")
    params = warden.params(
        "ripgrep",
        [str(npm_bins.ripgrep)],
        "fallback=rg",
        "circuit_failures=1",
        f'fallback_roots=["{tree}"]',
        cwd=tree,
    )
    args = {"pattern": "needle", "path": str(tree / "a.txt")}
    with anyio.fail_after(60):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                before = await session.call_tool("search", args)
                [server] = children(bridge_pid(warden.state_dir))
                os.kill(server, signal.SIGKILL)
                after = await session.call_tool("search", args)
                # Same shape, same text: the fallback speaks mcp-ripgrep's tools.
                assert not after.is_error, after
                assert isinstance(before.content[0], TextContent) and isinstance(after.content[0], TextContent)
                assert after.content[0].text == before.content[0].text
                assert "needle one" in after.content[0].text
                names = {t.name for t in (await session.list_tools()).tools}
                assert {"search", "advanced-search", "count-matches", "list-files", "list-file-types"} <= names

    details = [e.get("detail", "") for e in warden.events("ripgrep") if e["kind"] == "fallback"]
    assert details and details[0].startswith("on:"), details
