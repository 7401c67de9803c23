"""The Manage page's Projects: a set applied to a project's Cursor file as previewed, and
removed again, the project given back as it was."""

from __future__ import annotations

import json
import subprocess

from support import TARGET, World, type_into


def warden(world: World, *args: str) -> None:
    out = subprocess.run(
        [str(TARGET / "warden"), *args], env=world.env, cwd=world.root, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_set_applied_in_the_window_bridges_its_server_into_the_project_and_remove_gives_the_project_back(world: World) -> None:
    """`[sets.web]` names `search` (the world's Cursor server); Apply to a new project folder for
    Cursor shows the new file's diff and writes nothing until confirmed, then writes the entry
    through the bridge, its key read from the keychain; Remove deletes the file (and the
    folder) it created."""
    config_before = world.config.read_text()
    ide_before = world.ide_file.read_bytes()
    project = world.root / "project-web"
    project.mkdir()
    fake = str(TARGET / "mcp-fake-server")
    # A key written out in an entry is not copied into a project's file (it may be checked in):
    # the key goes to the keychain first, as the Clients page's "move secrets" does.
    wrapped_here = b'"bridge"' not in ide_before
    if wrapped_here:
        warden(world, "clients", "wrap", "--client", "cursor", "--file", str(world.ide_file), "--server", "search", "--move-secrets")
    world.config.write_text(config_before + '\n[sets.web]\nservers = ["search"]\n')
    try:
        world.go("#/servers")  # the Manage page reads the sets again when it opens
        world.go("#/manage")
        world.wait("the set offered", lambda: world.find("set-choice").get_attribute("value") == "web")
        type_into(world, "set-project", str(project))
        world.click("set-client-cursor")
        world.click("set-preview")
        diff = world.find("diff").text
        assert '"search"' in diff and '"bridge"' in diff and "SEARCH_API_KEY" in diff, diff
        assert not (project / ".cursor").exists(), "the preview writes nothing"
        world.shot("projects-apply-preview")
        world.click("confirm-set-apply")
        written = project / ".cursor" / "mcp.json"
        world.wait("the project's Cursor file", written.exists)
        entry = json.loads(written.read_text())["mcpServers"]["search"]
        assert entry["args"] == [
            "bridge", "--server", "search", "--secret-env", "SEARCH_API_KEY", "--", fake, "--banner", "--require-env", "SEARCH_API_KEY",
        ], entry
        world.wait("the project listed with the set", lambda: world.find("remove-set-web").get_attribute("data-dir") == str(project.resolve()))
        world.shot("projects", at="projects")
        world.click("remove-set-web")
        world.find("confirm-set-remove")
        assert "Warden created this file" in world.find("set-preview-dialog").text
        world.click("confirm-set-remove")
        world.wait("the project as it was: empty", lambda: not any(project.iterdir()))
    finally:
        world.config.write_text(config_before)
        if wrapped_here:
            warden(world, "clients", "unwrap", "--client", "cursor", "--file", str(world.ide_file), "--server", "search")
        if world.ide_file.read_bytes() != ide_before:
            world.ide_file.write_bytes(ide_before)
