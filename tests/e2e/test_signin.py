"""Signing in to a remote server (issue 46): `warden bridge --remote URL` in front of
`oauth_server.py` (the Python SDK 2.x's authorization server and protected MCP server, on one
loopback port), a private OS keychain (gnome-keyring on its own D-Bus), and a stand-in browser
given as `$BROWSER` that follows the authorization server's redirect. The authorization
server's log says how many sign-ins and refreshes happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from conftest import Warden, free_port, refused, wait_listening

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from keychain import private_keychain  # noqa: E402  (tests/keychain.py)

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent



@dataclass
class Site:
    url: str
    log: Path
    browser_log: Path
    env: dict[str, str]

    def events(self, event: str, **match: str) -> list[dict]:
        if not self.log.exists():
            return []
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]
        return [e for e in lines if e.get("event") == event and all(e.get(k) == v for k, v in match.items())]

    def sign_ins(self) -> int:
        return len(self.events("token", grant_type="authorization_code"))

    def browser_opens(self) -> int:
        return len(self.browser_log.read_text().splitlines()) if self.browser_log.exists() else 0


def site(tmp: Path, *flags: str) -> Iterator[Site]:
    port = free_port()
    log = tmp / "oauth.log"
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "oauth_server.py"), str(port), "--log", str(log), *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    bus, keychain = private_keychain(tmp)
    browser_log = tmp / "browser.log"
    try:
        wait_listening(proc, port, "oauth_server.py")
        env = {
            "DBUS_SESSION_BUS_ADDRESS": bus,
            "BROWSER": f"{sys.executable} {HERE / 'browser_standin.py'} {browser_log}",
        }
        yield Site(f"http://127.0.0.1:{port}/{'sse' if '--sse' in flags else 'mcp'}", log, browser_log, env)
    finally:
        proc.terminate()
        proc.wait(10)
        for p in keychain:
            p.terminate()
            p.wait(10)


@pytest.fixture
def oauth(tmp_path: Path) -> Iterator[Site]:
    yield from site(tmp_path)


@pytest.fixture
def oauth_sse(tmp_path: Path) -> Iterator[Site]:
    # The same, over the deprecated HTTP+SSE transport: the GET /sse is answered 401 first.
    yield from site(tmp_path, "--sse")


@pytest.fixture
def short_lived(tmp_path: Path) -> Iterator[Site]:
    # Tokens that live 30 s are refreshed before each use (Warden refreshes a minute early).
    yield from site(tmp_path, "--ttl", "30")


@pytest.fixture
def insecure(tmp_path: Path) -> Iterator[Site]:
    # The protected resource names a plain-http authorization server off loopback.
    yield from site(tmp_path, "--authorization-server", "http://auth.example.com")


@pytest.fixture
def claims_another(tmp_path: Path) -> Iterator[Site]:
    # A hostile server (/mcp) whose metadata claims the resource of another on its origin
    # (/m: a string prefix of its URL, not a path prefix), to be sent that one's tokens.
    yield from site(tmp_path, "--resource", "http://127.0.0.1:PORT/m")


@pytest.fixture
def refuses_all(tmp_path: Path) -> Iterator[Site]:
    # A server that refuses every token, even one it just issued.
    yield from site(tmp_path, "--reject-tokens")


def bridged(warden: Warden, s: Site) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(warden.binary),
        args=["bridge", "--server", "signin", "--remote", s.url],
        env={**warden.env, **s.env},
    )


async def whoami(warden: Warden, s: Site, mode: str = "auto") -> dict:
    with anyio.fail_after(90):
        async with Client(bridged(warden, s), mode=mode) as client:
            return json.loads((await client.call_tool("whoami", {})).content[0].text)


async def test_one_sign_in_then_calls(warden: Warden, oauth: Site) -> None:
    me = await whoami(warden, oauth)
    assert (me["scopes"], oauth.sign_ins(), oauth.browser_opens()) == (["mcp"], 1, 1)


async def test_an_http_sse_server_is_signed_in_to_the_same_way(warden: Warden, oauth_sse: Site) -> None:
    me = await whoami(warden, oauth_sse, mode="legacy")
    assert (me["scopes"], oauth_sse.sign_ins(), oauth_sse.browser_opens()) == (["mcp"], 1, 1)


async def test_a_legacy_client_signs_in_the_same_way(warden: Warden, oauth: Site) -> None:
    me = await whoami(warden, oauth, "legacy")
    assert (me["scopes"], oauth.sign_ins()) == (["mcp"], 1)


async def test_a_later_session_reuses_the_sign_in(warden: Warden, oauth: Site) -> None:
    await whoami(warden, oauth)
    await whoami(warden, oauth)
    assert (oauth.sign_ins(), oauth.browser_opens()) == (1, 1)


async def test_two_clients_starting_at_once_share_one_sign_in(warden: Warden, oauth: Site) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(whoami, warden, oauth)
        tg.start_soon(whoami, warden, oauth)
    assert (oauth.sign_ins(), oauth.browser_opens()) == (1, 1)


async def test_the_token_is_in_no_file_warden_wrote(warden: Warden, oauth: Site) -> None:
    await whoami(warden, oauth)
    prefix = oauth.events("token", grant_type="authorization_code")[0]["access_token"].encode()
    written = [*warden.state_dir.rglob("*"), warden.stderr_path, warden.config]
    holding = [p for p in written if p.is_file() and prefix in p.read_bytes()]
    assert (len(list(warden.state_dir.rglob("*.jsonl"))) > 0, holding) == (True, [])


async def test_an_expiring_token_is_refreshed_without_a_second_sign_in(warden: Warden, short_lived: Site) -> None:
    await whoami(warden, short_lived)
    await whoami(warden, short_lived)
    assert (short_lived.sign_ins(), len(short_lived.events("token", grant_type="refresh_token")) >= 1) == (1, True)


async def test_a_plain_http_authorization_server_is_refused_and_no_browser_opens(warden: Warden, insecure: Site) -> None:
    error = await refused(bridged(warden, insecure))
    assert (error.data["code"], insecure.browser_opens()) == ("W-AUTH-INSECURE", 0), error.message


async def test_metadata_claiming_another_servers_resource_is_refused_before_the_browser(
    warden: Warden, claims_another: Site
) -> None:
    error = await refused(bridged(warden, claims_another))
    assert (error.data["code"], claims_another.browser_opens()) == ("W-AUTH-DENIED", 0), error.message


async def test_a_server_refusing_every_token_gets_the_browser_once(warden: Warden, refuses_all: Site) -> None:
    # The client's `server/discover` and then its `initialize` are both refused after sign-in.
    error = await refused(bridged(warden, refuses_all))
    rejected = len([e for e in refuses_all.events("mcp") if e["auth"] != "missing" and e["status"] == 401])
    assert (error.data["code"], rejected >= 2, refuses_all.browser_opens()) == ("W-AUTH-DENIED", True, 1), error.message


def auth(warden: Warden, s: Site, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **warden.env, **s.env}
    if home is not None:
        env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return subprocess.run(
        [str(warden.binary), "auth", *args], env=env, capture_output=True, text=True, timeout=90, check=False
    )


def a_client_with(tmp: Path, s: Site) -> Path:
    """A home whose Claude Code file holds the server as a bridged remote entry."""
    home = tmp / "home"
    home.mkdir()
    entry = {"command": "warden", "args": ["bridge", "--server", "signin", "--remote", s.url]}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"signin": entry}}))
    return home


async def test_logout_revokes_and_the_next_session_signs_in_again(warden: Warden, oauth: Site) -> None:
    await whoami(warden, oauth)
    out = auth(warden, oauth, "logout", oauth.url)
    await whoami(warden, oauth)
    # The server revokes the pair (refresh and access token) on the first.
    revoked = [e["kind"] for e in oauth.events("revoked")]
    assert (out.returncode, revoked, oauth.sign_ins(), oauth.browser_opens()) == (
        0, ["refresh_token"], 2, 2
    ), out.stdout + out.stderr


async def test_login_before_any_client_serves_the_first_session(warden: Warden, oauth: Site) -> None:
    out = auth(warden, oauth, "login", oauth.url)
    await whoami(warden, oauth)
    unsigned = [e for e in oauth.events("mcp") if e["auth"] == "missing"]
    assert (out.returncode, oauth.sign_ins(), len(unsigned)) == (0, 1, 1), out.stderr


async def test_a_call_needing_more_scope_signs_in_again_with_the_scopes_named(warden: Warden, tmp_path: Path) -> None:
    for s in site(tmp_path, "--step-up"):
        with anyio.fail_after(90):
            async with Client(bridged(warden, s)) as client:
                answer = (await client.call_tool("admin", {})).content[0].text
        granted = [e["scopes"] for e in s.events("authorized")]
        assert (answer, granted, s.browser_opens()) == ("admin done", [["mcp"], ["mcp", "admin"]], 2)


async def test_a_configured_client_id_is_used_instead_of_registering(warden: Warden, tmp_path: Path) -> None:
    for s in site(tmp_path, "--client", "warden-by-hand"):
        issuer = s.url.removesuffix("/mcp")
        warden.config.write_text(f'[servers.signin]\noauth_client_id = "warden-by-hand"\noauth_issuer = "{issuer}"\n')
        await whoami(warden, s)
        assert ([e["client_id"] for e in s.events("authorized")], s.events("registered")) == (["warden-by-hand"], [])


async def test_a_configured_client_id_goes_to_no_other_issuer(warden: Warden, tmp_path: Path) -> None:
    # An entry of the same name pointing at another server (planted in a project's file, say).
    warden.config.write_text('[servers.signin]\noauth_client_id = "warden-by-hand"\noauth_issuer = "https://auth.example.com"\n')
    for s in site(tmp_path, "--client", "warden-by-hand"):
        error = await refused(bridged(warden, s))
        assert (error.data["code"], s.browser_opens(), s.events("authorized")) == ("W-AUTH-DENIED", 0, []), error.message


async def test_a_client_metadata_document_url_is_the_client_id_where_the_server_takes_one(
    warden: Warden, tmp_path: Path
) -> None:
    url = "https://warden.example/oauth/client.json"
    warden.config.write_text(f'[oauth]\nclient_metadata_url = "{url}"\n')
    for s in site(tmp_path, "--cimd"):
        await whoami(warden, s)
        assert ([e["client_id"] for e in s.events("authorized")], s.events("registered")) == ([url], [])


async def test_the_bridge_says_it_waits_for_a_sign_in_without_the_link(warden: Warden, oauth: Site) -> None:
    await whoami(warden, oauth)
    events = warden.events("signin")
    waiting = [e for e in events if e["kind"] == "signin_waiting"]
    leaked = [e for e in events if "state=" in json.dumps(e)]
    assert (len(waiting), leaked) == (1, [])
def test_auth_list_shows_a_clients_remote_server_before_and_after_login(
    warden: Warden, oauth: Site, tmp_path: Path
) -> None:
    home = a_client_with(tmp_path, oauth)
    before = json.loads(auth(warden, oauth, "list", "--json", home=home).stdout)
    login = auth(warden, oauth, "login", "signin", home=home)
    after = json.loads(auth(warden, oauth, "list", "--json", home=home).stdout)
    states = [(r["name"], r["url"], r["signin"]) for r in before + after]
    assert (login.returncode, states) == (
        0, [("signin", oauth.url, "none"), ("signin", oauth.url, "signed_in")]
    ), login.stderr


def test_login_to_a_name_no_client_has_names_the_remote_servers(
    warden: Warden, oauth: Site, tmp_path: Path
) -> None:
    out = auth(warden, oauth, "login", "nosuch", home=a_client_with(tmp_path, oauth))
    assert (out.returncode, "remote servers: signin" in out.stderr, oauth.browser_opens()) == (1, True, 0), out.stderr


async def test_a_server_asking_for_ever_more_scopes_gets_the_browser_three_times_at_most(warden: Warden, tmp_path: Path) -> None:
    for s in site(tmp_path, "--greedy"):
        refusals = []
        with anyio.fail_after(120):
            async with Client(bridged(warden, s)) as client:
                for _ in range(5):
                    try:
                        await client.call_tool("echo", {"message": "x"})
                    except MCPError as e:
                        refusals.append((e.error.data or {}).get("code"))
        assert (s.browser_opens(), refusals) == (3, ["W-AUTH-DENIED"] * 5)
