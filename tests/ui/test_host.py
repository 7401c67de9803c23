"""The host's life: a server that stays down keeps the tray red, a host that dies is started
again (or given up), closing the window leaves the host at rest, a second start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from selenium.webdriver.common.by import By

from support import TARGET, TITLE, World, Client, ours, badge, Notifications, proc_state, parent, hosts, webkit, windows, running, close_window_like_a_window_manager


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
        [a] = [a for a in json.loads(held.stdout)["pending"] if a["server"] == "plain"]
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
