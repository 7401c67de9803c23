"""The Manage page: add a server (a command, the registry), and remove it as previewed."""

from __future__ import annotations

import json
from selenium.webdriver.common.by import By

from support import TARGET, World, REGISTRY_FIXTURES, type_into


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
