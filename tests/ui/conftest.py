"""The real tray app, end to end, under Xvfb: `warden-app` started as from the desktop entry
becomes the host (supervisor, tray) and starts the window, a second `warden-app --window`
process, through tauri-plugin-shell; tauri-driver and WebKitWebDriver drive that window (it
inherits their inspector address). A temporary HOME holds an IDE config, and real bridges in
front of the fake server are used by the real Python MCP SDK client.

Run (scripts/test.sh does): xvfb-run -a .venv/bin/python -m pytest -q tests/ui
Needs: target/debug/{warden-app,warden,mcp-fake-server}, tauri-driver on PATH (or
TAURI_DRIVER), WebKitWebDriver (Debian: webkit2gtk-driver). Screenshots of every page go to
target/ui-screenshots/.

The tests share one app for the whole run (the session-scoped `world`), and run in the order
of MODULES: later ones build on what earlier ones left (a bridged server, a tray turned red),
and test_host.py kills and restarts the host, so it goes last.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.options import ArgOptions

from support import REPO, TARGET, SHOTS, free_port, need, World, Client, SECRET, private_keychain, registry_documents, serve_registry, ours, cmdline, hosts

MODULES = ["test_servers_page.py", "test_window.py", "test_server_page.py", "test_clients_page.py", "test_approvals.py", "test_manage_page.py", "test_projects_page.py", "test_remote_page.py", "test_host.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs the modules in MODULES' order, each module's tests in their own order."""
    items.sort(key=lambda item: MODULES.index(item.path.name) if item.path.name in MODULES else len(MODULES))

@pytest.fixture(scope="session")
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
        # A sign-in's browser: follows the authorization server's redirect (loopback only).
        BROWSER=f"{sys.executable} {REPO / 'tests' / 'e2e' / 'browser_standin.py'} {root / 'browser.log'}",
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


@pytest.fixture(scope="session")
def client(world: World) -> Iterator[Client]:
    c = Client(world.env, "demo", world.config)
    yield c
    c.close()
