"""Both protocol eras through the bridge, with the real Python SDK 2.x and a modern-only server
of the project's own (`modern_only_server.py`).
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
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitResult, Implementation, InputRequiredResult

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
                clients = [(s.get("client"), s.get("era")) for s in sessions if s.get("server") == "modern"]
                if clients and clients[0][0] is not None:
                    break
                assert time.monotonic() < deadline, sessions
                await anyio.sleep(0.1)
    assert clients == [("e2e-modern-client 9.1", "modern")], sessions


async def test_an_adapted_session_says_so_in_warden_status(warden: Warden, daemon: dict[str, str]) -> None:  # noqa: F811
    params = StdioServerParameters(
        command=str(warden.binary),
        args=warden.bridge_args("adapted", [sys.executable, str(MODERN_ONLY)]),
        env=daemon,
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy", client_info=Implementation(name="old-ide", version="1.0")) as client:
            await client.list_tools()
            deadline = time.monotonic() + 20
            while True:
                out = subprocess.run(
                    [str(warden.binary), "status", "--json"],
                    env=daemon, capture_output=True, text=True, timeout=20, check=True,
                )
                sessions = [s for s in json.loads(out.stdout)["sessions"] if s.get("server") == "adapted"]
                if sessions and sessions[0].get("adapted"):
                    break
                assert time.monotonic() < deadline, sessions
                await anyio.sleep(0.1)
    assert (sessions[0]["client"], sessions[0]["era"], sessions[0]["adapted"]) == ("old-ide 1.0", "legacy", True)


# ---- tools_ask with a 2026-07-28 client: input_required and Warden's signed requestState ----


def modern_only(warden: Warden, log: Path, *sets: str) -> StdioServerParameters:
    """The project's modern-only server behind the bridge; every line it reads goes to `log`."""
    return StdioServerParameters(
        command=str(warden.binary),
        args=warden.bridge_args("modern-only", [sys.executable, str(MODERN_ONLY)], *sets),
        env={**warden.env, "MODERN_ONLY_LOG": str(log)},
    )


def calls_received(log: Path) -> list[dict]:
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [m["params"] for m in lines if m.get("method") == "tools/call"]


def answering(allow: bool) -> tuple[object, list[str]]:
    """An elicitation callback that answers `allow`, and the questions it was asked."""
    asked: list[str] = []

    async def elicit(_ctx: object, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"allow": allow})

    return elicit, asked


