#!/usr/bin/env python3
"""Idle memory and CPU of the app, with its window open and closed; writes
docs/bench/app-idle.md (included by docs/BENCHMARKS.md).

Run under a display, e.g. `xvfb-run -a python3 scripts/bench-app.py` (scripts/bench-app.sh
does that and builds the release app first). The app runs with a temporary HOME and state,
so it supervises nothing: this is its floor. Memory is the RSS of the app and every process
it started (the window starts the tray, and WebKit its web and network processes); CPU is
their user+system time over the measuring window, as a share of one core. Hidden, the app is
`warden-app --hidden`, which becomes the tray (as at login).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(p.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def rollup(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        out[key] = int(value.split()[0]) * 1024
    return out


def sample(root: int) -> dict:
    """RSS, PSS, private dirty and private bytes, CPU seconds and the number of processes of
    the app's process tree."""
    out = {"rss": 0, "pss": 0, "dirty": 0, "private": 0, "cpu": 0.0, "procs": 0}
    for pid in tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            r = rollup(pid)
        except (OSError, IndexError, ValueError):
            continue
        out["rss"] += r.get("Rss", 0)
        out["pss"] += r.get("Pss", 0)
        out["dirty"] += r.get("Private_Dirty", 0)
        out["private"] += r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)
        out["cpu"] += (int(fields[11]) + int(fields[12])) / TICK
        out["procs"] += 1
    return out


# Where the memory goes: each mapping of the app's processes by what it belongs to (first
# match wins; the rest is OTHER).
PARTS = [
    ("WebKit and JavaScriptCore", ("libwebkit2gtk", "libjavascriptcoregtk", "WebKitWebProcess", "WebKitNetworkProcess")),
    ("GL driver: Mesa and the LLVM it links (WebKit's web process opens an EGL display)", ("libLLVM", "libz3", "_dri.so", "libgallium", "libEGL", "libGLX", "libGL.so", "libGLdispatch", "libepoxy", "libglapi", "libgbm", "libdrm")),
    ("flite speech synthesis and its voices (linked by WebKit)", ("libflite",)),
    ("GTK, GLib, cairo, fonts, X11", ("libgtk", "libgdk", "libglib", "libgio", "libgobject", "libcairo", "libpango", "libharfbuzz", "libfreetype", "libfontconfig", ".ttf", ".otf", "libX", "libxcb", "libayatana", "libdbusmenu", "librsvg", "libpixman")),
    ("ICU (Unicode data)", ("libicu",)),
    ("the app's own code (`warden-app`, `warden-tray`)", ("warden-app", "warden-tray")),
    ("heap, stacks and other anonymous memory", ("[heap]", "[anon]", "[stack", "SYSV", "memfd:", "/dev/shm", "[anon:")),
]

OTHER = "other libraries: libc, libstdc++ and the long tail WebKit links (GStreamer, AV1 codecs, libsoup, SQLite...)"


def parts(root: int) -> dict[str, int]:
    """RSS of the app's process tree by part (`PARTS`), summed from every /proc/PID/smaps."""
    out: dict[str, int] = {}
    for pid in tree(root):
        try:
            text = Path(f"/proc/{pid}/smaps").read_text()
        except OSError:
            continue
        name = "[anon]"
        for line in text.splitlines():
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                name = head[5] if len(head) > 5 else "[anon]"
            elif head and head[0] == "Rss:":
                part = next((p for p, keys in PARTS if any(k in name for k in keys)), OTHER)
                out[part] = out.get(part, 0) + int(head[1]) * 1024
    return out


