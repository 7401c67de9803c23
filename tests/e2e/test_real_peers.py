"""`warden bridge` end to end with real peers: MCP servers from npm behind the bridge, the real
Python MCP SDK client in front of it.

Each test checks one promise of the bridge that its Rust tests check only against the fake
server: relaying, the progress-aware watchdog, timeouts that leave the session usable,
client-side cancellation, very large lines, and no orphaned servers when the client dies.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPError, stdio_client
from mcp.types import CallToolResult, TextContent

from conftest import NpmBins, Warden

pytestmark = pytest.mark.anyio

# Generous upper bounds: a test that hangs fails here instead of stalling the suite.
SESSION_LIMIT_S = 60


def text_of(result: CallToolResult) -> str:
    assert not result.is_error, result
    assert result.content and isinstance(result.content[0], TextContent), result
    return result.content[0].text


def requests_for(events: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == "request" and e.get("tool") == tool]


# ---- 1. relaying a session ----------------------------------------------------------------


async def test_everything_handshake_list_and_echo(warden: Warden, npm_bins: NpmBins) -> None:
    params = warden.params("everything", [str(npm_bins.everything)])
    with anyio.fail_after(SESSION_LIMIT_S):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "mcp-servers/everything"
                assert init.capabilities.tools is not None

                tools = {t.name for t in (await session.list_tools()).tools}
                assert {"echo", "trigger-long-running-operation"} <= tools, tools

                result = await session.call_tool("echo", {"message": "hello through warden"})
                assert text_of(result) == "Echo: hello through warden"

    events = warden.events("everything")
    assert any(e.get("method") == "initialize" and e.get("outcome") == "ok" for e in events), events
    [echo] = requests_for(events, "echo")
    assert echo["method"] == "tools/call" and echo["outcome"] == "ok", echo
    assert any(e["kind"] == "session_end" for e in events), events


# ---- 2. progress keeps a long call alive ------------------------------------------------------


async def test_progress_keeps_a_call_alive_past_the_idle_limit(warden: Warden, npm_bins: NpmBins) -> None:
    """A 3 s tool reporting progress every 0.5 s outlives idle_timeout_ms=1500: the watchdog
    counts the real server's progress notifications as activity."""
    params = warden.params(
        "everything",
        [str(npm_bins.everything)],
        "idle_timeout_ms=1500",
        "stderr_is_activity=false",  # only progress may keep the call alive
    )
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(SESSION_LIMIT_S):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                started = time.monotonic()
                result = await session.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 3, "steps": 6},
                    progress_callback=on_progress,
                )
                elapsed = time.monotonic() - started
                assert text_of(result).startswith("Long running operation completed"), result
                # The call really lasted longer than the idle limit (else this proves nothing).
                assert elapsed >= 2.5, elapsed
                assert [p for p, _, _ in seen] == [1, 2, 3, 4, 5, 6], seen
                assert all(total == 6 for _, total, _ in seen), seen

    [call] = requests_for(warden.events("everything"), "trigger-long-running-operation")
    assert call["outcome"] == "ok", call
    assert call["duration_ms"] >= 2500, call


# ---- 3. a silent call times out; the session goes on ----------------------------------------


async def test_a_call_without_progress_times_out_and_the_session_goes_on(
    warden: Warden, npm_bins: NpmBins
) -> None:
    params = warden.params(
        "everything",
        [str(npm_bins.everything)],
        "idle_timeout_ms=1000",
        "stderr_is_activity=false",
    )
    with anyio.fail_after(SESSION_LIMIT_S):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                started = time.monotonic()
                with pytest.raises(MCPError) as caught:
                    # No progress callback: the request carries no progressToken, so the server
                    # stays silent for 2 s per step.
                    await session.call_tool("trigger-long-running-operation", {"duration": 4, "steps": 2})
                elapsed = time.monotonic() - started
                err = caught.value
                assert err.code == -32001, err.error
                assert err.message.startswith("Request timed out"), err.message
                assert "idle_timeout_ms = 1000" in err.message, err.message
                # The SDK keeps the bridge's error data as a plain dict.
                assert isinstance(err.data, dict), err.error
                assert err.data["kind"] == "timeout", err.data
                assert err.data["server"] == "everything", err.data
                assert err.data["limit_ms"] == 1000, err.data
                assert err.data["method"] == "tools/call", err.data
                # The bridge answered at its idle limit, long before the tool's first step.
                assert 0.9 <= elapsed < 3.5, elapsed

                result = await session.call_tool("echo", {"message": "after the timeout"})
                assert text_of(result) == "Echo: after the timeout"

    events = warden.events("everything")
    [slow] = requests_for(events, "trigger-long-running-operation")
    assert slow["outcome"] == "timeout", slow
    [echo] = requests_for(events, "echo")
    assert echo["outcome"] == "ok", echo


# ---- 4. the client cancels; the session goes on ------------------------------------------------


