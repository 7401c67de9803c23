"""`npx -y` in the sandbox with `sandbox_network = ["@npm"]` (issue 35: "a real npx server
started with @npm installs and runs"), through the real `warden bridge` and the Python SDK
client, touching loopback only: the npm registry is a mirror this test runs on 127.0.0.1,
serving mcp-ripgrep 0.4.0 and each package it depends on, packed (`npm pack`) from
tests/e2e/node_modules (pinned by package-lock.json). The mirror reaches the runner as npm's
own configuration would name it (`npm_config_registry`, or `registry=` in the working folder's
`.npmrc`), which is also what `@npm` adds to the list.

Inside the sandbox the server has no route to the host's 127.0.0.1: whatever the mirror sees
came through the bridge's proxy. With `sandbox_network = []` the same start fails, the mirror
sees nothing and the event log has `network_denied` for it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import anyio
import pytest
from mcp import ClientSession, MCPError, stdio_client

from conftest import E2E_DIR, Warden, own_name

pytestmark = pytest.mark.anyio

PACKAGE = "mcp-ripgrep"
VERSION = "0.4.0"
# What npm needs of a package.json to resolve and install a version.
MANIFEST_KEYS = (
    "name",
    "version",
    "dependencies",
    "optionalDependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "bin",
    "engines",
    "os",
    "cpu",
)
# The npm settings the test's bridge gets (conftest's `Warden.env`); the sandbox clears the
# environment, so they go in by name.
NPM_QUIET = ("npm_config_update_notifier", "npm_config_fund", "npm_config_audit")


def closure(root: str) -> list[str]:
    """The folders (under tests/e2e) of `root` and of every package it needs, as
    package-lock.json places them (Node's lookup: the nearest `node_modules` up the tree).
    Optional peers that are not installed (the SDK's `@cfworker/json-schema`) are left out,
    as npm leaves them."""
    packages = json.loads((E2E_DIR / "package-lock.json").read_text())["packages"]

    def resolve(at: str, name: str) -> str | None:
        here = at
        while True:
            candidate = f"{here}/node_modules/{name}" if here else f"node_modules/{name}"
            if candidate in packages:
                return candidate
            if not here:
                return None
            cut = here.rfind("/node_modules/")
            here = here[:cut] if cut >= 0 else ""

    seen: set[str] = set()
    todo = [f"node_modules/{root}"]
    while todo:
        at = todo.pop()
        if at in seen:
            continue
        seen.add(at)
        entry = packages[at]
        optional_peers = {n for n, m in entry.get("peerDependenciesMeta", {}).items() if m.get("optional")}
        for section in ("dependencies", "optionalDependencies", "peerDependencies"):
            for name in entry.get(section, {}):
                found = resolve(at, name)
                if found is None:
                    assert section != "dependencies" and (
                        section == "optionalDependencies" or name in optional_peers
                    ), f"{at} needs {name}, which package-lock.json does not have"
                    continue
                todo.append(found)
    return sorted(seen)


@dataclass
class Packed:
    """Tarballs by file name, and each package's versions (manifest, tarball, integrity)."""

    tarballs: dict[str, bytes]
    versions: dict[str, dict[str, dict]]


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Packed:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("`npm` is not on PATH; the test packs the mirror's packages with it", pytrace=False)
    folders = closure(PACKAGE)
    missing = [f for f in folders if not (E2E_DIR / f / "package.json").exists()]
    if missing:
        pytest.fail(f"{missing[:3]} not installed: run `npm ci` in {E2E_DIR} first", pytrace=False)
    out = tmp_path_factory.mktemp("packed")
    # One `npm pack` for them all (about 6 s for 100 folders here); `./` makes each a folder,
    # not a name or a git shorthand. Its own cache and logs: the user's ~/.npm is not touched.
    run = subprocess.run(
        [npm, "pack", "--ignore-scripts", "--json", "--pack-destination", str(out), *[f"./{f}" for f in folders]],
        cwd=E2E_DIR,
        env={**_path_env(), "npm_config_cache": str(out / ".cache"), "npm_config_update_notifier": "false"},
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    results = json.loads(run.stdout)
    assert len(results) == len(folders), run.stderr
    packed = Packed(tarballs={}, versions={})
    for folder, result in zip(folders, results, strict=True):
        manifest = json.loads((E2E_DIR / folder / "package.json").read_text())
        assert (manifest["name"], manifest["version"]) == (result["name"], result["version"]), folder
        packed.tarballs[result["filename"]] = (out / result["filename"]).read_bytes()
        version = {k: manifest[k] for k in MANIFEST_KEYS if k in manifest}
        version["_filename"] = result["filename"]
        version["_integrity"] = result["integrity"]
        version["_shasum"] = result["shasum"]
        packed.versions.setdefault(result["name"], {})[result["version"]] = version
    return packed


def _path_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}


@dataclass
class Mirror:
    """An npm registry on 127.0.0.1: packuments at `/NAME` (`/@scope%2fname`), tarballs at
    `/-/tarballs/FILE`. `requests` is every request line it got, in order."""

    url: str
    requests: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rstrip("/").rsplit(":", 1)[1])


@pytest.fixture
def mirror(packed: Packed) -> Iterator[Mirror]:
    lock = threading.Lock()
    box: dict[str, Mirror] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            m = box["m"]
            with lock:
                m.requests.append(f"{self.command} {self.path}")
            path = self.path
            # A proxy may forward the absolute form; origin form is what Warden's sends.
            if path.startswith("http://"):
                path = "/" + path.split("/", 3)[3]
            if path.startswith("/-/tarballs/"):
                body = packed.tarballs.get(path.removeprefix("/-/tarballs/"))
                self._answer(200 if body else 404, "application/octet-stream", body or b"")
                return
            name = unquote(path.lstrip("/").split("?", 1)[0])
            versions = packed.versions.get(name)
            if versions is None:
                self._answer(404, "application/json", b'{"error":"Not found"}')
                return
            self._answer(200, "application/json", json.dumps(packument(name, versions, m.url)).encode())

        def _answer(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    box["m"] = Mirror(url=f"http://127.0.0.1:{server.server_address[1]}/")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box["m"]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def packument(name: str, versions: dict[str, dict], base: str) -> dict:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) if p.isdigit() else -1 for p in v.split("-", 1)[0].split("."))

    out = {}
    for v, manifest in versions.items():
        doc = {k: x for k, x in manifest.items() if not k.startswith("_")}
        doc["dist"] = {
            "tarball": f"{base}-/tarballs/{manifest['_filename']}",
            "integrity": manifest["_integrity"],
            "shasum": manifest["_shasum"],
        }
        out[v] = doc
    return {"name": name, "dist-tags": {"latest": max(versions, key=key)}, "versions": out}


