"""A server's page: its tools and last hour, a tool changed since pinned, restart, timeline,
debug and limits, fallback, the sandbox section and the tool policy section."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support import REPO, TARGET, World, Client, badge, tray, list_tools_through_a_bridge, policy_row, server_table


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


def test_the_sandbox_section_says_what_stays_read_only_in_a_grant_and_warns_of_a_git_work_tree(world: World) -> None:
    """Issue 43: a server granted a git work tree (`.git/config`, `.vscode/`) and a plain
    folder. The sandbox section lists the names that stay read-only in every grant, those the
    work tree holds, and warns that it is a git work tree; the plain folder gets neither. The
    home typed as a grant is refused, and config.toml keeps its grants."""
    project = world.root / "gitbox-project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text("{}\n")
    plain = world.root / "gitbox-notes"
    plain.mkdir()
    with world.config.open("a") as f:
        f.write(f'\n[servers.gitbox]\nsandbox = "on"\nsandbox_write = ["{project}", "{plain}"]\n')
    world.go("#/servers/gitbox")
    world.wait("the git warning", lambda: f"{project} is a git work tree" in world.find("grant-git").text)
    assert "its .git config, hooks and info stay read-only; the server can still commit" in world.find("grant-git").text
    grants = world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="sandbox-grant"]')
    assert [g.get_attribute("data-grant") for g in grants] == [str(project), str(plain)]
    assert len(grants[0].find_elements(By.CSS_SELECTOR, '[data-testid="grant-git"]')) == 1
    read_only = grants[0].find_element(By.CSS_SELECTOR, '[data-testid="grant-read-only"]').text
    assert ".git/config" in read_only and ".git/hooks" in read_only and ".vscode" in read_only, read_only
    assert ".idea" not in read_only, "only what the folder holds"
    assert not grants[1].find_elements(By.CSS_SELECTOR, '[data-testid="grant-git"], [data-testid="grant-read-only"]'), "the plain folder holds none"
    names = world.find("sandbox-read-only-names").text
    assert all(n in names for n in (".git/config", ".git/hooks", ".vscode", ".mcp.json", ".envrc", ".github/workflows")), names
    assert "(other programs run what they hold)" in names
    world.shot("server-sandbox-grants", at="sandbox")

    field = world.find("sandbox-add-folder")
    field.send_keys("~", Keys.ENTER)
    world.wait("the home is refused", lambda: "it is your whole home folder" in world.find("sandbox-error").text)
    assert server_table(world, "gitbox")["sandbox_write"] == [str(project), str(plain)]


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
            return [a for a in json.loads(out.stdout)["pending"] if a["server"] == "remembered"]

        [a] = world.wait("the call is held", held)
        subprocess.run([str(TARGET / "warden"), "approvals", "allow", a["id"], "--always"], env=world.env, check=True, capture_output=True, timeout=20)
        assert json.loads(c.readline()).get("ok") is True
    finally:
        c.close()
    # The server's name and a hash of it (`paths::file_stem`).
    pins = world.root / "state" / "pins" / f"remembered-{hashlib.sha256(b'remembered').hexdigest()[:16]}.json"
    assert "noise" in json.loads(pins.read_text()).get("always", {})
    world.go("#/servers/remembered")
    world.wait("always allowed", lambda: "Always allowed" in policy_row(world, "noise").text)
    world.click("policy-forget-noise")
    world.wait("forgotten", lambda: "Always allowed" not in policy_row(world, "noise").text)
    assert "noise" not in json.loads(pins.read_text()).get("always", {})
    assert "noise" in world.find("policy-note").text
