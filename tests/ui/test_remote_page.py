"""A remote server in the window, as a new user meets it (issue 46): added by its URL to two
clients in the Add flow, signed in once from its page (the stand-in `$BROWSER` follows the
authorization server's redirect), used by a client's session, whose health shows live, then
signed out, which revokes the tokens at the server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from support import REPO, Client, World, badge, free_port, type_into

E2E = REPO / "tests" / "e2e"


def test_a_remote_server_is_added_signed_in_once_used_and_signed_out(world: World, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "oauth.log"
    site = subprocess.Popen(
        [sys.executable, str(E2E / "oauth_server.py"), str(port), "--log", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    original = world.ide_file.read_bytes()
    config = world.config.read_bytes()
    # A second client: Claude Code, whose user file is ~/.claude.json.
    claude = world.ide_file.parents[1] / ".claude.json"
    claude.write_text("{}\n")

    def events(kind: str) -> list[dict]:
        lines = log.read_text().splitlines() if log.exists() else []
        return [e for e in map(json.loads, lines) if e["event"] == kind]

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    client = None
    try:
        world.wait("the authorization server listens", listening)
        # The Manage page reads the clients when it opens: after Claude Code's file exists.
        world.go("#/servers")
        world.go("#/manage")
        world.click("add-server")
        world.click("source-url")
        type_into(world, "remote-url-input", url)
        type_into(world, "remote-name", "signin")
        world.click("url-next")
        consent = world.find("consent-url").text
        world.click("review-next")
        world.wait("both clients chosen", lambda: world.find("client-cursor").is_selected() and world.find("client-claude-code").is_selected())
        # The fixture's tools have no annotations, so they count as destructive: not asked about.
        world.click("add-ask-destructive")
        world.click("clients-next")
        world.find("diff")
        world.click("add-write")
        world.wait("written to both", lambda: b'"signin"' in world.ide_file.read_bytes() and b'"signin"' in claude.read_bytes())
        world.click("add-close")
        entries = [json.loads(f.read_text())["mcpServers"]["signin"]["args"] for f in (world.ide_file, claude)]

        world.go("#/servers/signin")
        state = lambda: world.find("signin-state").get_attribute("data-state")  # noqa: E731
        world.wait("needs sign-in", lambda: state() == "none")
        world.click("sign-in")
        world.wait("signed in", lambda: state() == "signed_in", timeout=90)
        entry = json.loads(claude.read_text())["mcpServers"]["signin"]
        client = Client(world.env, "signin", world.config, {"command": entry["command"], "args": entry["args"]})
        me = json.loads(client.call("whoami", {})["text"])
        world.wait("its health live", lambda: badge(world, "signin") == "healthy")
        world.shot("remote-signed-in")
        client.close()
        world.click("sign-out")
        world.wait("signed out", lambda: state() == "none", timeout=60)
        assert (consent, entries, me["scopes"], len(events("token")), [e["kind"] for e in events("revoked")]) == (
            url, [["bridge", "--server", "signin", "--remote", url]] * 2, ["mcp"], 1, ["refresh_token"]
        )
    finally:
        if client is not None:
            client.close()
        world.ide_file.write_bytes(original)
        world.config.write_bytes(config)
        claude.unlink()
        site.terminate()
        site.wait(10)


def test_a_registry_server_with_only_remotes_is_planned_as_its_url(world: World) -> None:
    """The Add flow's registry search: a hosted server's consent screen shows its URL, asks for
    its header's value, and the change sends the header from a variable; nothing is written."""
    original = world.ide_file.read_bytes()
    world.go("#/servers")
    world.go("#/manage")
    world.click("add-server")
    type_into(world, "registry-term", "ticket")
    world.click("registry-search")
    world.click("choose-io.example/ticket-desk")
    type_into(world, "input-MCP_HEADER_AUTHORIZATION", "Bearer t-ui-4411")
    world.click("apply-values")
    url = world.find("consent-url").text
    world.click("review-next")
    world.click("clients-next")
    diff = world.find("diff").text
    world.click("add-close")
    assert (url, "--remote" in diff, "MCP_HEADER_AUTHORIZATION" in diff, "t-ui-4411" in diff, world.ide_file.read_bytes() == original) == (
        "https://eu.tickets.example.com/mcp", True, True, False, True
    )
