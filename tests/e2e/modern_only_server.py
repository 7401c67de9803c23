"""An MCP server of the project's own that speaks only 2026-07-28 over stdio, written against the
spec without an SDK: it answers `server/discover`, `tools/list` and `tools/call`, refuses
`initialize` (-32022 UnsupportedProtocolVersion, naming its versions, as the spec asks of a
modern-only server) and knows no `ping`.

Tools:
- `echo {message}`: returns the message;
- `confirm {what}`: one multi round-trip round: the first call answers `input_required` with an
  `elicitation/create` (form mode, a required boolean `ok`) and a `requestState` it signs; the
  retry with `ok: true` returns "confirmed: WHAT", anything else "not confirmed: WHAT".
- `whoami`: returns the `_meta` clientInfo and the protocol version the request carried.

Every request must carry `_meta` `io.modelcontextprotocol/protocolVersion`; one without it
gets -32022 too. Each line it reads is appended to `$MODERN_ONLY_LOG` when that is set."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys

VERSION = "2026-07-28"
META = "io.modelcontextprotocol/"
KEY = secrets.token_bytes(32)

TOOLS = [
    {
        "name": "echo",
        "description": "Returns the message.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    },
    {
        "name": "confirm",
        "description": "Asks the user to confirm WHAT, then says whether they did.",
        "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]},
    },
    {
        "name": "whoami",
        "description": "Returns the client's info and protocol version from the request's _meta.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def sign(what: str) -> str:
    return what + "." + hmac.new(KEY, what.encode(), hashlib.sha256).hexdigest()


def verified(state: object) -> str | None:
    if not isinstance(state, str) or "." not in state:
        return None
    what, mac = state.rsplit(".", 1)
    return what if hmac.compare_digest(sign(what), state) else None


def text(t: str) -> dict:
    return {"resultType": "complete", "content": [{"type": "text", "text": t}], "isError": False}


def call(params: dict) -> dict:
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        return text(str(args.get("message", "")))
    if name == "whoami":
        meta = params.get("_meta") or {}
        return text(json.dumps({"clientInfo": meta.get(META + "clientInfo"), "protocolVersion": meta.get(META + "protocolVersion")}))
    if name == "confirm":
        what = str(args.get("what", ""))
        state = params.get("requestState")
        if state is None:
            return {
                "resultType": "input_required",
                "inputRequests": {
                    "ok": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": f"Confirm {what}?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"ok": {"type": "boolean", "title": "OK"}},
                                "required": ["ok"],
                            },
                        },
                    }
                },
                "requestState": sign(what),
            }
        if verified(state) != what:
            raise ValueError("requestState is not one this server made for this call")
        answer = ((params.get("inputResponses") or {}).get("ok")) or {}
        yes = answer.get("action") == "accept" and (answer.get("content") or {}).get("ok") is True
        return text(("confirmed: " if yes else "not confirmed: ") + what)
    raise KeyError(name)


def answer(msg: dict) -> dict | None:
    if "id" not in msg or "method" not in msg:
        return None  # notifications and responses: nothing to say
    rid, method, params = msg["id"], msg["method"], msg.get("params") or {}

    def error(code: int, message: str, data: object = None) -> dict:
        e = {"code": code, "message": message}
        if data is not None:
            e["data"] = data
        return {"jsonrpc": "2.0", "id": rid, "error": e}

    version = (params.get("_meta") or {}).get(META + "protocolVersion")
    if method == "initialize" or version != VERSION:
        return error(-32022, f"Unsupported protocol version: this server speaks only {VERSION}", {"supported": [VERSION], "requested": version})
    if method == "server/discover":
        result = {
            "resultType": "complete",
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "e2e-modern-only", "version": "1.0.0"},
            "instructions": "A modern-only test server.",
            "ttlMs": 0,
            "cacheScope": "private",
        }
    elif method == "tools/list":
        result = {"resultType": "complete", "tools": TOOLS, "ttlMs": 0, "cacheScope": "private"}
    elif method == "tools/call":
        try:
            result = call(params)
        except KeyError:
            return error(-32602, f"Unknown tool: {params.get('name')}")
        except ValueError as e:
            return error(-32602, str(e))
    else:
        return error(-32601, f"Method not found: {method}")
    result["_meta"] = {META + "serverInfo": {"name": "e2e-modern-only", "version": "1.0.0"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    log = os.environ.get("MODERN_ONLY_LOG")
    for line in sys.stdin:
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(line if line.endswith("\n") else line + "\n")
        try:
            msg = json.loads(line)
        except ValueError:
            out = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            out = answer(msg) if isinstance(msg, dict) else None
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
