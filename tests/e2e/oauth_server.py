"""A remote MCP server behind OAuth 2.1, for the tests of Warden's OAuth sign-in: ONE process on
127.0.0.1:PORT (loopback only) that is both the authorization server and the protected resource,
built on the Python SDK 2.x's `MCPServer` and its `mcp.server.auth` building blocks.

    oauth_server.py PORT [--ttl SECONDS] [--refresh-ttl SECONDS] [--log FILE]
                    [--step-up] [--client ID] [--cimd] ...

Authorization server (issuer `http://127.0.0.1:PORT`):
  GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (S256 only, iss in responses)
  POST /register    RFC 7591 dynamic client registration (public `none` or secret clients)
  GET  /authorize   auto-approves, no login page: 302 to the client's redirect_uri with
                    `code`, `state` and `iss` (RFC 9207); a wrong `resource` gets `invalid_target`
  POST /token       authorization_code (PKCE S256 verified) and refresh_token (rotated); a
                    `resource` other than the /mcp URL gets 400 `invalid_target` (RFC 8707)
  POST /revoke      RFC 7009: revokes the token and its pair (access <-> refresh)
Access tokens expire after --ttl seconds (3600); refresh tokens after --refresh-ttl (never).
An access token stays good until it expires even after it has been refreshed.

Protected resource:
  /mcp   the SDK's Streamable HTTP transport; without a good token: 401 and
         `WWW-Authenticate: Bearer error="invalid_token", ..., resource_metadata="http://127.0.0.1:PORT/.well-known/oauth-protected-resource"`
  GET  /.well-known/oauth-protected-resource       RFC 9728 metadata: `resource` is the /mcp URL,
  GET  /.well-known/oauth-protected-resource/mcp   `authorization_servers` the issuer (both paths)
Tools: `echo {message}`; `whoami` (JSON: the token's client_id, scopes, resource); `admin`.

--step-up    `admin` needs the scope `admin` too: a call of it with a token without that scope
             gets 403 `WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp admin"`.
--greedy     every tools/call gets 403 insufficient_scope naming one more scope (s1, s2, …): a
             server that would have the browser opened for ever.
--client ID  a public client ID registered beforehand (scopes `mcp admin`, any loopback port for
             its redirect `http://127.0.0.1:PORT/callback`, RFC 8252 §7.3).
--bench-token T  T is an access token of client `bench` (scope mcp, this resource, no expiry)
             from the start: a direct client's token beside a signed-in bridge (tests/bench).
--cimd       the metadata says `client_id_metadata_document_supported`; an https client_id is
             taken as a Client ID Metadata Document's URL WITHOUT fetching it (tests stay on
             loopback): a stand-in for an authorization server that fetched and accepted it.

--log FILE appends one JSON object a line, each with `ts` and `event`:
  {"event": "registered", "client_id", "auth_method", "redirect_uris", "scope"}
  {"event": "step_up", "tool", "scopes"}   (a 403 insufficient_scope)
  {"event": "authorized", "client_id", "scopes", "resource", "redirect_uri"}
  {"event": "authorize_error", "client_id", "error": "invalid_target", "resource"}
  {"event": "token", "grant_type": "authorization_code"|"refresh_token", "client_id", "scopes",
   "expires_in", "access_token", "refresh_token"}   (a sign-in, or a refresh)
  {"event": "token_error", "grant_type", "status", "error", "error_description"}   (any /token failure)
  {"event": "revoked", "client_id", "kind": "access_token"|"refresh_token"}
  {"event": "mcp", "http_method", "rpc_method", "auth": "ok"|"missing"|"unknown"|"expired"|"revoked",
   "status", "client_id"}   (every request to /mcp)
Tokens in the log are their first 8 characters only."""

from __future__ import annotations

import argparse
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.routing import Route

