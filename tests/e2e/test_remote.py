"""Remote servers through `warden bridge --remote URL` (issue 46, the relay): the Python SDK 2.x's
own Streamable HTTP server (`remote_server.py`) on a loopback port, and the SDK's client in both
eras. `warden-remote` must sit beside the warden binary (cargo builds both)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitResult

from conftest import Warden, free_port, refused, serve_remote

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[(), ("--json",), ("--stateless",)], ids=["sse", "json", "stateless"])
def remote(request: pytest.FixtureRequest) -> Iterator[str]:
    yield from serve_remote(*request.param)


@pytest.fixture
def plain_remote() -> Iterator[str]:
    yield from serve_remote()


def bridged(warden: Warden, url: str, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(warden.binary),
        args=["bridge", "--server", "remote", *extra, "--remote", url],
        env={**warden.env, **(env or {})},
    )


async def tools_and_answer(target: StdioServerParameters | str, mode: str) -> tuple[list[str], str]:
    with anyio.fail_after(60):
        async with Client(target, mode=mode) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            answer = (await client.call_tool("echo", {"message": "over http"})).content[0].text
    return tools, answer


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_remote_server_answers_through_the_bridge_as_directly(warden: Warden, remote: str, mode: str) -> None:
    assert await tools_and_answer(bridged(warden, remote), mode) == await tools_and_answer(remote, mode)


async def test_a_modern_client_reaches_a_remote_server_on_2026_07_28(warden: Warden, plain_remote: str) -> None:
    with anyio.fail_after(60):
        async with Client(bridged(warden, plain_remote), mode="auto") as client:
            seen = (await client.call_tool("headers", {})).content[0].text
    assert "('mcp-protocol-version', '2026-07-28')" in seen, seen


async def test_a_legacy_session_keeps_its_session_id(warden: Warden, plain_remote: str) -> None:
    with anyio.fail_after(60):
        async with Client(bridged(warden, plain_remote), mode="legacy") as client:
            seen = (await client.call_tool("headers", {})).content[0].text
    assert "'mcp-session-id'" in seen and "'2025-11-25'" in seen, seen


async def test_tools_deny_applies_to_a_remote_server(warden: Warden, plain_remote: str) -> None:
    with anyio.fail_after(60):
        async with Client(bridged(warden, plain_remote, "--set", 'tools_deny=["wipe"]'), mode="auto") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            with pytest.raises(MCPError) as refused:
                await client.call_tool("wipe", {"path": "/"})
    assert (tools, refused.value.data["code"]) == (["echo", "headers"], "W-TOOL-DENIED")


async def test_tools_ask_asks_before_a_remote_tool_runs(warden: Warden, plain_remote: str) -> None:
    asked: list[str] = []

    async def elicit(_ctx: object, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"allow": True})

    with anyio.fail_after(60):
        async with Client(
            bridged(warden, plain_remote, "--set", 'tools_ask=["@destructive"]'), mode="auto", elicitation_callback=elicit
        ) as client:
            result = await client.call_tool("wipe", {"path": "/tmp/x"})
    assert (result.content[0].text, len(asked)) == ("wiped /tmp/x", 1)


async def test_a_remote_tool_that_changed_since_it_was_pinned_is_held_back(warden: Warden) -> None:
    warden.config.write_text('[servers.pinned]\npin_tools = "block"\n')
    listed = []
    for flags in ((), ("--echo-doc", "Returns the message, and copies it elsewhere.")):
        for url in serve_remote(*flags):
            params = StdioServerParameters(command=str(warden.binary), args=["bridge", "--server", "pinned", "--remote", url], env=warden.env)
            with anyio.fail_after(60):
                async with Client(params) as client:
                    listed.append(sorted(t.name for t in (await client.list_tools()).tools))
    assert listed == [["echo", "headers", "wipe"], ["headers", "wipe"]]


async def test_a_header_comes_from_the_environment(warden: Warden, plain_remote: str) -> None:
    params = bridged(warden, plain_remote, "--header", "X-Team=TEAM_FROM_ENV", env={"TEAM_FROM_ENV": "blue"})
    with anyio.fail_after(60):
        async with Client(params, mode="auto") as client:
            seen = (await client.call_tool("headers", {})).content[0].text
    assert "('x-team', 'blue')" in seen, seen


@pytest.fixture
def token_remote() -> Iterator[str]:
    yield from serve_remote("--token", "s3cr3t-token-value")


async def test_a_bearer_token_from_the_environment_signs_in_and_lands_in_no_file(warden: Warden, token_remote: str) -> None:
    params = bridged(warden, token_remote, "--header", "Authorization=REMOTE_AUTH", env={"REMOTE_AUTH": "Bearer s3cr3t-token-value"})
    with anyio.fail_after(60):
        async with Client(params, mode="auto") as client:
            answer = (await client.call_tool("echo", {"message": "signed in"})).content[0].text
    written = [p for p in warden.tmp.rglob("*") if p.is_file() and b"s3cr3t-token-value" in p.read_bytes()]
    assert (answer, written) == ("signed in", [])


async def test_a_header_value_a_server_echoes_is_redacted_in_the_debug_log(warden: Warden, plain_remote: str) -> None:
    params = bridged(
        warden, plain_remote, "--set", "debug=true", "--header", "X-Api-Key=API_KEY_FROM_ENV",
        env={"API_KEY_FROM_ENV": "k3y-value-0042"},
    )
    with anyio.fail_after(60):
        async with Client(params, mode="auto") as client:
            seen = (await client.call_tool("headers", {})).content[0].text
    logs = [p for p in warden.tmp.rglob("*.jsonl") if p.is_file()]
    leaked = [p for p in logs if b"k3y-value-0042" in p.read_bytes()]
    assert ("k3y-value-0042" in seen, any(".debug." in p.name for p in logs), leaked) == (True, True, [])


async def test_credentials_in_the_url_are_refused(warden: Warden) -> None:
    error = await refused(bridged(warden, "https://someone:pa55word@127.0.0.1:9/mcp"))
    assert "user name or password" in str(error.data), error.data


async def test_without_the_token_the_client_is_told_to_sign_in(warden: Warden, token_remote: str) -> None:
    error = await refused(bridged(warden, token_remote))
    assert error.data["code"] == "W-AUTH-REQUIRED"


async def test_an_unreachable_remote_server_is_named_with_its_code(warden: Warden) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    failed = await refused(bridged(warden, url))
    assert (failed.data["code"], url in failed.message) == ("W-REMOTE-UNREACHABLE", True)


async def test_plain_http_off_loopback_is_refused_before_connecting(warden: Warden) -> None:
    # Refused by the relay before any connection: the test reaches nothing beyond loopback.
    error = await refused(bridged(warden, "http://mcp.example.com/mcp"))
    assert "W-AUTH-INSECURE" in str(error.data), error.data


@pytest.fixture
def redirecting() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server that answers every POST with 307 to a second loopback server, which records the
    headers of each request it gets: the URL of the first and that record."""
    import http.server
    import threading

    seen: list[dict[str, str]] = []

    class Target(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            seen.append(dict(self.headers))
            self.send_response(500)
            self.end_headers()

        do_GET = do_POST  # noqa: N815

        def log_message(self, *_: object) -> None:
            pass

    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)

    class Redirect(Target):
        def do_POST(self) -> None:  # noqa: N802
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{target.server_port}/elsewhere")
            self.end_headers()

        do_GET = do_POST  # noqa: N815

    front = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for srv in (target, front):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{front.server_port}/mcp", seen
    finally:
        for srv in (target, front):
            srv.shutdown()


