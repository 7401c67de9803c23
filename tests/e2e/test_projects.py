"""Project sets as a new user tries them (issue 47): two projects, two sets, three clients
(Claude Code, Cursor, VS Code). Each project's files name only its own set's servers, and the
entries start as each client starts them, in the project's folder, reaching the real npm servers
through the bridge. Removing a set gives the project back as it was."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from conftest import NpmBins, Warden

pytestmark = pytest.mark.anyio

# Where each client reads a project's servers, and under which key.
PROJECT_FILES = {"claude-code": (".mcp.json", "mcpServers"), "cursor": (".cursor/mcp.json", "mcpServers"), "vscode": (".vscode/mcp.json", "servers")}


async def tools_of(entry: dict, cwd: Path, env: dict[str, str], errlog) -> list[str]:  # noqa: ANN001
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env={**env, **entry.get("env", {})}, cwd=str(cwd))
    with anyio.fail_after(60):
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return sorted(t.name for t in (await session.list_tools()).tools)[:1]


async def test_two_projects_two_sets_three_clients_each_project_starts_only_its_own(
    warden: Warden, npm_bins: NpmBins, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # The servers as the user has them already: in Claude Code's user file.
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {
        "everything": {"command": str(npm_bins.everything), "args": ["stdio"]},
        "ripgrep": {"command": str(npm_bins.ripgrep), "args": []},
    }}))
    warden.config.write_text('[sets.web]\nservers = ["everything"]\n\n[sets.search]\nservers = ["ripgrep"]\n')
    web, search = tmp_path / "web-app", tmp_path / "notes"
    web.mkdir()
    search.mkdir()
    env = {**os.environ, **warden.env, "HOME": str(home)}
    env.pop("XDG_CONFIG_HOME", None)

    def warden_run(*args: str) -> None:
        out = subprocess.run([str(warden.binary), *args], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr

    clients = [a for c in PROJECT_FILES for a in ("--client", c)]
    warden_run("sets", "apply", "web", "--project", str(web), *clients)
    warden_run("sets", "apply", "search", "--project", str(search), *clients)

    seen = {}
    for project in (web, search):
        for client, (file, key) in PROJECT_FILES.items():
            servers = json.loads((project / file).read_text())[key]
            (name, entry), = servers.items()
            seen[(project.name, client)] = (name, await tools_of(entry, project, warden.env, warden.errlog))
    warden_run("sets", "remove", "web", "--project", str(web))
    warden_run("sets", "remove", "search", "--project", str(search))
    assert (seen, list(web.iterdir()), list(search.iterdir())) == (
        {
            **{("web-app", c): ("everything", ["echo"]) for c in PROJECT_FILES},
            **{("notes", c): ("ripgrep", ["advanced-search"]) for c in PROJECT_FILES},
        },
        [],
        [],
    )