async def test_a_client_side_cancel_is_relayed_and_logged(warden: Warden, npm_bins: NpmBins) -> None:
    params = warden.params("everything", [str(npm_bins.everything)])
    running = anyio.Event()
    finished: list[CallToolResult] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        running.set()

    with anyio.fail_after(SESSION_LIMIT_S):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def long_call() -> None:
                    finished.append(
                        await session.call_tool(
                            "trigger-long-running-operation",
                            {"duration": 10, "steps": 10},
                            progress_callback=on_progress,
                        )
                    )

                async with anyio.create_task_group() as tg:
                    tg.start_soon(long_call)
                    # The first progress notification proves the server is running the tool.
                    with anyio.fail_after(10):
                        await running.wait()
                    # Cancelling the caller makes the SDK send notifications/cancelled.
                    tg.cancel_scope.cancel()
                assert finished == [], "the call completed instead of being cancelled"

                result = await session.call_tool("echo", {"message": "after the cancel"})
                assert text_of(result) == "Echo: after the cancel"

    events = warden.events("everything")
    [cancelled] = requests_for(events, "trigger-long-running-operation")
    assert cancelled["method"] == "tools/call", cancelled
    assert cancelled["outcome"] == "cancelled", cancelled
    assert cancelled["duration_ms"] < 9000, cancelled
    [echo] = requests_for(events, "echo")
    assert echo["outcome"] == "ok", echo


# ---- 5. a result line over 10 MB --------------------------------------------------------------


def write_haystack(root: Path, pattern: str, total_bytes: int) -> int:
    """Text files of lines matching PATTERN, `total_bytes` in all; returns the line count."""
    root.mkdir()
    # Long lines keep the path prefix rg adds to each match small next to the text.
    line = f"{pattern} " + "x" * (999 - len(pattern) - 1) + "\n"
    per_file = 1_000
    chunk = line * per_file
    lines = written = index = 0
    while written < total_bytes:
        (root / f"part{index:02}.txt").write_text(chunk, encoding="ascii")
        written += len(chunk)
        lines += per_file
        index += 1
    return lines


async def test_a_result_line_over_10_mb_passes(warden: Warden, npm_bins: NpmBins, rg: str) -> None:
    """mcp-ripgrep answers `search` with one JSON-RPC line of ~14 MB.

    The SDK's stdio reader has no line limit, so the SDK client is used. It is quadratic in the
    line length though (it re-concatenates and re-splits its whole buffer for every 64 KiB
    chunk): ~14 MB costs it about 1.5 s of CPU, 22 MB about 4 s, while the bridge relays the
    line in a fraction of a second. Keep the data near the 10 MB the test needs."""
    pattern = "wardenneedle"
    haystack = warden.tmp / "haystack"
    lines = write_haystack(haystack, pattern, 12 * 1024 * 1024 + 1)
    params = warden.params("rg", [str(npm_bins.ripgrep)])

    with anyio.fail_after(SESSION_LIMIT_S):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                found = text_of(await session.call_tool("search", {"pattern": pattern, "path": str(haystack)}))
                assert len(found) > 10_000_000, len(found)
                assert found.count(pattern) == lines

                counts = text_of(await session.call_tool("count-matches", {"pattern": pattern, "path": str(haystack)}))
                per_file = [int(row.rsplit(":", 1)[1]) for row in counts.strip().splitlines()]
                assert sum(per_file) == lines, counts

    events = warden.events("rg")
    [search] = requests_for(events, "search")
    assert search["outcome"] == "ok", search
    assert search["bytes_out"] > 10_000_000, search  # one line, relayed whole
    [count] = requests_for(events, "count-matches")
    assert count["outcome"] == "ok", count


# ---- 6. no orphans when the client dies ----------------------------------------------------------


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgrp: int
    state: str
    start: int  # clock ticks after boot: with pid, names one process even if pids are reused
    cmdline: str


def read_proc(pid: int) -> Proc | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    # Field 2 (comm) is in parentheses and may hold spaces: split after its last ')'.
    rest = stat[stat.rindex(")") + 2 :].split()
    return Proc(pid, int(rest[1]), int(rest[2]), rest[0], int(rest[19]), cmdline.strip())


def all_procs() -> list[Proc]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (p := read_proc(int(entry))) is not None:
            found.append(p)
    return found


def tree_below(root: int) -> list[Proc]:
    """ROOT's descendants by parent links, plus every member of their process groups (the
    bridge puts the server in a group of its own; a reparented grandchild keeps that group)."""
    procs = all_procs()
    by_parent: dict[int, list[Proc]] = {}
    for p in procs:
        by_parent.setdefault(p.ppid, []).append(p)
    tree: dict[int, Proc] = {}
    todo = [root]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            if child.pid not in tree:
                tree[child.pid] = child
                todo.append(child.pid)
    groups = {p.pgrp for p in tree.values()}
    for p in procs:
        if p.pgrp in groups and p.pid not in tree and p.pid != root:
            tree[p.pid] = p
    return list(tree.values())


def alive(p: Proc) -> bool:
    now = read_proc(p.pid)
    return now is not None and now.start == p.start and now.state not in ("Z", "X")


