"""A wrapped server that cannot start, seen through real clients (the Python SDK, and the
TypeScript SDK that server-everything brings along, pinned by package-lock.json): the
client's `initialize` fails with Warden's explanation (the command and the fix) instead of a
closed pipe, and the bridge's event log holds the `spawn_failed` line."""

from __future__ import annotations

import json
import subprocess

import anyio
import pytest
from mcp import ClientSession, MCPError, stdio_client

from conftest import E2E_DIR, NpmBins, Warden

# Connects the TypeScript SDK's client through the bridge given as JSON argv; prints how
# `connect` (which sends `initialize`) ended, as JSON.
TS_CLIENT = """
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [command, args, env] = JSON.parse(process.argv[1]);
const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: "pipe" });
const client = new Client({ name: "warden-e2e", version: "1" });
try {
  await client.connect(transport);
  console.log(JSON.stringify({ connected: true }));
} catch (e) {
  console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message, data: e.data }));
} finally {
  await client.close().catch(() => {});
}
"""

pytestmark = pytest.mark.anyio


async def test_a_missing_command_fails_initialize_with_the_command_and_the_fix(warden: Warden) -> None:
    params = warden.params("ghost", ["warden-e2e-no-such-server", "--stdio"])
    with anyio.fail_after(30):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with pytest.raises(MCPError) as caught:
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


def test_the_typescript_sdk_sees_the_same_explanation(warden: Warden, node: str, npm_bins: NpmBins) -> None:
    args = warden.bridge_args("ghost", ["warden-e2e-no-such-server"])
    argv = json.dumps([str(warden.binary), args, warden.env])
    run = subprocess.run(
        [node, "--input-type=module", "-e", TS_CLIENT, argv],
        cwd=E2E_DIR,  # resolves @modelcontextprotocol/sdk from node_modules
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result.get("name") == "McpError", result
    assert result["code"] == -32000, result
    assert "warden-e2e-no-such-server" in result["message"], result
    assert "absolute path" in result["message"], result
    assert result["data"]["code"] == "W-SPAWN-NOT-FOUND", result
    assert any(e["kind"] == "spawn_failed" for e in warden.events("ghost")), warden.events("ghost")