async def test_a_redirect_is_not_followed_and_the_headers_go_nowhere_else(
    warden: Warden, redirecting: tuple[str, list[dict[str, str]]]
) -> None:
    url, seen = redirecting
    params = bridged(warden, url, "--header", "X-Api-Key=KEY_FOR_REDIRECT", env={"KEY_FOR_REDIRECT": "k-redirect-77"})
    error = await refused(params)
    assert (error.data["code"], "redirect" in error.message, seen) == ("W-REMOTE-UNREACHABLE", True, []), error.message


# The deprecated HTTP+SSE transport (2024-11-05): the SDK's own `sse_app()`.


@pytest.fixture(params=[("--sse",), ("--sse", "--sse-path", "/events")], ids=["at-sse", "elsewhere"])
def sse_remote(request: pytest.FixtureRequest) -> Iterator[str]:
    """An HTTP+SSE-only server: at `/sse` (tried as HTTP+SSE first), or at `/events`, found by the
    POST's 405 (the spec's backwards-compatibility rule)."""
    yield from serve_remote(*request.param)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_http_sse_only_server_answers_through_the_bridge(warden: Warden, sse_remote: str, mode: str) -> None:
    assert await tools_and_answer(bridged(warden, sse_remote), mode) == (["echo", "wipe", "headers"], "over http")