SCOPE = "mcp"
CODE_TTL = 300

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("port", type=int)
parser.add_argument("--ttl", type=int, default=3600, help="access tokens' lifetime in seconds")
parser.add_argument("--refresh-ttl", type=int, default=None, help="refresh tokens' lifetime (never expire)")
parser.add_argument("--log", default=None, help="append one JSON line per event to this file")
parser.add_argument(
    "--resource", default=None,
    help="name this URL as the resource in the protected-resource metadata (PORT stands for the port): a hostile server's claim to another's tokens",
)
parser.add_argument(
    "--reject-tokens", action="store_true",
    help="refuse every token at /mcp, valid or not (a server that keeps asking for a sign-in)",
)
parser.add_argument(
    "--authorization-server", default=None,
    help="name this URL as the authorization server in the protected-resource metadata (a test of what a client refuses)",
)
parser.add_argument("--step-up", action="store_true", help="the admin tool needs the scope admin (403 insufficient_scope)")
parser.add_argument("--greedy", action="store_true", help="each tools/call asks for one more scope (403 insufficient_scope)")
parser.add_argument("--client", default=None, help="a public client id registered beforehand")
parser.add_argument("--bench-token", default=None, help="an access token valid from the start (benchmarks)")
parser.add_argument("--cimd", action="store_true", help="take an https client_id as a Client ID Metadata Document URL")
parser.add_argument(
    "--sse", action="store_true",
    help="serve the deprecated HTTP+SSE transport (GET /sse, POST /messages/) instead of /mcp; /sse is the resource",
)
opts = parser.parse_args()
SCOPES = [SCOPE, "admin"] if opts.step_up or opts.client or opts.cimd else [SCOPE]
if opts.greedy:
    SCOPES = [SCOPE, *(f"s{i}" for i in range(1, 30))]
GREEDY = {"asked": 0}

ISSUER = f"http://127.0.0.1:{opts.port}"
MCP_PATH = "/sse" if opts.sse else "/mcp"
MCP_URL = f"{ISSUER}{MCP_PATH}"
RESOURCE_METADATA_URL = f"{ISSUER}/.well-known/oauth-protected-resource"


def log(event: str, **fields: Any) -> None:
    if opts.log:
        with open(opts.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"ts": round(time.time(), 3), "event": event, **fields}) + "\n")


def short(token: str | None) -> str | None:
    return token[:8] if token else None


def same_resource(resource: str) -> bool:
    """RFC 8707: this server is one resource, its /mcp URL (a trailing slash aside)."""
    return resource.rstrip("/") == MCP_URL


class LoopbackClient(OAuthClientInformationFull):
    """A client known beforehand: its redirect is http://127.0.0.1 on any port, path /callback."""

    def validate_redirect_uri(self, redirect_uri: Any) -> Any:
        url = str(redirect_uri or "")
        if not url.startswith("http://127.0.0.1:") or not url.endswith("/callback"):
            return super().validate_redirect_uri(redirect_uri)
        return redirect_uri