def measure(app: Path, hidden: bool, settle: float, window: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="warden-bench-app-") as tmp:
        t = Path(tmp)
        (t / "run").mkdir(mode=0o700)
        # The app as it ships: its WebKit settings are its own, none of the caller's.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBKIT_", "JSC_"))}
        env.update(HOME=str(t / "home"), WARDEN_STATE_DIR=str(t / "state"),
                   WARDEN_CONFIG=str(t / "config.toml"), WARDEN_SOCKET=str(t / "run" / "control.sock"))
        args = [str(app)] + (["--hidden"] if hidden else [])
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not (t / "run" / "control.sock").exists():  # the supervisor is up
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the app did not start (exit {proc.poll()})")
                time.sleep(0.1)
            time.sleep(settle)  # let the webview finish loading and the caches settle
            first = sample(proc.pid)
            peak = first["rss"]
            start = time.monotonic()
            while time.monotonic() - start < window:
                time.sleep(1)
                peak = max(peak, sample(proc.pid)["rss"])
            last = sample(proc.pid)
            return dict(last, peak=peak, cpu=(last["cpu"] - first["cpu"]) / window * 100, parts=parts(proc.pid))
        finally:
            for pid in tree(proc.pid)[1:]:  # the tray outlives the window by design
                try:
                    os.kill(pid, 15)
                except OSError:
                    pass
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", default=str(REPO / "target" / "release" / "warden-app"))
    ap.add_argument("--settle", type=float, default=10)
    ap.add_argument("--window", type=float, default=30)
    ap.add_argument("--out", default=str(REPO / "docs" / "bench" / "app-idle.md"))
    ap.add_argument("--deb", help="the .deb to size (default: the newest under target/release/bundle/deb)")
    a = ap.parse_args()
    debs = sorted((REPO / "target" / "release" / "bundle" / "deb").glob("*.deb"), key=lambda p: p.stat().st_mtime)
    deb = Path(a.deb) if a.deb else (debs[-1] if debs else None)
    app = Path(a.app)
    rows = []
    for label, hidden in (("window open (Servers page)", False), ("window closed (tray only)", True)):
        print(f"bench-app: {label}: settling {a.settle:.0f} s, measuring {a.window:.0f} s", flush=True)
        r = measure(app, hidden, a.settle, a.window)
        rows.append((label, r))
        print(f"bench-app:   RSS {r['rss'] / 2**20:.1f} MiB, PSS {r['pss'] / 2**20:.1f} MiB, private dirty {r['dirty'] / 2**20:.1f} MiB ({r['procs']} processes), CPU {r['cpu']:.2f} %", flush=True)
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    mib = lambda b: f"{b / 2**20:.1f} MiB"
    md = [
        "## Tray app at idle",
        "",
        "<!-- Generated by scripts/bench-app.sh; do not edit. -->",
        "",
        f"Release build as packaged (stripped), no servers, under Xvfb; {os.cpu_count()} × {cpu}, "
        f"Linux {platform.release()}, load average {os.getloadavg()[0]:.2f} at the end. Memory is summed "
        "over the app and every process it started (the tray, WebKit's web and network processes): RSS; PSS "
        "(each shared page divided among the processes that map it); private dirty (memory these "
        "processes alone have written: what they really cost); and private (dirty plus clean pages "
        "no other process maps, such as the app's own code). "
        f"CPU: their user+system time over {a.window:.0f} s after {a.settle:.0f} s of settling, as a "
        "share of one core. The closed window is the app started hidden (as at login: "
        "`warden-app --hidden` becomes the tray, `warden-tray`), the same state as after closing "
        "the window, whose process ends with it.",
        "",
        "| State | RSS | PSS | Private dirty | Private | Peak RSS | Processes | CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        md.append(f"| {label} | {mib(r['rss'])} | {mib(r['pss'])} | {mib(r['dirty'])} | {mib(r['private'])} "
                  f"| {mib(r['peak'])} | {r['procs']} | {r['cpu']:.2f} % |")
    opened, hidden = rows[0][1], rows[1][1]
    met = lambda ok: "yes" if ok else "**NO**"
    targets = [
        ("app hidden (as at login): RSS", mib(hidden["rss"]), "≤ 60 MiB", hidden["rss"] <= 60 * 2**20),
        ("app hidden: private dirty", mib(hidden["dirty"]), "≤ 25 MiB", hidden["dirty"] <= 25 * 2**20),
        ("app window open: RSS summed over its processes", mib(opened["rss"]), "≤ 250 MiB", opened["rss"] <= 250 * 2**20),
    ]
    if deb is not None:
        listing = subprocess.run(["dpkg-deb", "-c", str(deb)], check=True, capture_output=True, text=True).stdout
        app_bytes = next(int(l.split()[2]) for l in listing.splitlines() if l.endswith("usr/bin/warden-app"))
        deb_bytes = deb.stat().st_size
        targets += [
            ("shipped: `warden-app` in the .deb", f"{app_bytes / 1e6:.1f} MB", "≤ 16 MB", app_bytes <= 16e6),
            (f"shipped: the .deb (`{deb.name}`, with the `warden` CLI)", f"{deb_bytes / 1e6:.1f} MB", "≤ 10 MB", deb_bytes <= 10e6),
        ]
    md += ["", "| What | Measured | Target | Met |", "|---|---:|---|---|"]
    md += [f"| {what} | {value} | {target} | {met(ok)} |" for what, value, target, ok in targets]
    names = [p for p, _ in PARTS] + [OTHER]
    md += ["", "### Where the memory goes", "",
           "RSS of the same processes by what each mapped page belongs to (from `/proc/PID/smaps`, "
           "summed over the processes; a library mapped by two processes counts twice, as in RSS):", "",
           "| Part | window open | window closed |", "|---|---:|---:|"]
    md += [f"| {n} | {mib(opened['parts'].get(n, 0))} | {mib(hidden['parts'].get(n, 0))} |" for n in names]
    md += ["", "What sets these floors, and what would lower them:", "",
           "- The window: WebKitGTK renders in a web process of its own, which opens an EGL "
           "display and so loads the GL driver: with Mesa, the one driver file for every GPU and "
           "the whole LLVM it links, about 50 MB whether a GPU is there or not. WebKitGTK 2.50 "
           "refuses to start its web process without EGL (`Could not create default EGL display: "
           "EGL_BAD_PARAMETER. Aborting...`), so this part stays while the window is open. The "
           "window's own process loaded the driver too, only to ask EGL for a render node, until "
           "it turned WebKit's DMA-BUF renderer off (`webkit_defaults` in "
           "`src-tauri/app/src/lib.rs`, which says why) and named no node itself: 55 MiB less "
           "(418.5 to 363 MiB RSS; turning compositing off, as this benchmark did before, "
           "changes neither figure). JavaScriptCore's JIT is off too (`JSC_useJIT=false`, for "
           "safety: with it on, each of the window's three processes reserves 1 GiB of writable "
           "and executable memory), which took another 10 MiB of RSS and 8 of PSS (measured on "
           "b599330): the page's "
           "script is small. The figure includes the tray (the hidden row), which was the "
           "same process as the window before the split.",
           "- Hidden: only the tray runs, a process that never links WebKit (`scripts/test.sh` "
           "checks its dependencies), so what is left is GTK and the tray's libraries, its own code "
           "and its heap. The window is a second process, started from the tray's menu (or the "
           "desktop entry) and gone when closed, WebKit with it. Before this split the app linked "
           "WebKitGTK in the one process, and hidden held 70.1 MiB RSS, 15.6 MiB private dirty.",
           "- The .deb: `scripts/package.sh` repacks Tauri's gzip-compressed .deb with xz, dpkg's "
           "default (with the tray as a second program, gzip made it 11.1 MB).", ""]
    if deb is None:
        md += ["", "No .deb was built, so the package sizes are not measured: run `scripts/package.sh --deb`."]
    md += ["", "Reproduce: `scripts/bench-app.sh` (it builds the .deb with `scripts/package.sh --deb` first).", ""]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(md))
    print(f"bench-app: wrote {a.out}")


if __name__ == "__main__":
    main()
