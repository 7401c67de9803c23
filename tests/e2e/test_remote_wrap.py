"""A client's remote entry (`{"url": ...}`, or HTTP+SSE's `{"type": "sse", ...}`) run through the
bridge (issue 46): `warden clients wrap` turns it into `warden bridge --remote URL`, a client
starts exactly what the wrapped entry holds and reaches the server's tools, and `warden clients
unwrap` gives the file back byte for byte. `warden servers add --url` writes the same entry. The
server is the Python SDK's own Streamable HTTP (or HTTP+SSE) server (`remote_server.py`) on a
loopback port."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.client import Client

from conftest import Warden, serve_remote

pytestmark = pytest.mark.anyio


@pytest.fixture
def url() -> Iterator[str]:
    yield from serve_remote()


def claude_desktop(tmp_path: Path, text: str) -> tuple[Path, dict[str, str]]:
    """A home whose Claude Desktop file holds TEXT, and the environment warden runs in there."""
    home = tmp_path / "home"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_bytes(text.encode())
    return config, {"HOME": str(home)}


def warden_run(warden: Warden, env: dict[str, str], *args: str) -> None:
    run_env = {**os.environ, **warden.env, **env}
    run_env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run([str(warden.binary), *args], env=run_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


async def tools_of(warden: Warden, entry: dict[str, object]) -> list[str]:
    """As the IDE would: start the entry's command with its args, and list the tools."""
    params = StdioServerParameters(command=str(entry["command"]), args=list(entry["args"]), env=warden.env)  # type: ignore[arg-type]
    with anyio.fail_after(60):
        async with Client(params, mode="auto") as client:
            return sorted(t.name for t in (await client.list_tools()).tools)


def entry_of(config: Path, name: str) -> dict[str, object]:
    return json.loads(config.read_text())["mcpServers"][name]


def original(url: str) -> str:
    return '{\n  "mcpServers": {\n    "docs": { "url": "%s" }\n  }\n}\n' % url


async def test_a_wrapped_remote_entry_reaches_the_servers_tools(warden: Warden, url: str, tmp_path: Path) -> None:
    config, env = claude_desktop(tmp_path, original(url))
    warden_run(warden, env, "clients", "wrap", "--file", str(config))
    assert await tools_of(warden, entry_of(config, "docs")) == ["echo", "headers", "wipe"]


async def test_unwrap_gives_the_remote_entry_back_byte_for_byte(warden: Warden, url: str, tmp_path: Path) -> None:
    config, env = claude_desktop(tmp_path, original(url))
    warden_run(warden, env, "clients", "wrap", "--file", str(config))
    await tools_of(warden, entry_of(config, "docs"))
    warden_run(warden, env, "clients", "unwrap", "--file", str(config))
    assert config.read_text() == original(url)


async def test_servers_add_url_writes_an_entry_that_reaches_the_servers_tools(
    warden: Warden, url: str, tmp_path: Path
) -> None:
    config, env = claude_desktop(tmp_path, '{\n  "mcpServers": {}\n}\n')
    warden_run(warden, env, "servers", "add", "docs", "--url", url, "--client", "claude-desktop")
    assert await tools_of(warden, entry_of(config, "docs")) == ["echo", "headers", "wipe"]


# An HTTP+SSE entry (`type: "sse"`), as Cline and others write one: the SDK's `sse_app()`.


@pytest.fixture
def sse_url() -> Iterator[str]:
    yield from serve_remote("--sse")


def sse_original(url: str) -> str:
    return '{\n  "mcpServers": {\n    "old": { "type": "sse", "url": "%s", "disabled": false }\n  }\n}\n' % url


async def test_a_wrapped_sse_entry_reaches_the_servers_tools(warden: Warden, sse_url: str, tmp_path: Path) -> None:
    config, env = claude_desktop(tmp_path, sse_original(sse_url))
    warden_run(warden, env, "clients", "wrap", "--file", str(config))
    assert await tools_of(warden, entry_of(config, "old")) == ["echo", "headers", "wipe"]


async def test_unwrap_gives_the_sse_entry_back_byte_for_byte(warden: Warden, sse_url: str, tmp_path: Path) -> None:
    config, env = claude_desktop(tmp_path, sse_original(sse_url))
    warden_run(warden, env, "clients", "wrap", "--file", str(config))
    await tools_of(warden, entry_of(config, "old"))
    warden_run(warden, env, "clients", "unwrap", "--file", str(config))
    assert config.read_text() == sse_original(sse_url)