@pytest.fixture
def npx() -> str:
    found = shutil.which("npx")
    if found is None:
        pytest.fail("`npx` is not on PATH; it comes with npm", pytrace=False)
    return found


def npx_params(warden: Warden, npx: str, mirror: Mirror, network: str, *, via: str, work: Path):
    """`warden bridge` for `npx -y mcp-ripgrep@0.4.0`, sandboxed with `network`, in a working
    folder of its own (no node_modules: npx must download). `via` names how npm learns of the
    mirror: `env` (`npm_config_registry`, passed by name) or `npmrc` (the `.npmrc` of a HOME of
    its own: `@npm` never reads the working folder's)."""
    work.mkdir(exist_ok=True)
    pass_env = list(NPM_QUIET)
    extra: dict[str, str] = {}
    if via == "env":
        extra["npm_config_registry"] = mirror.url
        pass_env.append("npm_config_registry")
    else:
        home = work.parent / "home"
        home.mkdir(exist_ok=True)
        (home / ".npmrc").write_text(f"registry={mirror.url}\n")
        extra["HOME"] = str(home)
    params = warden.params(
        "npx-rg", [npx, "-y", f"{PACKAGE}@{VERSION}"], 'sandbox="on"', f"sandbox_network={network}", cwd=work
    )
    params.env = {**(params.env or {}), **extra}
    params.args = params.args[:1] + [a for k in pass_env for a in ("--pass-env", k)] + params.args[1:]
    return params


def own_cache(warden: Warden) -> Path:
    return warden.state_dir / "sandbox" / own_name("npx-rg") / "npm"


@pytest.mark.parametrize("via", ["env", "npmrc"])
async def test_npx_installs_from_the_npm_mirror_through_the_proxy_and_runs(
    warden: Warden, npx: str, mirror: Mirror, via: str
) -> None:
    assert not own_cache(warden).exists()  # a fresh state dir: nothing cached from before
    # The mirror is on loopback, which `@npm` never adds whoever names it: it is listed too.
    network = f'["@npm", "127.0.0.1:{mirror.port}"]'
    params = npx_params(warden, npx, mirror, network, via=via, work=warden.tmp / "work")
    with anyio.fail_after(120):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
    assert "search" in tools, tools
    # Downloaded through the proxy: the packument, its tarball, and its dependencies'.
    assert f"GET /{PACKAGE}" in mirror.requests, mirror.requests
    assert f"GET /-/tarballs/{PACKAGE}-{VERSION}.tgz" in mirror.requests, mirror.requests
    assert "GET /@modelcontextprotocol%2fsdk" in mirror.requests, mirror.requests
    assert any(r.startswith("GET /-/tarballs/modelcontextprotocol-sdk-") for r in mirror.requests), mirror.requests
    # Into the server's own cache, under Warden's state.
    assert (own_cache(warden) / "_npx").is_dir(), list(own_cache(warden).iterdir())
    events = warden.events("npx-rg")
    assert [e for e in events if e["kind"] == "sandbox"], events
    assert not [e for e in events if e["kind"] == "network_denied"], events


async def test_npx_without_the_network_fails_and_the_mirror_sees_nothing(
    warden: Warden, npx: str, mirror: Mirror
) -> None:
    params = npx_params(warden, npx, mirror, "[]", via="env", work=warden.tmp / "work")
    with anyio.fail_after(120):
        async with stdio_client(params, errlog=warden.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with pytest.raises(MCPError) as caught:
                    await session.initialize()
    error = caught.value.error
    assert mirror.requests == [], mirror.requests
    denied = [e for e in warden.events("npx-rg") if e["kind"] == "network_denied"]
    assert [(e["host"], e["port"]) for e in denied] == [("127.0.0.1", mirror.port)], denied
    # The client is told why: npm's own error (the proxy's 403 for the mirror) is in the answer.
    assert error.data["kind"] == "spawn_failed", error.data
    assert error.data["code"] == "W-SPAWN-EXITED", error.data
    assert f"403 Forbidden - GET {mirror.url}{PACKAGE}" in error.data["stderr_tail"], error.data
    # And the bridge names what its proxy refused, and the key that allows it.
    assert f"its sandbox's proxy refused 127.0.0.1:{mirror.port}" in error.message, error.message
    assert "`sandbox_network` in [servers.npx-rg]" in error.data["fix"], error.data
