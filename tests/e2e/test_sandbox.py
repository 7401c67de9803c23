"""Real servers from npm in the sandbox (`sandbox = "on"`, bubblewrap), driven by the Python MCP
SDK client through `warden bridge`: they work as before, and cannot read what is hidden."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, stdio_client
from mcp.types import TextContent

from conftest import REPO_ROOT, NpmBins, Warden

pytestmark = pytest.mark.anyio


@pytest.fixture
def bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        pytest.fail("`bwrap` is not on PATH; the sandbox needs bubblewrap (apt-get install bubblewrap)", pytrace=False)
    return found


def text(result) -> str:
    assert not result.is_error, result
    assert isinstance(result.content[0], TextContent), result
    return result.content[0].text


async def test_server_everything_works_sandboxed(warden: Warden, npm_bins: NpmBins, bwrap: str) -> None:
    params = warden.params("everything", [str(npm_bins.everything)], 'sandbox="on"')
    with anyio.fail_after(60):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert "echo" in tools, tools
                assert text(await session.call_tool("echo", {"message": "boxed"})) == "Echo: boxed"


async def test_mcp_ripgrep_searches_its_root_but_not_what_is_hidden(
    warden: Warden, npm_bins: NpmBins, rg: str, bwrap: str
) -> None:
    """The root is outside /tmp (the sandbox's /tmp is its own) and readable; a folder in
    `sandbox_deny` under it is an empty folder to the server."""
    root = REPO_ROOT / "target" / "e2e-sandbox" / warden.tmp.name
    (root / "private").mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("the boxed-needle is here\n")
    (root / "private" / "secret.txt").write_text("boxed-needle in a secret\n")
    try:
        params = warden.params(
            "rg", [str(npm_bins.ripgrep)], 'sandbox="on"', f'sandbox_deny=["{root / "private"}"]'
        )
        with anyio.fail_after(60):
            async with stdio_client(params, errlog=warden.errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    found = text(await session.call_tool("search", {"pattern": "boxed-needle", "path": str(root)}))
                    assert "notes.txt" in found, found
                    assert "secret" not in found, found
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def test_a_uvx_server_from_pypi_works_sandboxed(warden: Warden, bwrap: str) -> None:
    """`uvx` fetches the pinned server from PyPI into the server's own cache (its `UV_CACHE_DIR`
    under Warden's state; the user's ~/.cache/uv is read-only inside) with the host's network,
    then runs it confined."""
    uvx = Path(sys.executable).with_name("uvx")
    if not uvx.exists():
        pytest.fail(f"{uvx} is missing: pip install -r tests/e2e/requirements.txt", pytrace=False)
    params = warden.params(
        "time", [str(uvx), "mcp-server-time==2026.10.19"], 'sandbox="on"', 'sandbox_network="host"'
    )
    # The SDK starts servers with a minimal environment; this machine's way to PyPI (a CA of
    # its own, a proxy, a mirror) goes along, as a client's config entry would pass it, and
    # through the sandbox's cleared environment by name (`--pass-env`, as `clients wrap`
    # writes it for an entry's `env`).
    reach = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "UV_INDEX_URL", "UV_DEFAULT_INDEX")
    passed = {k: os.environ[k] for k in reach if k in os.environ}
    params.env = {**(params.env or {}), **passed}
    params.args = params.args[:1] + [a for k in passed for a in ("--pass-env", k)] + params.args[1:]
    with anyio.fail_after(180):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert "get_current_time" in tools, tools
                now = text(await session.call_tool("get_current_time", {"timezone": "UTC"}))
                assert "UTC" in now, now
