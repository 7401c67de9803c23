"""Fixtures for the end-to-end tests: `warden bridge` in front of real MCP servers from npm,
driven by the real Python MCP SDK client.

Set up once:  cargo build -p warden-cli          (or point WARDEN_BIN at a warden binary)
              cd tests/e2e && npm ci && python -m pip install -r requirements.txt
Run:          cd tests/e2e && python -m pytest -q
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
from mcp import StdioServerParameters

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parent.parent
NODE_BIN_DIR = E2E_DIR / "node_modules" / ".bin"


@pytest.fixture
def anyio_backend() -> str:
    # The SDK runs on anyio; the tests need only one backend.
    return "asyncio"


@pytest.fixture(scope="session")
def e2e_dir() -> Path:
    return E2E_DIR


@pytest.fixture(scope="session")
def warden_bin() -> Path:
    """The warden binary: $WARDEN_BIN, else <repo>/target/debug/warden."""
    configured = os.environ.get("WARDEN_BIN")
    path = Path(configured) if configured else REPO_ROOT / "target" / "debug" / "warden"
    if not (path.is_file() and os.access(path, os.X_OK)):
        how = "set WARDEN_BIN to an executable warden" if configured else (
            f"build it first: cd {REPO_ROOT} && cargo build -p warden-cli (or set WARDEN_BIN)"
        )
        pytest.fail(f"warden binary not found at {path}: {how}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("`node` is not on PATH; the npm servers need Node.js (20 or newer)", pytrace=False)
    return found


@dataclass(frozen=True)
class NpmBins:
    everything: Path
    ripgrep: Path


@pytest.fixture(scope="session")
def npm_bins(node: str) -> NpmBins:
    """The servers' launchers from tests/e2e/node_modules (pinned by package-lock.json)."""
    bins = NpmBins(
        everything=NODE_BIN_DIR / "mcp-server-everything",
        ripgrep=NODE_BIN_DIR / "mcp-ripgrep",
    )
    missing = [str(p) for p in (bins.everything, bins.ripgrep) if not p.exists()]
    if missing:
        pytest.fail(
            f"npm servers are not installed ({', '.join(missing)} missing): "
            f"run `npm ci` in {E2E_DIR} first",
            pytrace=False,
        )
    return bins


@pytest.fixture(scope="session")
def rg() -> str:
    found = shutil.which("rg")
    if found is None:
        pytest.fail("`rg` (ripgrep) is not on PATH; mcp-ripgrep runs it (apt-get install ripgrep)", pytrace=False)
    return found


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, what: str, seconds: float = 30) -> None:
    """Returns once `proc` (a server the test started) accepts connections on `port`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            assert proc.poll() is None, f"{what} ended before it listened"
            assert time.monotonic() < deadline, f"{what} did not listen within {seconds:.0f} s"
            time.sleep(0.05)


def serve_remote(*flags: str) -> Iterator[str]:
    """Runs remote_server.py (a Streamable HTTP server of the Python SDK) with FLAGS on a
    loopback port and yields its URL until the test ends."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("remote_server.py")), str(port), *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(proc, port, "remote_server.py")
        path = "/sse" if "--sse" in flags else "/mcp"
        if "--sse-path" in flags:
            path = flags[flags.index("--sse-path") + 1]
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        proc.wait(10)


async def refused(params: StdioServerParameters, mode: str = "auto") -> "MCPError":
    """The MCP error that ends a client's first steps (starting and listing the tools) through
    `params`; anyio wraps it in exception groups, which are unwrapped here."""
    import anyio
    from mcp.client import Client
    from mcp.shared.exceptions import MCPError

    try:
        with anyio.fail_after(90):
            async with Client(params, mode=mode) as client:
                await client.list_tools()
    except BaseException as e:  # noqa: BLE001
        pending: list[BaseException] = [e]
        while pending:
            err = pending.pop()
            if isinstance(err, MCPError):
                return err
            pending.extend(getattr(err, "exceptions", ()))
        raise
    raise AssertionError("the client started and listed the tools")


def own_name(server: str) -> str:
    """Warden's name for a server's own files (its log, pins, sandbox folder), as
    `paths::file_stem` makes it: the name made safe (at most 64 characters) and 16 hex digits
    of the SHA-256 of the exact name."""
    safe = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in server).lstrip(".") or "_"
    return f"{safe[:64]}-{hashlib.sha256(server.encode()).hexdigest()[:16]}"


@dataclass
class Warden:
    """Everything one test needs to run bridges in an isolated state directory."""

    binary: Path
    tmp: Path
    state_dir: Path
    config: Path
    stderr_path: Path
    _stderr: IO[str] | None = field(default=None, repr=False)

    @property
    def env(self) -> dict[str, str]:
        """Extra environment for a bridge: own state dir, a config file that does not exist."""
        return {
            "WARDEN_STATE_DIR": str(self.state_dir),
            "WARDEN_CONFIG": str(self.config),
            # No update checks or other network chatter from npm/npx.
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
        }

    @property
    def errlog(self) -> IO[str]:
        """Where the bridge's (and through it the server's) stderr goes; shown on failure."""
        if self._stderr is None:
            self._stderr = open(self.stderr_path, "a", encoding="utf-8")  # noqa: SIM115
        return self._stderr

    def bridge_args(self, server: str, command: list[str], *sets: str) -> list[str]:
        args = ["bridge", "--server", server]
        for item in sets:
            args += ["--set", item]
        return [*args, "--", *command]

    def params(self, server: str, command: list[str], *sets: str, cwd: Path | None = None) -> StdioServerParameters:
        """SDK parameters that launch `warden bridge --server SERVER [--set ...] -- COMMAND`."""
        return StdioServerParameters(
            command=str(self.binary),
            args=self.bridge_args(server, command, *sets),
            env=self.env,
            cwd=str(cwd) if cwd else None,
        )

    def events(self, server: str) -> list[dict[str, Any]]:
        """The bridge's JSONL event log of SERVER. Read it after the session has closed."""
        path = self.state_dir / "logs" / f"{own_name(server)}.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def close(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace") if self.stderr_path.exists() else ""


@pytest.fixture
def warden(warden_bin: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Warden]:
    state = tmp_path / "state"
    state.mkdir()
    cfg_dir = tmp_path / "config"
    cfg_dir.mkdir()
    w = Warden(
        binary=warden_bin,
        tmp=tmp_path,
        state_dir=state,
        config=cfg_dir / "config.toml",  # deliberately absent: built-in defaults plus --set
        stderr_path=tmp_path / "bridge.stderr",
    )
    yield w
    w.close()
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        tail = w.stderr_text()[-4000:]
        logs = state / "logs"
        events = "".join(p.read_text(errors="replace")[-4000:] for p in sorted(logs.glob("*.jsonl"))) if logs.exists() else ""
        sys.stderr.write(f"\n--- bridge stderr (tail) ---\n{tail}\n--- event log (tail) ---\n{events}\n")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # Lets the `warden` fixture see whether the test failed, to print the bridge's stderr.
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report
