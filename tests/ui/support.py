"""What the UI tests share: the world they drive (the app, its driver, a temporary HOME with an
IDE config, a registry served on loopback), the Python SDK client through a bridge, and helpers
to read the window and the processes. The fixtures that build them are in conftest.py; each
page's tests are in its own module (test_*.py). See conftest.py for how to run them."""
from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from keychain import private_keychain  # noqa: E402,F401  (tests/keychain.py, shared with tests/e2e)
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
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

    def __init__(self, env: dict[str, str], server: str, config: Path, entry: dict | None = None):
        """Through `warden bridge` in front of the fake server, or as a client's `entry`
        (`command` and `args`) runs it."""
        params = {
            "command": str(TARGET / "warden"),
            "args": ["bridge", "--server", server, "--config", str(config), "--", str(TARGET / "mcp-fake-server")],
            **(entry or {}),
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


REGISTRY_FIXTURES = REPO / "src-tauri" / "registry" / "tests" / "fixtures" / "registry"


def registry_documents() -> list[dict]:
    """The project's own server.json documents (src-tauri/registry/tests/fixtures/registry)."""
    docs = []
    for name in ("notes-server.server.json", "code-indexer.server.json", "calendar-sync.server.json", "ticket-desk.server.json"):
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


def badge(w: World, server: str) -> str:
    return w.driver.find_element(By.CSS_SELECTOR, f'[data-testid="health-{server}"]').get_attribute("data-health")


def tray(w: World) -> str:
    return w.driver.find_element(By.CSS_SELECTOR, '[data-testid="tray-state"]').get_attribute("data-tray")


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


def type_into(w: World, testid: str, text: str) -> None:
    el = w.find(testid)
    el.clear()
    el.send_keys(text)


def policy_row(w: World, tool: str) -> WebElement:
    return w.driver.find_element(By.CSS_SELECTOR, f'[data-testid="policy-row"][data-tool="{tool}"]')


def server_table(w: World, server: str) -> dict:
    import tomllib
    return tomllib.loads(w.config.read_text()).get("servers", {}).get(server, {})


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
