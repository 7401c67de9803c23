"""`warden servers add` writes entries a real client can start: the Python MCP SDK client
launches exactly what the entry holds (command, args, env), as an IDE does, and reaches the
real server-everything through the bridge the entry runs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

from conftest import NpmBins, Warden

pytestmark = pytest.mark.anyio


async def test_a_server_added_to_two_clients_is_reached_through_the_written_entry(
    warden: Warden, npm_bins: NpmBins, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".gemini").mkdir(parents=True)
    env = {**os.environ, **warden.env, "HOME": str(home), "WARDEN_BIN": str(warden.binary)}
    env.pop("XDG_CONFIG_HOME", None)
    added = subprocess.run(
        [str(warden.binary), "servers", "add", "everything", "--client", "cursor", "--client", "gemini-cli",
         "--env", "GREETING=hello", "--", str(npm_bins.everything)],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert added.returncode == 0, added.stderr
    cursor = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["everything"]
    gemini = json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]["everything"]
    assert cursor["command"] == gemini["command"] == str(warden.binary)
    # `--pass-env`: the entry's variable reaches the server also when a sandbox clears its environment.
    assert cursor["args"] == ["bridge", "--server", "everything", "--pass-env", "GREETING", "--", str(npm_bins.everything)], cursor
    assert cursor["env"] == {"GREETING": "hello"}, cursor

    # As the IDE would: the entry's command, args and env (with the test's own state dir).
    params = StdioServerParameters(command=cursor["command"], args=cursor["args"], env={**warden.env, **cursor["env"]})
    with anyio.fail_after(60):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "mcp-servers/everything"
                result = await session.call_tool("echo", {"message": "added once, used everywhere"})
                assert isinstance(result.content[0], TextContent)
                assert result.content[0].text == "Echo: added once, used everywhere"
    assert any(e.get("tool") == "echo" and e.get("outcome") == "ok" for e in warden.events("everything"))