def wait_ready(proc: subprocess.Popen[str], limit_s: float, stderr_path: Path) -> str:
    """The first stdout line of PROC, waiting at most LIMIT_S."""
    assert proc.stdout is not None
    deadline = time.monotonic() + limit_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"client not ready within {limit_s} s; stderr:\n{stderr_path.read_text(errors='replace')}")
        readable, _, _ = select.select([proc.stdout], [], [], left)
        if readable:
            line = proc.stdout.readline()
            if not line:
                pytest.fail(
                    f"client exited ({proc.wait()}) before it was ready; stderr:\n"
                    f"{stderr_path.read_text(errors='replace')}"
                )
            return line.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="walks /proc and uses pidfds")
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_killing_the_client_leaves_no_server_process(
    warden: Warden, npm_bins: NpmBins, e2e_dir: Path, busy: bool
) -> None:
    """SIGKILL the client: the bridge sees EOF on stdin and must stop the server's whole tree
    (npm exec -> sh -> node) within 5 s. Idle, the server exits when its stdin closes; busy
    with a call, its pending timer keeps it alive and the bridge must escalate to SIGTERM
    on the group after its 2 s grace."""
    # npx resolves the server from tests/e2e/node_modules (cwd) without the network, and adds
    # two processes to the tree: npm exec -> sh -c -> node.
    params = warden.params(
        "everything-npx",
        ["npx", "--no-install", "mcp-server-everything"],
        cwd=e2e_dir,
    )
    client_stderr = warden.tmp / "client.stderr"
    with open(client_stderr, "w") as err:
        client = subprocess.Popen(
            [sys.executable, str(e2e_dir / "hold_client.py"), params.model_dump_json(), *(["--busy"] if busy else [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=e2e_dir,
        )
    tree: list[Proc] = []
    pidfds: dict[int, int] = {}
    try:
        assert wait_ready(client, SESSION_LIMIT_S, client_stderr) == "READY mcp-servers/everything"

        bridges = [p for p in all_procs() if p.ppid == client.pid]
        assert len(bridges) == 1, bridges
        bridge = bridges[0]
        assert Path(os.readlink(f"/proc/{bridge.pid}/exe")).name == "warden", bridge
        tree = [bridge, *tree_below(bridge.pid)]
        shown = "\n".join(f"  {p.pid} ppid={p.ppid} pgrp={p.pgrp} {p.cmdline}" for p in tree)
        assert any("npm exec" in p.cmdline or "npx" in p.cmdline for p in tree), shown
        assert any(p.cmdline.startswith("node ") and "mcp-server-everything" in p.cmdline for p in tree), shown
        # Pidfds taken before the kill follow exactly these processes; one becomes readable
        # when its process exits.
        for p in tree:
            try:
                pidfds[p.pid] = os.pidfd_open(p.pid)
            except ProcessLookupError:
                pytest.fail(f"{p.pid} exited before the kill; tree:\n{shown}")
            # Same start time: the pidfd is for the process walked, not a reused pid.
            assert alive(p), f"{p.pid} changed before the kill; tree:\n{shown}"

        client.kill()  # SIGKILL: the bridge only sees EOF on its stdin
        client.wait(timeout=10)
        killed_at = time.monotonic()

        poller = select.poll()
        for fd in pidfds.values():
            poller.register(fd, select.POLLIN)
        waiting = dict(pidfds)
        fd_to_pid = {fd: pid for pid, fd in pidfds.items()}
        while waiting:
            left = 5.0 - (time.monotonic() - killed_at)
            if left <= 0:
                break
            for fd, _ in poller.poll(left * 1000):
                poller.unregister(fd)
                waiting.pop(fd_to_pid[fd], None)
        gone_after = time.monotonic() - killed_at
        survivors = [p for p in tree if p.pid in waiting and alive(p)]
        print(f"tree of {len(tree)} gone {gone_after:.2f} s after the kill:\n{shown}")
        assert not survivors, (
            f"{len(survivors)} process(es) of the bridge's tree outlived the client by 5 s:\n"
            + "\n".join(f"  {p.pid} {p.cmdline}" for p in survivors)
            + f"\nwhole tree:\n{shown}"
        )
        # The bridge has exited, so its event log is complete.
        [end] = [e for e in warden.events("everything-npx") if e["kind"] == "session_end"]
        assert end["detail"].startswith("client closed"), end
        if busy:
            # The escalation ran: the server did not end on its own.
            assert "SIGTERM" in end["detail"] or "143" in end["detail"], end
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(timeout=10)
        kill_leftovers(tree, pidfds)


def kill_leftovers(tree: list[Proc], pidfds: dict[int, int]) -> None:
    """Whatever of TREE survived the test, and what joined its process groups since."""
    for fd in pidfds.values():
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(fd)
    by_pid = {p.pid: p for p in tree}
    for group in {p.pgrp for p in tree}:
        leader = read_proc(group)
        # A group id stays taken while any member lives: if the leader is gone, the members
        # left are the group's own; if it lives, it must be the leader that was recorded.
        if leader is not None and not (group in by_pid and leader.start == by_pid[group].start):
            continue
        for p in all_procs():
            if p.pgrp == group and p.state not in ("Z", "X"):
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
