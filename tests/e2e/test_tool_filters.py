"""`tools_allow` / `tools_deny` with a real server (server-everything) and the real Python SDK:
hidden tools are missing from `tools/list`, a call to one gets Warden's `tool_denied`, and an
edit of config.toml reaches the running session as `notifications/tools/list_changed`."""

from __future__ import annotations

import anyio
import pytest
from mcp import ClientSession, MCPError, stdio_client

from conftest import NpmBins, Warden

pytestmark = pytest.mark.anyio

SESSION_LIMIT_S = 60


def method_of(message: object) -> str | None:
    """The method of a notification the SDK hands to `message_handler` (wrapped or not)."""
    inner = getattr(message, "root", message)
    return getattr(inner, "method", None)


async def test_denied_tools_are_hidden_refused_and_come_back_when_the_config_changes(warden: Warden, npm_bins: NpmBins) -> None:
    warden.config.write_text('[servers.everything]\ntools_deny = ["get-env", "trigger-*"]\n', encoding="utf-8")
    # server-everything announces list changes of its own at start: only count those that
    # come after the edit.
    listed_again: list[anyio.Event] = [anyio.Event()]

    async def on_message(message: object) -> None:
        if method_of(message) == "notifications/tools/list_changed":
            listed_again[-1].set()

    params = warden.params("everything", [str(npm_bins.everything)])
    with anyio.fail_after(SESSION_LIMIT_S):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                names = {t.name for t in (await session.list_tools()).tools}
                assert "echo" in names and not {n for n in names if n == "get-env" or n.startswith("trigger-")}, names

                with pytest.raises(MCPError) as refused:
                    await session.call_tool("get-env", {})
                data = refused.value.error.data
                assert (refused.value.code, data["kind"], data["tool"], data["code"]) == (-32602, "tool_denied", "get-env", "W-TOOL-DENIED")

                listed_again.append(anyio.Event())
                warden.config.write_text('[servers.everything]\ntools_deny = ["trigger-*"]\n', encoding="utf-8")
                await listed_again[-1].wait()
                names = {t.name for t in (await session.list_tools()).tools}
                assert "get-env" in names, names

    denied = [e for e in warden.events("everything") if e["kind"] == "tool_denied"]
    assert [(e["tool"], e["code"]) for e in denied] == [("get-env", "W-TOOL-DENIED")], denied