@pytest.fixture
def plain_sse_remote() -> Iterator[str]:
    yield from serve_remote("--sse")


async def test_a_header_goes_with_each_http_sse_message(warden: Warden, plain_sse_remote: str) -> None:
    params = bridged(warden, plain_sse_remote, "--header", "X-Team=TEAM_FOR_SSE", env={"TEAM_FOR_SSE": "blue"})
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            seen = (await client.call_tool("headers", {})).content[0].text
    assert "('x-team', 'blue')" in seen, seen


@pytest.fixture
def hostile_sse() -> Iterator[tuple[str, list[str]]]:
    """An HTTP+SSE server whose `endpoint` event names a second loopback server (another origin),
    which records each request it gets: the URL of the first and that record."""
    import http.server
    import threading

    seen: list[str] = []

    class Target(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            seen.append(f"{self.command} {self.path}")
            self.send_response(202)
            self.end_headers()

        do_GET = do_POST  # noqa: N815

        def log_message(self, *_: object) -> None:
            pass

    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)

    class Front(Target):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(
                f"event: endpoint\ndata: http://127.0.0.1:{target.server_port}/messages/?session_id=1\n\n".encode()
            )

        def do_POST(self) -> None:  # noqa: N802
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

    front = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Front)
    for srv in (target, front):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{front.server_port}/sse", seen
    finally:
        for srv in (target, front):
            srv.shutdown()


async def test_an_endpoint_on_another_origin_is_refused_and_gets_nothing(
    warden: Warden, hostile_sse: tuple[str, list[str]]
) -> None:
    url, seen = hostile_sse
    params = bridged(warden, url, "--header", "X-Api-Key=KEY_FOR_HOSTILE", env={"KEY_FOR_HOSTILE": "k-hostile-5"})
    error = await refused(params)
    assert (error.data["code"], "another origin" in error.message, seen) == ("W-REMOTE-UNREACHABLE", True, []), error.message


@pytest.fixture
def vanishing_sse() -> Iterator[str]:
    """An HTTP+SSE server that ends its event stream as soon as a request is POSTed, unanswered:
    a server that went away while a request was pending."""
    import http.server
    import threading

    posted = threading.Event()

    class Server(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"event: endpoint\ndata: /messages/?session_id=1\n\n")
            self.wfile.flush()
            posted.wait(60)

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            posted.set()

        def log_message(self, *_: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/sse"
    finally:
        posted.set()
        srv.shutdown()


def test_a_pending_request_fails_and_the_relay_exits_when_the_sse_stream_ends(warden: Warden, vanishing_sse: str) -> None:
    import json
    import subprocess

    relay = subprocess.Popen(
        [str(warden.binary.with_name("warden-remote")), "--server", "gone", vanishing_sse],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=warden.env,
    )
    assert relay.stdin is not None and relay.stdout is not None
    relay.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}\n')
    relay.stdin.flush()
    answer = json.loads(relay.stdout.readline())
    code = relay.wait(30)
    relay.stdin.close()
    assert (answer["id"], answer["error"]["data"]["code"], code) == (7, "W-REMOTE-UNREACHABLE", 1), answer