async def test_a_modern_client_is_asked_and_its_yes_runs_the_call_once(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    elicit, asked = answering(True)
    with anyio.fail_after(60):
        async with Client(modern_only(warden, log, 'tools_ask=["echo"]'), mode="auto", elicitation_callback=elicit) as client:
            result = await client.call_tool("echo", {"message": "hi"})
    received = [{k: v for k, v in c.items() if k != "_meta"} for c in calls_received(log)]
    assert (result.content[0].text, len(asked), received) == ("hi", 1, [{"name": "echo", "arguments": {"message": "hi"}}])


async def test_a_modern_clients_no_is_tool_declined_and_never_reaches_the_server(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    elicit, _ = answering(False)
    with anyio.fail_after(60):
        async with Client(modern_only(warden, log, 'tools_ask=["echo"]'), mode="auto", elicitation_callback=elicit) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("echo", {"message": "hi"})
    assert (refused.value.data["code"], calls_received(log)) == ("W-TOOL-DECLINED", [])


async def first_round(client: Client) -> InputRequiredResult:
    first = await client.session.call_tool("echo", {"message": "hi"}, allow_input_required=True)
    assert isinstance(first, InputRequiredResult), first
    return first


YES = {"warden_allow": ElicitResult(action="accept", content={"allow": True})}


async def test_a_forged_request_state_is_refused(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    elicit, _ = answering(True)
    with anyio.fail_after(60):
        async with Client(modern_only(warden, log, 'tools_ask=["echo"]'), mode="auto", elicitation_callback=elicit) as client:
            state = (await first_round(client)).request_state
            forged = state[:-1] + ("1" if state.endswith("0") else "0")
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "echo", {"message": "hi"}, input_responses=YES, request_state=forged, allow_input_required=True
                )
    assert (refused.value.data["request_state"], calls_received(log)) == ("forged", [])


async def test_a_replayed_request_state_is_refused(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    elicit, _ = answering(True)
    with anyio.fail_after(60):
        async with Client(modern_only(warden, log, 'tools_ask=["echo"]'), mode="auto", elicitation_callback=elicit) as client:
            state = (await first_round(client)).request_state
            await client.session.call_tool(
                "echo", {"message": "hi"}, input_responses=YES, request_state=state, allow_input_required=True
            )
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "echo", {"message": "hi"}, input_responses=YES, request_state=state, allow_input_required=True
                )
    assert (refused.value.data["request_state"], len(calls_received(log))) == ("used", 1)


async def test_the_servers_own_round_of_an_allowed_call_is_not_asked_about_again(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    asked: list[str] = []

    async def elicit(_ctx: object, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        key = next(iter(params.requested_schema["properties"]))
        return ElicitResult(action="accept", content={key: True})

    with anyio.fail_after(60):
        async with Client(modern_only(warden, log, 'tools_ask=["confirm"]'), mode="auto", elicitation_callback=elicit) as client:
            result = await client.call_tool("confirm", {"what": "the plan"})
    assert (result.content[0].text, asked) == (
        "confirmed: the plan",
        [asked[0], "Confirm the plan?"],
    )


# ---- the era adapter: a legacy client in front of a modern-only server -----------------------


async def test_a_legacy_client_uses_a_modern_only_server_through_the_adapter(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with anyio.fail_after(60):
        async with Client(modern_only(warden, log), mode="legacy", client_info=Implementation(name="old-ide", version="1.0")) as client:
            tools = await client.list_tools()
            echoed = await client.call_tool("echo", {"message": "across eras"})
            whoami = json.loads((await client.call_tool("whoami", {})).content[0].text)
    assert ([t.name for t in tools.tools], echoed.content[0].text, whoami) == (
        ["echo", "confirm", "whoami"],
        "across eras",
        {"clientInfo": {"name": "old-ide", "version": "1.0"}, "protocolVersion": "2026-07-28"},
    )


async def test_a_legacy_client_alone_cannot_use_a_modern_only_server(tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(MODERN_ONLY)])
    with anyio.fail_after(60), pytest.raises(Exception) as failed:
        async with Client(params, mode="legacy"):
            pass
    assert "2026-07-28" in repr(failed.value), "the direct refusal names the version (the adapter's reason to exist)"


async def test_the_adapter_turns_a_servers_input_round_into_an_elicitation(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    asked: list[str] = []

    async def elicit(_ctx: object, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(60):
        async with Client(modern_only(warden, log), mode="legacy", elicitation_callback=elicit) as client:
            result = await client.call_tool("confirm", {"what": "the deploy"})
    assert (result.content[0].text, asked) == ("confirmed: the deploy", ["Confirm the deploy?"])


async def test_the_adapter_fails_an_input_round_the_client_cannot_answer(warden: Warden, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with anyio.fail_after(60):
        async with Client(modern_only(warden, log), mode="legacy") as client:
            with pytest.raises(MCPError) as failed:
                await client.call_tool("confirm", {"what": "the deploy"})
    assert failed.value.data["kind"] == "input_unavailable"


async def tools_and_answer(params: StdioServerParameters, mode: str) -> tuple[list[dict], str]:
    with anyio.fail_after(60):
        async with Client(params, mode=mode) as client:
            tools = await client.list_tools()
            answer = await client.call_tool("echo", {"message": "same"})
    return [t.model_dump(exclude_none=True) for t in tools.tools], answer.content[0].text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_bridge_is_identical_to_direct_in_both_eras(warden: Warden, mode: str) -> None:
    direct = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    bridged = warden.params("modern", [sys.executable, str(SERVER)])
    assert await tools_and_answer(bridged, mode) == await tools_and_answer(direct, mode)


# ---- warden probe: server/discover first --------------------------------------------------


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
