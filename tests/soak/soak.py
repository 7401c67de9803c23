"""Soak: a randomized fault run of `warden bridge` under the real Python MCP SDK client.

Several client sessions, each a `warden bridge` in front of `mcp-fake-server`, send a seeded
random mix of calls — echoes, multi-MB results, lines over `max_message_bytes`, hangs that hit
a small `idle_timeout_ms`, calls the client cancels, bursts in both directions, crashes that
force restarts, invalid UTF-8, half lines — while config.toml is rewritten under the running
bridges (they hot-reload it, and sometimes refuse a broken edit). Some sessions live for the
whole run (their bridges' RSS is sampled); others come and go, some of them with a server that
crashes on its first starts or leaves a SIGTERM-proof grandchild.

It checks, and exits 1 when any check fails:
- exactly one answer: every request written to a bridge gets exactly one response or error on
  the wire (counted by id under the SDK, so nothing the SDK hides is missed); a request the
  client cancelled gets at most one; no answer carries an id the client never sent;
- answers match their calls (an echo returns its text, a 3 MB result is 3 MB, a hang never
  succeeds), and a burst's notifications all arrive before its answer;
- hot reload applies: a hang that starts well after an edit times out at the new
  idle_timeout_ms (or at a --set override, which a reload must not drop);
- no request is left without an answer for GUARD_S seconds; no bridge closes on its client;
  no bridge panics;
- no orphans: after each session closes, and at the end, no process is left that carries the
  run's marker, whose WARDEN_SESSION names a soak bridge, or whose parent was a soak bridge;
- memory: the long-lived bridges' RSS is flat (see FLAT_MIB below).

The report (Markdown) goes to --report. Run it through scripts/soak.sh.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import signal
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

REPO_ROOT = Path(__file__).resolve().parent.parent.parent

# A request without an answer after this long is stuck (the bridge's own limits are far
# lower: max_timeout_ms 30 s, startup_timeout_ms 10 s).
GUARD_S = 75.0
# "Flat": the median RSS of the last quarter of the run is at most this far above the median
# of the second quarter (the first quarter is warm-up: allocator arenas, pipe buffers).
FLAT_MIB = 8.0
# Bridges whose server must be gone this long after the session closed.
ORPHAN_GRACE_S = 6.0
# idle_timeout_ms values the reloader picks from; the "progress" calls report every 300 ms,
# well inside the smallest, so they must succeed whatever the current value is.
IDLE_CHOICES = (1000, 1500, 2000, 3000)
MAX_MESSAGE = 8 * 1024 * 1024
RETRIES = 2
# Session 3 (of the long-lived ones) pins idle_timeout_ms with --set: reloads must keep it.
PINNED_IDLE = 2500
# A hang that started this long after the last edit must see that edit.
RELOAD_SETTLE_S = 1.5

RUN_ENV = "WARDEN_SOAK_RUN"
TAG_ENV = "WARDEN_SOAK_BRIDGE"

TEXT_ALPHABET = string.ascii_letters + string.digits + " äöüßéø✓→中文🙂"


def now() -> float:
    return time.monotonic()


# ---------------------------------------------------------------------------------------------
# Bookkeeping


@dataclass
class Wire:
    """What one session's bridge was sent and answered, counted on the wire by request id."""

    sent: dict[str, str] = field(default_factory=dict)  # id -> method
    sent_types: dict[str, type] = field(default_factory=dict)
    answers: Counter[str] = field(default_factory=Counter)
    # A short description of each answer, kept to explain duplicates.
    described: dict[str, list[str]] = field(default_factory=dict)
    cancelled: set[str] = field(default_factory=set)
    unknown: list[str] = field(default_factory=list)
    type_changed: list[str] = field(default_factory=list)
    null_id_errors: int = 0
    broken_lines: int = 0
    burst_notes: int = 0
    cancel_echoes: int = 0
    list_changed: int = 0


