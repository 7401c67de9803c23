"""A wrapped server that cannot start, seen through the real Python SDK client: the
client's `initialize` fails with Warden's explanation (the command and the fix) instead of a
closed pipe, and the bridge's event log holds the `spawn_failed` line."""

from __future__ import annotations

import anyio
import pytest
from mcp import ClientSession, McpError, stdio_client

from conftest import Warden

pytestmark = pytest.mark.anyio


async def test_a_missing_command_fails_initialize_with_the_command_and_the_fix(warden: Warden) -> None:
    params = warden.params("ghost", ["warden-e2e-no-such-server", "--stdio"])
    with anyio.fail_after(30):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with pytest.raises(McpError) as caught:
                    await session.initialize()
    error = caught.value.error
    assert "warden-e2e-no-such-server --stdio" in error.message, error.message
    assert "absolute path" in error.message, error.message
    assert error.data["kind"] == "spawn_failed", error.data
    assert error.data["code"] == "W-SPAWN-NOT-FOUND", error.data
    assert error.data["command"] == "warden-e2e-no-such-server --stdio", error.data
    assert "PATH" in error.data["cause"], error.data
    failed = [e for e in warden.events("ghost") if e["kind"] == "spawn_failed"]
    assert len(failed) == 1, warden.events("ghost")
    assert failed[0]["code"] == "W-SPAWN-NOT-FOUND"
    assert failed[0]["command"] == "warden-e2e-no-such-server --stdio"