class Provider:
    """The SDK's `OAuthAuthorizationServerProvider`, in memory, approving every request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}  # kept after expiry, to tell "expired" from "unknown"
        self.refresh: dict[str, RefreshToken] = {}
        self.pair: dict[str, str] = {}  # access token <-> refresh token, both ways
        self.revoked: set[str] = set()
        if opts.bench_token:
            self.access[opts.bench_token] = AccessToken(
                token=opts.bench_token, client_id="bench", scopes=[SCOPE], expires_at=None, resource=MCP_URL
            )

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if client_id in self.clients:
            return self.clients[client_id]
        if client_id == opts.client or (opts.cimd and client_id.startswith("https://")):
            return LoopbackClient.model_validate(
                {
                    "client_id": client_id,
                    "redirect_uris": ["http://127.0.0.1/callback"],
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "scope": " ".join(SCOPES),
                }
            )
        return None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        log(
            "registered",
            client_id=client_info.client_id,
            auth_method=client_info.token_endpoint_auth_method,
            redirect_uris=[str(u) for u in client_info.redirect_uris or []],
            scope=client_info.scope,
        )

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and not same_resource(params.resource):
            log("authorize_error", client_id=client.client_id, error="invalid_target", resource=params.resource)
            raise AuthorizeError("invalid_target", f"unknown resource {params.resource!r}; this server is {MCP_URL}")
        code = secrets.token_urlsafe(32)
        scopes = params.scopes or (client.scope.split() if client.scope else [SCOPE])
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=scopes,
            expires_at=time.time() + CODE_TTL,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=MCP_URL,  # the one resource, named or not
            subject="e2e-user",
        )
        log(
            "authorized",
            client_id=client.client_id,
            scopes=scopes,
            resource=params.resource,
            redirect_uri=str(params.redirect_uri),
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=ISSUER)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code and code.client_id == client.client_id else None

    def _issue(self, client_id: str, scopes: list[str], grant_type: str) -> OAuthToken:
        now = int(time.time())
        access, refresh = "at_" + secrets.token_urlsafe(32), "rt_" + secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + opts.ttl,
            resource=MCP_URL,
            subject="e2e-user",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + opts.refresh_ttl if opts.refresh_ttl is not None else None,
            resource=MCP_URL,
            subject="e2e-user",
        )
        self.pair[access], self.pair[refresh] = refresh, access
        log(
            "token",
            grant_type=grant_type,
            client_id=client_id,
            scopes=scopes,
            expires_in=opts.ttl,
            access_token=short(access),
            refresh_token=short(refresh),
        )
        return OAuthToken(access_token=access, expires_in=opts.ttl, scope=" ".join(scopes), refresh_token=refresh)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]  # single use
        return self._issue(authorization_code.client_id, authorization_code.scopes, "authorization_code")

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        if token is None or refresh_token in self.revoked or token.client_id != client.client_id:
            return None
        return token

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotated: the old one is spent
        return self._issue(refresh_token.client_id, scopes, "refresh_token")

    def access_state(self, token: str) -> str:
        """"ok", "unknown", "revoked" or "expired": what /mcp makes of a bearer token."""
        found = self.access.get(token)
        if found is None:
            return "unknown"
        if token in self.revoked:
            return "revoked"
        if found.expires_at is not None and found.expires_at <= time.time():
            return "expired"
        return "ok"

    async def load_access_token(self, token: str) -> AccessToken | None:
        if opts.reject_tokens:
            return None
        return self.access[token] if self.access_state(token) == "ok" else None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.revoked.add(token.token)
        if token.token in self.pair:
            self.revoked.add(self.pair[token.token])
        self.refresh.pop(token.token, None)
        self.refresh.pop(self.pair.get(token.token, ""), None)
        kind = "access_token" if isinstance(token, AccessToken) else "refresh_token"
        log("revoked", client_id=token.client_id, kind=kind)


provider = Provider()
# URLs go in as strings: the SDK's models keep a path-less URL as it is, but a bare
# `AnyHttpUrl("http://127.0.0.1:PORT")` gains a trailing slash, and the issuer is compared exactly.
settings = AuthSettings.model_validate(
    {
        "issuer_url": ISSUER,
        "resource_server_url": MCP_URL,
        "validate_token_resource": True,
        "required_scopes": [SCOPE],
        "client_registration_options": {"enabled": True, "valid_scopes": SCOPES, "default_scopes": [SCOPE]},
        "revocation_options": {"enabled": True},
    }
)
server = MCPServer("e2e-oauth", auth_server_provider=provider, auth=settings)


@server.tool()
def echo(message: str) -> str:
    """Returns the message."""
    return message


@server.tool()
def whoami(ctx: Context) -> str:
    """The bearer token's client_id, scopes and resource, as JSON."""
    token = get_access_token()
    if token is None:  # the context variable did not reach this task: read the request's user
        request = ctx.request_context.request
        user = request.scope.get("user") if request is not None else None
        token = getattr(user, "access_token", None)
    if token is None:
        return json.dumps({"client_id": None, "scopes": []})
    return json.dumps({"client_id": token.client_id, "scopes": token.scopes, "resource": token.resource})


@server.tool()
def admin() -> str:
    """Needs the scope `admin` with --step-up."""
    return "admin done"


async def _buffered(receive: Any) -> tuple[bytes, Any]:
    """Reads a request's whole body, and gives back a `receive` that replays it."""
    messages, body = [], b""
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break

    async def replay() -> Any:
        return messages.pop(0) if messages else await receive()

    return body, replay