@dataclass
class Run:
    args: argparse.Namespace
    tmp: Path
    config: Path
    state_dir: Path
    warden: Path
    fake: Path
    run_id: str
    started: float = 0.0
    deadline: float = 0.0
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    violation_count: Counter[str] = field(default_factory=Counter)
    wires: dict[str, Wire] = field(default_factory=dict)
    bridge_pids: dict[str, int] = field(default_factory=dict)
    long_lived: list[str] = field(default_factory=list)
    rss: dict[str, list[tuple[float, int]]] = field(default_factory=lambda: defaultdict(list))
    cpu: dict[str, float] = field(default_factory=dict)
    reloads: list[tuple[float, int | None]] = field(default_factory=list)  # (t, idle or None=invalid)
    hang_limits: list[tuple[str, float, float, int]] = field(default_factory=list)  # tag, t0, t1, limit
    progress_notes: int = 0
    burst_expected_ok: int = 0
    burst_expected_all: int = 0
    sessions_opened: int = 0
    sessions_closed_busy: int = 0
    orphans_after_close: int = 0
    commit: str = "?"
    stop: bool = False
    # Held by the reloader while config.toml is invalid and by a session from its spawn until
    # initialize is answered: a bridge that starts on an invalid config refuses to start by
    # design (W-CONFIG-INVALID), which is not what the churn sessions are here to test.
    config_lock: anyio.Lock = field(default_factory=anyio.Lock)

    def violation(self, kind: str, text: str) -> None:
        self.violation_count[kind] += 1
        if len(self.violations) < 60:
            self.violations.append(f"[{now() - self.started:7.1f}s] {kind}: {text}")
        print(f"soak: VIOLATION {kind}: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# /proc


def proc_environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def proc_stat(pid: int) -> tuple[str, int, float] | None:
    """(state, ppid, cpu seconds) or None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return fields[0], int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks


def proc_rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def live_pids() -> list[int]:
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]


def marked(marker: bytes) -> list[int]:
    """Live (non-zombie) processes whose environment contains MARKER (a `KEY=VALUE` entry)."""
    out = []
    for pid in live_pids():
        if pid == os.getpid():
            continue
        if marker in proc_environ(pid):
            st = proc_stat(pid)
            if st and st[0] != "Z":
                out.append(pid)
    return out


def leftovers(run: Run, bridge_pids: dict[str, int]) -> list[tuple[int, str]]:
    """Processes a soak bridge left behind: the run's marker, WARDEN_SESSION of a soak bridge,
    or a soak bridge as parent."""
    prefixes = {f"WARDEN_SESSION={pid}-".encode() for pid in bridge_pids.values()}
    parents = set(bridge_pids.values())
    mark = f"{RUN_ENV}={run.run_id}".encode()
    found = []
    for pid in live_pids():
        if pid == os.getpid():
            continue
        st = proc_stat(pid)
        if st is None or st[0] == "Z":
            continue
        env = proc_environ(pid)
        why = None
        if mark in env:
            why = "carries the run marker"
        elif any(e.startswith(p) for e in env for p in prefixes):
            why = "WARDEN_SESSION of a soak bridge"
        elif st[1] in parents:
            why = "child of a soak bridge"
        if why:
            found.append((pid, f"{why}: {proc_cmdline(pid)}"))
    return found


# ---------------------------------------------------------------------------------------------
# The wire tap: counts requests and answers by id between the SDK session and the transport


def describe(msg: Any, t: float) -> str:
    if isinstance(msg, types.JSONRPCError):
        data = msg.error.data if isinstance(msg.error.data, dict) else {}
        return f"error {msg.error.code} {data.get('kind', '')} {msg.error.message[:120]!r} at {t:.3f}"
    return f"result {str(msg.result)[:80]!r} at {t:.3f}"


class Tap:
    def __init__(self, wire: Wire, read: Any, write: Any) -> None:
        self.wire = wire
        self.t_read = read
        self.t_write = write
        self.in_send: MemoryObjectSendStream[SessionMessage | Exception]
        self.in_recv: MemoryObjectReceiveStream[SessionMessage | Exception]
        self.out_send: MemoryObjectSendStream[SessionMessage]
        self.out_recv: MemoryObjectReceiveStream[SessionMessage]
        self.in_send, self.in_recv = anyio.create_memory_object_stream(0)
        self.out_send, self.out_recv = anyio.create_memory_object_stream(0)

    async def pump_in(self) -> None:
        w = self.wire
        async with self.in_send:
            async for item in self.t_read:
                if isinstance(item, Exception):
                    w.broken_lines += 1
                else:
                    msg = item.message
                    if isinstance(msg, types.JSONRPCResponse | types.JSONRPCError):
                        if msg.id is None:
                            w.null_id_errors += 1
                        else:
                            key = str(msg.id)
                            if key not in w.sent:
                                w.unknown.append(key)
                            else:
                                if type(msg.id) is not w.sent_types[key]:
                                    w.type_changed.append(key)
                                w.answers[key] += 1
                                w.described.setdefault(key, []).append(describe(msg, now()))
                    elif isinstance(msg, types.JSONRPCNotification):
                        data = (msg.params or {}).get("data") if msg.method == "notifications/message" else None
                        if isinstance(data, str) and data.startswith("burst "):
                            w.burst_notes += 1
                        elif isinstance(data, str) and data.startswith("cancelled "):
                            w.cancel_echoes += 1
                        elif msg.method == "notifications/tools/list_changed":
                            w.list_changed += 1
                try:
                    await self.in_send.send(item)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async def pump_out(self) -> None:
        w = self.wire
        async with self.out_recv:
            async for item in self.out_recv:
                msg = item.message
                if isinstance(msg, types.JSONRPCRequest):
                    key = str(msg.id)
                    name = (msg.params or {}).get("name") if msg.method == "tools/call" else None
                    w.sent[key] = f"{msg.method} {name}" if name else msg.method
                    w.sent_types[key] = type(msg.id)
                elif isinstance(msg, types.JSONRPCNotification) and msg.method == "notifications/cancelled":
                    rid = (msg.params or {}).get("requestId")
                    if rid is not None:
                        w.cancelled.add(str(rid))
                await self.t_write.send(item)


# ---------------------------------------------------------------------------------------------
# Calls


def classify(exc: MCPError) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    kind = data.get("kind")
    if isinstance(kind, str):
        return kind
    if exc.code == types.CONNECTION_CLOSED:
        return "connection_closed"
    return f"error {exc.code}"


# op -> weight. Ops whose success is impossible are in NEVER_OK.
MIX: dict[str, int] = {
    "echo": 30,
    "sleep": 8,
    "big": 6,
    "huge": 1,
    "hang": 4,
    "cancel_sleep": 5,
    "cancel_hang": 3,
    "progress": 4,
    "noise": 3,
    "burst": 4,
    "client_burst": 2,
    "crash": 2,
    "invalid_utf8": 2,
    "partial_then_exit": 1,
    "sample": 1,
    "ping": 2,
    "list_tools": 2,
}
NEVER_OK = {"huge", "hang", "crash", "invalid_utf8", "partial_then_exit"}
# What each call is meant to show; anything else is counted and shown, and is a consequence of
# a concurrent fault (a crash, a reload) unless a check above says otherwise.
EXPECTED = {
    "echo": "ok",
    "sleep": "ok",
    "big": "ok",
    "huge": "message_too_large",
    "hang": "timeout",
    "cancel_sleep": "cancelled",
    "cancel_hang": "cancelled",
    "progress": "ok",
    "noise": "ok",
    "burst": "ok",
    "burst_echo": "ok",
    "crash": "server_exited",
    "invalid_utf8": "invalid_response",
    "partial_then_exit": "invalid_response",
    "sample": "ok",
    "ping": "ok",
    "list_tools": "ok",
}


def rand_text(rng: random.Random) -> str:
    return "".join(rng.choice(TEXT_ALPHABET) for _ in range(rng.randint(1, 2000)))


def first_text(result: Any) -> str | None:
    content = getattr(result, "content", None)
    if not content:
        return None
    return getattr(content[0], "text", None)


class Client:
    """One session: a bridge, its wire tap, and the calls made through it."""

    def __init__(self, run: Run, tag: str, session: ClientSession, rng: random.Random, pinned: int | None) -> None:
        self.run = run
        self.tag = tag
        self.s = session
        self.rng = rng
        self.pinned = pinned

    async def op(self, name: str) -> None:
        run, rng = self.run, self.rng
        t0 = now()
        outcome = "ok"
        limit_ms: int | None = None
        expect_text: str | None = None
        expect_len: int | None = None
        burst_n = 0
        try:
            with anyio.fail_after(GUARD_S):
                result: Any = None
                if name in ("echo", "burst_echo"):
                    expect_text = rand_text(rng)
                    result = await self.s.call_tool("echo", {"text": expect_text})
                elif name == "sleep":
                    result = await self.s.call_tool("sleep", {"ms": rng.randint(10, 300)})
                    expect_text = "slept"
                elif name == "big":
                    expect_len = rng.randint(1, 6) * 1024 * 1024 + rng.randint(0, 4096)
                    result = await self.s.call_tool("big", {"bytes": expect_len})
                elif name == "huge":
                    result = await self.s.call_tool("big", {"bytes": MAX_MESSAGE + rng.randint(1, 2 * 1024 * 1024)})
                elif name == "hang":
                    result = await self.s.call_tool("hang", {})
                elif name in ("cancel_sleep", "cancel_hang"):
                    tool, args = ("sleep", {"ms": 5000}) if name == "cancel_sleep" else ("hang", {})
                    # Below the smallest idle_timeout_ms, so the client's cancel comes first.
                    with anyio.move_on_after(rng.uniform(0.02, 0.8)) as scope:
                        result = await self.s.call_tool(tool, args)
                    if scope.cancelled_caught:
                        outcome = "cancelled"
                elif name == "progress":

                    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                        run.progress_notes += 1

                    result = await self.s.call_tool(
                        "progress",
                        {"steps": rng.randint(3, 6), "interval_ms": 300},
                        progress_callback=on_progress,
                    )
                    expect_text = "done"
                elif name == "noise":
                    result = await self.s.call_tool("noise", {"lines": rng.randint(1, 50)})
                    expect_text = "after noise"
                elif name == "burst":
                    burst_n = rng.randint(50, 500)
                    run.burst_expected_all += burst_n
                    result = await self.s.call_tool("burst", {"n": burst_n})
                    expect_text = "burst done"
                elif name == "client_burst":
                    async with anyio.create_task_group() as tg:
                        for _ in range(rng.randint(20, 60)):
                            tg.start_soon(self.op, "burst_echo")
                    return
                elif name == "crash":
                    result = await self.s.call_tool("crash", {"code": rng.choice([1, 3, 42])})
                elif name == "invalid_utf8":
                    result = await self.s.call_tool("invalid_utf8", {})
                elif name == "partial_then_exit":
                    result = await self.s.call_tool("partial_then_exit", {})
                elif name == "sample":
                    result = await self.s.call_tool("sample", {})
                elif name == "ping":
                    await self.s.send_ping()
                elif name == "list_tools":
                    result = await self.s.list_tools()
                    names = {t.name for t in result.tools}
                    if "echo" not in names:
                        run.violation("wrong_answer", f"{self.tag}: tools/list without echo: {sorted(names)}")
                    result = None
                if outcome == "ok":
                    if name in NEVER_OK:
                        run.violation("wrong_answer", f"{self.tag}: {name} succeeded: {str(result)[:200]}")
                    text = first_text(result) if result is not None else None
                    if getattr(result, "is_error", False):
                        outcome = "tool_error"
                    elif expect_text is not None and text != expect_text:
                        run.violation(
                            "wrong_answer", f"{self.tag}: {name} answered {str(text)[:80]!r}, not {expect_text[:80]!r}"
                        )
                    elif expect_len is not None and (text is None or len(text) != expect_len):
                        run.violation(
                            "wrong_answer", f"{self.tag}: big of {expect_len} B came back with {len(text or '')} B"
                        )
                    elif name == "sample" and not (text or "").startswith("client said"):
                        run.violation("wrong_answer", f"{self.tag}: sample answered {text!r}")
                    if name == "burst" and outcome == "ok":
                        run.burst_expected_ok += burst_n
        except TimeoutError:
            outcome = "stuck"
            run.violation("stuck", f"{self.tag}: {name} got no answer within {GUARD_S:.0f} s")
        except MCPError as e:
            outcome = classify(e)
            if outcome == "connection_closed":
                run.violation("connection_closed", f"{self.tag}: {name}: the bridge closed the connection")
            if outcome == "timeout" and isinstance(e.data, dict):
                limit_ms = e.data.get("limit_ms")
        if name == "hang" and outcome == "timeout" and isinstance(limit_ms, int):
            run.hang_limits.append((self.tag, t0, now(), limit_ms))
        run.outcomes[(name, outcome)] += 1


# ---------------------------------------------------------------------------------------------
# Sessions


def config_text(idle: int | None) -> str:
    value = str(idle) if idle is not None else '"soon"'  # an invalid edit, refused by the bridges
    return (
        "# written by tests/soak/soak.py\n"
        "[defaults]\n"
        f"idle_timeout_ms = {value}\n"
        "max_timeout_ms = 30000\n"
        "startup_timeout_ms = 10000\n"
        f"max_message_bytes = {MAX_MESSAGE}\n"
        f"retries = {RETRIES}\n"
        "backoff_ms = 50\n"
        "max_backoff_ms = 1000\n"
        "circuit_failures = 6\n"
        "circuit_cooldown_ms = 1500\n"
    )


def write_config(run: Run, idle: int | None, rng: random.Random) -> None:
    text = config_text(idle)
    if rng.random() < 0.7:  # an editor's save: a new file renamed over the old one
        tmp = run.config.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, run.config)
    else:  # rewritten in place
        with open(run.config, "w") as f:
            f.write(text)
    run.reloads.append((now(), idle))


def find_bridge(tag: str) -> int | None:
    mark = f"{TAG_ENV}={tag}".encode()
    me = os.getpid()
    for pid in live_pids():
        st = proc_stat(pid)
        if st and st[1] == me and mark in proc_environ(pid):
            return pid
    return None


async def session(
    run: Run,
    tag: str,
    rng: random.Random,
    until: float,
    long_lived: bool,
    pinned: int | None,
    flags: list[str] | None = None,
) -> None:
    """Opens one bridge, runs the call mix through it until UNTIL, closes it, checks for orphans."""
    sets: list[str] = []
    if pinned is not None:
        sets += ["--set", f"idle_timeout_ms={pinned}"]
    if flags is None and long_lived:
        flags = []
    elif flags is None:
        flags = []
        if rng.random() < 0.5:
            # At most `retries` crashes before the start that answers: one more and the bridge
            # gives up with W-SPAWN-EXITED by design (src-tauri/cli/tests/integration/spawn.rs).
            crashes = rng.randint(1, RETRIES)
            flags += ["--start-count", str(run.tmp / f"{tag}.starts"), "--crash-until", str(crashes)]
        if rng.random() < 0.4:
            flags.append("--grandchild")
        if rng.random() < 0.3:
            flags.append("--banner")
        if rng.random() < 0.3:
            flags += ["--slow-start-ms", str(rng.randint(100, 800))]
    server = f"soak-{tag}"
    params = StdioServerParameters(
        command=str(run.warden),
        args=["bridge", "--server", server, *sets, "--", str(run.fake), *flags],
        env={
            "WARDEN_STATE_DIR": str(run.state_dir),
            "WARDEN_CONFIG": str(run.config),
            # No supervisor: the soak is about the bridge alone.
            "WARDEN_SOCKET": str(run.tmp / "no-supervisor.sock"),
            RUN_ENV: run.run_id,
            TAG_ENV: tag,
        },
    )
    wire = run.wires.setdefault(tag, Wire())
    run.sessions_opened += 1
    print(f"soak: session {tag} opens ({'long-lived' if long_lived else 'churn'}{' ' + ' '.join(flags) if flags else ''})",
          flush=True)
    abrupt = not long_lived and rng.random() < 0.3
    pid: int | None = None
    try:
        pid = await drive(run, tag, rng, until, params, wire, pinned, abrupt)
    except Exception as e:  # noqa: BLE001 - any failure of a session is reported, the run goes on
        run.violation("session_failed", f"{tag}: {type(e).__name__}: {flatten(e)[:300]}")
        pid = run.bridge_pids.get(tag)
    if pid is not None:
        st = proc_stat(pid)
        if st:
            run.cpu[tag] = st[2]
        gone = await wait_gone(run, {tag: pid})
        if gone:
            run.orphans_after_close += len(gone)
            for p, what in gone:
                run.violation("orphan", f"{tag}: {ORPHAN_GRACE_S:.0f} s after the session closed, pid {p} {what}")
                kill(p)
    check_wire(run, tag, wire, abrupt)
    print(f"soak: session {tag} closed ({len(wire.sent)} requests)", flush=True)


def flatten(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(flatten(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


async def guarded(run: Run, tag: str, what: str, step: Any) -> Any:
    """Awaits a step of the session itself (initialize, the last ping): an error is an outcome,
    no answer within GUARD_S a violation."""
    try:
        with anyio.fail_after(GUARD_S):
            return await step
    except TimeoutError:
        run.violation("stuck", f"{tag}: {what} got no answer within {GUARD_S:.0f} s")
    except MCPError as e:
        kind = classify(e)
        run.outcomes[(what, kind)] += 1
        if kind == "connection_closed":
            run.violation("connection_closed", f"{tag}: {what}: the bridge closed the connection")
    return None


async def drive(
    run: Run,
    tag: str,
    rng: random.Random,
    until: float,
    params: StdioServerParameters,
    wire: Wire,
    pinned: int | None,
    abrupt: bool,
) -> int | None:
    """The session itself; returns the bridge's pid."""
    with open(run.tmp / f"{tag}.stderr", "w") as errlog:
        await run.config_lock.acquire()
        held = True

        def started() -> None:
            nonlocal held
            if held:
                held = False
                run.config_lock.release()

        try:
            return await connected(run, tag, rng, until, params, wire, pinned, abrupt, errlog, started)
        finally:
            started()


async def connected(
    # What drive() runs once it holds the config lock; STARTED releases it.
    run: Run,
    tag: str,
    rng: random.Random,
    until: float,
    params: StdioServerParameters,
    wire: Wire,
    pinned: int | None,
    abrupt: bool,
    errlog: Any,
    started: Any,
) -> int | None:
    pid: int | None = None
    async with stdio_client(params, errlog=errlog) as (read, write):
        tap = Tap(wire, read, write)
        async with anyio.create_task_group() as taps:
            taps.start_soon(tap.pump_in)
            taps.start_soon(tap.pump_out)

            async def logging_cb(params: types.LoggingMessageNotificationParams) -> None:
                pass

            async with ClientSession(tap.in_recv, tap.out_send, logging_callback=logging_cb) as s:
                # Found before initialize too, so a bridge that never answers it is still
                # checked for leftovers (right after the spawn it may not have exec'd yet).
                pid = find_bridge(tag)
                if pid is not None:
                    run.bridge_pids[tag] = pid
                try:
                    if await guarded(run, tag, "initialize", s.initialize()) is not None:
                        run.outcomes[("initialize", "ok")] += 1
                finally:
                    started()
                pid = pid or find_bridge(tag)
                if pid is None:
                    run.violation("setup", f"{tag}: bridge process not found")
                else:
                    run.bridge_pids[tag] = pid
                client = Client(run, tag, s, rng, pinned)
                limit = anyio.Semaphore(6)
                async with anyio.create_task_group() as calls:

                    async def one(op: str) -> None:
                        try:
                            await client.op(op)
                        finally:
                            limit.release()

                    ops, weights = list(MIX), list(MIX.values())
                    while now() < until and not run.stop:
                        await limit.acquire()
                        calls.start_soon(one, rng.choices(ops, weights)[0])
                        await anyio.sleep(rng.uniform(0, 0.15))
                    if abrupt:
                        # The client goes away with calls in flight (they count as cancelled).
                        run.sessions_closed_busy += 1
                        calls.cancel_scope.cancel()
                if not abrupt:
                    # A last round trip, so an answer that was still on its way is counted.
                    if await guarded(run, tag, "last ping", s.send_ping()) is not None:
                        run.outcomes[("last ping", "ok")] += 1
            taps.cancel_scope.cancel()
    return pid


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def wait_gone(run: Run, bridges: dict[str, int]) -> list[tuple[int, str]]:
    """Leftovers of BRIDGES still alive after ORPHAN_GRACE_S (polled: other processes' exits
    cannot be awaited from here)."""
    deadline = now() + ORPHAN_GRACE_S
    while True:
        found = [x for x in leftovers_of(run, bridges)]
        if not found or now() > deadline:
            return found
        await anyio.sleep(0.1)


def leftovers_of(run: Run, bridges: dict[str, int]) -> list[tuple[int, str]]:
    tags = {f"{TAG_ENV}={t}".encode() for t in bridges}
    out = []
    for pid, what in leftovers(run, bridges):
        env = proc_environ(pid)
        if any(t in env for t in tags) or "WARDEN_SESSION" in what or "child of" in what:
            out.append((pid, what))
    return out


def check_wire(run: Run, tag: str, wire: Wire, abrupt: bool) -> None:
    for key, method in wire.sent.items():
        n = wire.answers.get(key, 0)
        if n > 1:
            run.violation("duplicate_answer", f"{tag}: request {key} ({method}) answered {n} times: "
                          + "; ".join(wire.described.get(key, [])))
        elif n == 0 and key not in wire.cancelled:
            run.violation("missing_answer", f"{tag}: request {key} ({method}) never answered")
    for key in wire.unknown:
        run.violation("unknown_id", f"{tag}: an answer for id {key}, which the client never sent")
    for key in wire.type_changed:
        run.violation("id_type_changed", f"{tag}: the answer to {key} changed the id's JSON type")
    if wire.null_id_errors:
        run.violation("null_id_error", f"{tag}: {wire.null_id_errors} errors with id null")


# ---------------------------------------------------------------------------------------------
# Background: reloads, memory


async def reloader(run: Run, rng: random.Random) -> None:
    while not run.stop:
        await anyio.sleep(rng.uniform(5, 14))
        if run.stop:
            return
        async with run.config_lock:
            if rng.random() < 0.15:
                write_config(run, None, rng)
                print("soak: config.toml made invalid (running bridges must keep their last good settings)",
                      flush=True)
                await anyio.sleep(rng.uniform(1, 3))
            idle = rng.choice(IDLE_CHOICES)
            write_config(run, idle, rng)
        print(f"soak: config.toml: idle_timeout_ms = {idle}", flush=True)


async def sampler(run: Run) -> None:
    last_print = now()
    while not run.stop:
        t = now() - run.started
        for tag in list(run.long_lived):
            pid = run.bridge_pids.get(tag)
            if pid is None:
                continue
            kib = proc_rss_kib(pid)
            if kib is not None:
                run.rss[tag].append((t, kib))
            st = proc_stat(pid)
            if st:
                run.cpu[tag] = st[2]
        if now() - last_print >= 30:
            last_print = now()
            done = sum(run.outcomes.values())
            mem = ", ".join(f"{t} {run.rss[t][-1][1] / 1024:.1f} MiB" for t in run.long_lived if run.rss.get(t))
            print(f"soak: {t:6.0f}s  {done} calls done, {sum(run.violation_count.values())} violations; RSS {mem}",
                  flush=True)
        await anyio.sleep(1.0)


async def churn(run: Run, rng: random.Random, first: int) -> None:
    n = first
    while now() < run.deadline - 8 and not run.stop:
        life = rng.uniform(15, 45)
        until = min(now() + life, run.deadline)
        await session(run, f"c{n}", random.Random(rng.random()), until, long_lived=False, pinned=None)
        n += 1


async def main_async(run: Run) -> None:
    rng = random.Random(run.args.seed)
    write_config(run, 1500, rng)
    run.reloads.clear()
    run.reloads.append((now(), 1500))
    run.started = now()
    run.deadline = run.started + run.args.minutes * 60
    async with anyio.create_task_group() as tg:
        tg.start_soon(sampler, run)
        tg.start_soon(reloader, run, random.Random(rng.random()))
        async with anyio.create_task_group() as work:
            for i in range(run.args.sessions):
                tag = f"L{i + 1}"
                run.long_lived.append(tag)
                pinned = PINNED_IDLE if i == 2 else None
                work.start_soon(session, run, tag, random.Random(rng.random()), run.deadline, True, pinned)
            for j in range(run.args.churn):
                work.start_soon(churn, run, random.Random(rng.random()), 1000 * (j + 1))
        run.stop = True
        tg.cancel_scope.cancel()


# ---------------------------------------------------------------------------------------------
# Checks after the run, and the report


def check_reloads(run: Run) -> tuple[int, int]:
    """Hangs that started RELOAD_SETTLE_S after the last edit and ended before the next one
    must time out at the edited idle_timeout_ms (or the --set pin). Returns (checked, skipped)."""
    checked = skipped = 0
    times = [t for t, _ in run.reloads]
    for tag, t0, t1, limit in run.hang_limits:
        before = [(t, v) for t, v in run.reloads if t <= t0]
        if not before or t0 - before[-1][0] < RELOAD_SETTLE_S or any(t0 < t <= t1 for t in times):
            skipped += 1
            continue
        valid = [v for _, v in before if v is not None]
        want = PINNED_IDLE if tag == "L3" else valid[-1]
        checked += 1
        if limit != want:
            run.violation("reload_not_applied", f"{tag}: a hang timed out at {limit} ms, config says {want} ms")
    return checked, skipped


def memory_rows(run: Run) -> list[dict[str, Any]]:
    rows = []
    for tag in run.long_lived:
        samples = run.rss.get(tag, [])
        if len(samples) < 8:
            continue
        ts = [t for t, _ in samples]
        mib = [k / 1024 for _, k in samples]
        q = len(mib) // 4
        q2 = statistics.median(mib[q : 2 * q])
        q4 = statistics.median(mib[3 * q :])
        tm = statistics.fmean(ts)
        mm = statistics.fmean(mib)
        var = sum((t - tm) ** 2 for t in ts)
        slope = sum((t - tm) * (m - mm) for t, m in zip(ts, mib, strict=True)) / var * 60 if var else 0.0
        rows.append(
            {
                "tag": tag,
                "samples": len(mib),
                "first": mib[0],
                "max": max(mib),
                "last": mib[-1],
                "q2": q2,
                "q4": q4,
                "growth": q4 - q2,
                "slope": slope,
                "cpu": run.cpu.get(tag, 0.0),
                "series": samples,
            }
        )
    return rows


def event_counts(run: Run) -> tuple[Counter[str], Counter[str]]:
    """Event kinds over all bridges' logs, and the distinct reasons of refused reloads."""
    counts: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    logs = run.state_dir / "logs"
    for path in sorted(logs.glob("*.jsonl*")) if logs.exists() else []:
        if ".debug." in path.name:
            continue
        for line in path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                counts["(unreadable line)"] += 1
                continue
            counts[event.get("kind", "?")] += 1
            if event.get("kind") == "config_rejected":
                rejected[str(event.get("detail", ""))[:200]] += 1
    return counts, rejected


def panics(run: Run) -> list[str]:
    found = []
    for path in sorted(run.tmp.glob("*.stderr")):
        text = path.read_text(errors="replace")
        if "panicked" in text:
            line = next(ln for ln in text.splitlines() if "panicked" in ln)
            found.append(f"{path.stem}: {line[:300]}")
    return found


def machine() -> list[str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    try:
        import importlib.metadata as md

        sdk = md.version("mcp")
    except Exception:  # noqa: BLE001
        sdk = "?"
    return [
        f"Machine: {platform.system()} {platform.release()} ({platform.machine()}), {os.cpu_count()} CPUs: {cpu}, "
        f"{mem} RAM; load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"Client: Python {platform.python_version()}, MCP SDK (`mcp`) {sdk}",
    ]


def git_rev() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def timeline(rows: list[dict[str, Any]], minutes: float) -> list[str]:
    """RSS per bridge at (up to) 12 points in time."""
    if not rows:
        return []
    points = 12
    span = max(r["series"][-1][0] for r in rows)
    head = "| t | " + " | ".join(r["tag"] for r in rows) + " |"
    out = [head, "|---" * (len(rows) + 1) + "|"]
    for i in range(points + 1):
        t = span * i / points
        cells = []
        for r in rows:
            near = min(r["series"], key=lambda s: abs(s[0] - t))
            cells.append(f"{near[1] / 1024:.1f}")
        out.append(f"| {t:.0f} s | " + " | ".join(cells) + " |")
    return out


def report(run: Run, elapsed: float, command: str, rows: list[dict[str, Any]], checked: int, skipped: int,
           final_orphans: list[tuple[int, str]], events: tuple[Counter[str], Counter[str]],
           panic_lines: list[str]) -> str:
    events, rejected = events
    a = run.args
    verdict = "PASS" if not run.violation_count else "FAIL"
    total_requests = sum(len(w.sent) for w in run.wires.values())
    total_answers = sum(sum(w.answers.values()) for w in run.wires.values())
    total_cancelled = sum(len(w.cancelled) for w in run.wires.values())
    answered_cancelled = sum(1 for w in run.wires.values() for k in w.cancelled if w.answers.get(k))
    methods: Counter[str] = Counter(m for w in run.wires.values() for m in w.sent.values())
    ops = sorted({op for op, _ in run.outcomes}, key=lambda o: -sum(n for (p, _), n in run.outcomes.items() if p == o))
    kinds = sorted({k for _, k in run.outcomes}, key=lambda k: -sum(n for (_, kk), n in run.outcomes.items() if kk == k))
    L: list[str] = []
    L.append("# Soak: randomized faults under the Python SDK client")
    L.append("")
    L.append("<!-- Generated by scripts/soak.sh (tests/soak/soak.py); do not edit by hand. -->")
    L.append("")
    L.append(f"**Verdict: {verdict}** — {total_requests} requests over {elapsed / 60:.1f} minutes, "
             f"{sum(run.violation_count.values())} violations.")
    L.append("")
    L.append("## Run")
    L.append("")
    L.append(f"- Command: `{command}`")
    L.append(f"- Seed: `{a.seed}` (fixes each session's sequence of calls and the reloads; timing, and so the "
             "interleaving of faults, differs from run to run)")
    L.append(f"- Duration: {elapsed:.0f} s (planned {a.minutes * 60:.0f} s)")
    L.append(f"- Warden: `{run.warden}` ({'release' if '/release/' in str(run.warden) else 'debug'} build), "
             f"fake server `{run.fake.name}`, commit `{run.commit}`")
    for m in machine():
        L.append(f"- {m}")
    L.append(f"- Sessions: {a.sessions} long-lived (one bridge each for the whole run; L3 pins "
             f"`--set idle_timeout_ms={PINNED_IDLE}`) and {a.churn} churn worker(s) that opened "
             f"{run.sessions_opened - a.sessions} short sessions of 15-45 s (some with `--crash-until 1..{RETRIES}`, "
             f"`--grandchild`, `--banner`, `--slow-start-ms`; {run.sessions_closed_busy} closed with calls in flight). "
             "Up to 6 calls in flight per session, plus client bursts of 20-60.")
    L.append(f"- config.toml (hot-reloaded): `max_message_bytes = {MAX_MESSAGE}`, `max_timeout_ms = 30000`, "
             f"`startup_timeout_ms = 10000`, `retries = {RETRIES}`, `backoff_ms = 50`, `max_backoff_ms = 1000`, "
             "`circuit_failures = 6`, `circuit_cooldown_ms = 1500`; `idle_timeout_ms` rewritten "
             f"{sum(1 for _, v in run.reloads if v is not None) - 1} times among {list(IDLE_CHOICES)}, and "
             f"{sum(1 for _, v in run.reloads if v is None)} times made invalid for 1-3 s.")
    L.append("")
    L.append("## Checks")
    L.append("")

    def row(name: str, ok: bool, text: str) -> None:
        L.append(f"| {name} | {'ok' if ok else '**FAIL**'} | {text} |")

    vc = run.violation_count
    L.append("| check | result | detail |")
    L.append("|---|---|---|")
    row("exactly one answer", not (vc["missing_answer"] or vc["duplicate_answer"] or vc["unknown_id"]
                                    or vc["null_id_error"] or vc["id_type_changed"]),
        f"{total_requests} requests on the wire, {total_answers} answers; {total_cancelled} cancelled by the client "
        f"({answered_cancelled} of them still answered once, which the race allows); missing "
        f"{vc['missing_answer']}, duplicate {vc['duplicate_answer']}, unknown id {vc['unknown_id']}, "
        f"id null {vc['null_id_error']}, id type changed {vc['id_type_changed']}")
    row("answers match calls", not vc["wrong_answer"],
        f"{vc['wrong_answer']} wrong (echo text, result size, a fault that 'succeeded', tools/list)")
    notes = sum(w.burst_notes for w in run.wires.values())
    row("burst notifications", not vc["burst_notifications"],
        f"{notes} received; the bursts that were answered wrote {run.burst_expected_ok}, all bursts at most "
        f"{run.burst_expected_all}")
    row("no stuck request", not vc["stuck"], f"{vc['stuck']} without an answer after {GUARD_S:.0f} s")
    row("bridge never closes on the client", not vc["connection_closed"], f"{vc['connection_closed']} connection losses")
    row("no panic", not panic_lines, f"{len(panic_lines)} in the bridges' stderr")
    row("hot reload applies", not vc["reload_not_applied"],
        f"{checked} hang timeouts checked against the config of their time (L3: the `--set` pin), "
        f"{skipped} skipped (too close to an edit); {vc['reload_not_applied']} wrong")
    valid = sum(1 for _, v in run.reloads if v is not None)
    row("one reload per edit", not vc["reload_storm"],
        f"{events['config_reloaded']} `config_reloaded` for {valid - 1} edits, {events['config_rejected']} "
        f"`config_rejected` for {len(run.reloads) - valid} invalid ones, with up to {a.sessions + a.churn} bridges "
        "running (at most 2 per edit and bridge allowed)")
    row("no orphans", not (vc["orphan"] or vc["orphan_at_end"]),
        f"{run.orphans_after_close} left {ORPHAN_GRACE_S:.0f} s after their session closed, "
        f"{len(final_orphans)} at the end (run marker, WARDEN_SESSION of any of the "
        f"{len(run.bridge_pids)} bridges, or a bridge as parent)")
    mem_ok = not vc["memory"]
    row("memory flat", mem_ok,
        f"median RSS of the last quarter within {FLAT_MIB:.0f} MiB of the second quarter's, per long-lived bridge")
    row("every session ran to its end", not vc["session_failed"], f"{vc['session_failed']} failed")
    if vc["setup"]:
        row("setup", False, f"{vc['setup']} problems")
    L.append("")
    L.append("## Memory of the long-lived bridges (RSS from /proc, sampled every second)")
    L.append("")
    L.append("| bridge | samples | first MiB | max MiB | last MiB | 2nd-quarter median | last-quarter median | "
             "growth MiB | slope MiB/min | CPU s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        L.append(f"| {r['tag']} | {r['samples']} | {r['first']:.1f} | {r['max']:.1f} | {r['last']:.1f} | "
                 f"{r['q2']:.1f} | {r['q4']:.1f} | {r['growth']:+.1f} | {r['slope']:+.3f} | {r['cpu']:.1f} |")
    L.append("")
    L.extend(timeline(rows, a.minutes))
    L.append("")
    L.append("## Calls and their outcomes")
    L.append("")
    L.append("Outcome kinds are the bridge's `data.kind` (`error <code>` for errors without one; `cancelled`: the "
             "client gave up first, on purpose). The expected outcome of each call is in bold; the others come "
             "from faults running at the same time in the same session (a crash fails the calls that cannot be "
             "re-sent, a reload changes the idle limit, an open circuit fails calls at once).")
    L.append("")
    L.append("| call | total | " + " | ".join(kinds) + " |")
    L.append("|---|---|" + "---|" * len(kinds))
    for op in ops:
        cells = []
        for k in kinds:
            n = run.outcomes.get((op, k), 0)
            cells.append("" if not n else (f"**{n}**" if EXPECTED.get(op) == k else str(n)))
        total = sum(n for (p, _), n in run.outcomes.items() if p == op)
        L.append(f"| {op} | {total} | " + " | ".join(cells) + " |")
    total_ops = sum(run.outcomes.values())
    L.append(f"| all | {total_ops} | " + " | ".join(
        str(sum(n for (_, kk), n in run.outcomes.items() if kk == k)) for k in kinds) + " |")
    L.append("")
    L.append("Requests on the wire by method: " + ", ".join(f"{m} {n}" for m, n in methods.most_common()) + ".")
    L.append(f" Progress notifications received: {run.progress_notes}; server cancellation echoes: "
             f"{sum(w.cancel_echoes for w in run.wires.values())}; `tools/list_changed`: "
             f"{sum(w.list_changed for w in run.wires.values())}; lines the SDK could not parse (a relayed line cut "
             f"at max_message_bytes): {sum(w.broken_lines for w in run.wires.values())}.")
    L.append("")
    L.append("## The bridges' event logs")
    L.append("")
    L.append(", ".join(f"`{k}` {n}" for k, n in events.most_common()) + ".")
    if rejected:
        L.append("")
        L.append("Why reloads were refused (the bridges kept their last good settings):")
        L.append("")
        for detail, n in rejected.most_common(5):
            L.append(f"- {n} × {detail}")
    L.append("")
    L.append("## Violations")
    L.append("")
    if not run.violations and not final_orphans:
        L.append("None.")
    for v in run.violations:
        L.append(f"- {v}")
    for line in panic_lines:
        L.append(f"- panic: {line}")
    L.append("")
    L.append("## How to read and rerun")
    L.append("")
    L.append("`scripts/soak.sh --minutes N` (this report), `scripts/soak.sh --ci` (a short profile, report under "
             "target/soak/), `--seed S` to replay a sequence of calls. The driver is tests/soak/soak.py; its "
             "docstring lists every check. Requests are counted between the SDK session and its transport, so an "
             "answer the SDK would drop (a duplicate, an unknown id) still counts.")
    L.append("")
    return "\n".join(L)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--sessions", type=int, default=3, help="long-lived sessions (memory is sampled on these)")
    p.add_argument("--churn", type=int, default=1, help="workers opening short sessions one after another")
    p.add_argument("--report", type=Path, required=True)
    p.add_argument("--command", default=None, help="the command line shown in the report")
    a = p.parse_args()
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 31)
    warden = Path(os.environ.get("WARDEN_BIN") or REPO_ROOT / "target/debug/warden")
    fake = Path(os.environ.get("FAKE_SERVER_BIN") or warden.parent / "mcp-fake-server")
    for what, path in (("WARDEN_BIN", warden), ("FAKE_SERVER_BIN", fake)):
        if not (path.is_file() and os.access(path, os.X_OK)):
            print(f"soak: {path} is not an executable ({what}); build with `cargo build -p warden-cli`", file=sys.stderr)
            return 2
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="warden-soak-") as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "config").mkdir()
        (tmp / "state").mkdir()
        run = Run(args=a, tmp=tmp, config=tmp / "config" / "config.toml", state_dir=tmp / "state",
                  warden=warden.resolve(), fake=fake.resolve(), run_id=f"{os.getpid()}-{a.seed}")
        print(f"soak: seed {a.seed}, {a.minutes:g} min, {a.sessions} long-lived sessions + {a.churn} churn; "
              f"warden {run.warden}; temp {tmp}", flush=True)
        run.commit = os.environ.get("SOAK_COMMIT") or git_rev()
        t0 = now()
        try:
            anyio.run(main_async, run)
        except KeyboardInterrupt:
            run.violation("interrupted", "the run was interrupted")
        elapsed = now() - t0
        # The end: every bridge closed, nothing of theirs left.
        final = leftovers(run, run.bridge_pids)
        for pid, what in final:
            run.violation("orphan_at_end", f"pid {pid} {what}")
            kill(pid)
        checked, skipped = check_reloads(run)
        events = event_counts(run)
        rows = memory_rows(run)
        for r in rows:
            if r["growth"] > FLAT_MIB:
                run.violation("memory", f"{r['tag']}: RSS grew {r['growth']:.1f} MiB from the second to the last "
                                        f"quarter (limit {FLAT_MIB:.0f})")
        # One edit is one reload per bridge (two when a bridge catches a file half-written
        # in place): a storm of reloads or refusals is a violation.
        bridges = a.sessions + a.churn
        for kind, writes in (
            ("config_reloaded", sum(1 for _, v in run.reloads if v is not None)),
            ("config_rejected", sum(1 for _, v in run.reloads if v is None)),
        ):
            if events[0][kind] > 2 * writes * bridges:
                run.violation("reload_storm", f"{events[0][kind]} {kind} events for {writes} edits and at most "
                                              f"{bridges} bridges at a time")
        notes = sum(w.burst_notes for w in run.wires.values())
        if not run.burst_expected_ok <= notes <= run.burst_expected_all:
            run.violation("burst_notifications",
                          f"{notes} received, want {run.burst_expected_ok}..{run.burst_expected_all}")
        panic_lines = panics(run)
        for line in panic_lines:
            run.violation("panic", line)
        text = report(run, elapsed, a.command or " ".join(sys.argv), rows, checked, skipped, final, events,
                      panic_lines)
    a.report.parent.mkdir(parents=True, exist_ok=True)
    a.report.write_text(text)
    total = sum(run.violation_count.values())
    print(f"soak: report written to {a.report}", flush=True)
    if total:
        print(f"soak: FAIL — {total} violations: {dict(run.violation_count)}", file=sys.stderr)
        return 1
    print(f"soak: PASS — {sum(run.outcomes.values())} calls, no violation", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