def _replaying(body: bytes, receive: Any) -> Any:
    """A `receive` that gives BODY (whole, the length changed) and then the real one's messages."""
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class Outskirts:
    """What the SDK lacks, around its app: the /token `resource` check (its TokenHandler never looks
    at the token request's `resource`), the log of /token failures, and of every /mcp request."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in ("/token", "/revoke", MCP_PATH, "/messages/"):
            await self.app(scope, receive, send)
            return
        raw = receive
        body, receive = await _buffered(raw)
        if scope["path"] == "/revoke":
            # The SDK's RevocationRequest makes `client_secret` a required form field, so a public
            # (`none`) client's RFC 7009 request gets 400 "client_secret: Field required"; an empty
            # one passes its model, and its ClientAuthenticator still checks a real secret.
            if scope["method"] == "POST" and "client_secret" not in dict(parse_qsl(body.decode("utf-8", "replace"))):
                body = body + (b"&" if body else b"") + b"client_secret="
                receive = _replaying(body, raw)
            await self.app(scope, receive, send)
        elif scope["path"] == "/token":
            await self.token(scope, body, receive, send)
        else:
            await self.mcp(scope, body, receive, send)

    async def token(self, scope: Any, body: bytes, receive: Any, send: Any) -> None:
        form = dict(parse_qsl(body.decode("utf-8", "replace")))
        grant_type = form.get("grant_type")
        resource = form.get("resource")
        if scope["method"] == "POST" and resource is not None and not same_resource(resource):
            error = {"error": "invalid_target", "error_description": f"unknown resource {resource!r}"}
            log("token_error", grant_type=grant_type, status=400, **error)
            payload = json.dumps(error).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode()),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        status, chunks = 0, []

        async def watch(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and status >= 400:
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, watch)
        if status >= 400:
            try:
                answer = json.loads(b"".join(chunks))
            except ValueError:
                answer = {}
            log(
                "token_error",
                grant_type=grant_type,
                status=status,
                error=answer.get("error"),
                error_description=answer.get("error_description"),
            )

    async def mcp(self, scope: Any, body: bytes, receive: Any, send: Any) -> None:
        rpc_method = None
        try:
            parsed = json.loads(body) if body else None
            if isinstance(parsed, dict):
                rpc_method = parsed.get("method")
        except ValueError:
            pass
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        if header[:7].lower() == "bearer ":
            token = header[7:]
            auth = provider.access_state(token)
            client_id = provider.access[token].client_id if token in provider.access else None
        else:
            auth, client_id = "missing", None
        tool = parsed.get("params", {}).get("name") if rpc_method == "tools/call" and isinstance(parsed, dict) else None
        wanted = None
        if opts.step_up and tool == "admin" and auth == "ok" and "admin" not in provider.access[token].scopes:
            wanted = "mcp admin"
        if opts.greedy and tool is not None and auth == "ok":
            GREEDY["asked"] += 1
            wanted = f"mcp s{GREEDY['asked']}"
        if wanted is not None:
            log("step_up", tool=tool, scopes=provider.access[token].scopes)
            challenge = f'Bearer error="insufficient_scope", scope="{wanted}", resource_metadata="{RESOURCE_METADATA_URL}"'
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                log(
                    "mcp",
                    http_method=scope["method"],
                    rpc_method=rpc_method,
                    auth=auth,
                    status=message["status"],
                    client_id=client_id,
                )
            await send(message)

        await self.app(scope, receive, watch)


def build_app() -> Any:
    app = server.sse_app() if opts.sse else server.streamable_http_app()
    routes = app.router.routes
    for route in routes:
        # The SDK points WWW-Authenticate at the path-suffixed RFC 9728 document
        # (/.well-known/oauth-protected-resource/mcp); the fixture names the root one.
        if isinstance(route, Route) and route.path == MCP_PATH and isinstance(route.endpoint, RequireAuthMiddleware):
            route.endpoint.resource_metadata_url = AnyHttpUrl(RESOURCE_METADATA_URL)
            break
    else:
        raise SystemExit(f"oauth_server.py: the SDK's {MCP_PATH} route is not a RequireAuthMiddleware any more")
    # The SDK's metadata leaves out `authorization_response_iss_parameter_supported` though
    # the fixture sends `iss` (RFC 9207); served ahead of the SDK's own route.
    assert settings.client_registration_options and settings.revocation_options
    metadata = build_metadata(
        settings.issuer_url, None, settings.client_registration_options, settings.revocation_options
    )
    metadata.authorization_response_iss_parameter_supported = True
    if opts.cimd:
        metadata.client_id_metadata_document_supported = True
    # ... and lists only the secret methods, though it registers public (`none`) clients too.
    metadata.token_endpoint_auth_methods_supported = ["none", "client_secret_post", "client_secret_basic"]
    metadata.revocation_endpoint_auth_methods_supported = ["none", "client_secret_post", "client_secret_basic"]
    resource_metadata = ProtectedResourceMetadata.model_validate(
        {"resource": opts.resource.replace("PORT", str(opts.port)) if opts.resource else MCP_URL, "authorization_servers": [opts.authorization_server or ISSUER], "scopes_supported": [SCOPE]}
    )
    routes[:0] = [
        Route(
            "/.well-known/oauth-authorization-server",
            endpoint=cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        ),
        Route(
            "/.well-known/oauth-protected-resource",
            endpoint=cors_middleware(ProtectedResourceMetadataHandler(resource_metadata).handle, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        ),
    ]
    return Outskirts(app)


if __name__ == "__main__":
    uvicorn.run(build_app(), host="127.0.0.1", port=opts.port, log_level="warning")
