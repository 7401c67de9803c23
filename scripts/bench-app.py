#!/usr/bin/env python3
"""Idle memory and CPU of the app as a user meets it, and how fast its window shows; writes
docs/bench/app-idle.md (included by docs/BENCHMARKS.md).

Run under a display, e.g. `xvfb-run -a .venv/bin/python scripts/bench-app.py`
(scripts/bench-app.sh does that and builds the release app first; python-xlib comes from the
test venv). The app runs with a temporary HOME, state and D-Bus session bus, so it supervises
nothing and meets no other Warden: this is its floor. One run, in the order a user goes:

1. at rest: `warden-app --hidden`, as the login entry starts it (the host alone);
2. window open: `warden-app` again, as from the desktop entry, which hands over to the host
   (tauri-plugin-single-instance), and the host starts the window's process;
3. window closed: the window closed as a window manager does (WM_DELETE_WINDOW).

Memory is summed over the host and every process it started (the window, WebKit's web and
network processes); CPU is their user+system time over the measuring window, as a share of
one core.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import subprocess
import sys
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
    (APP_PART := "the app's own code (`warden-app`)", ("warden-app",)),
    ("heap, stacks and other anonymous memory", ("[heap]", "[anon]", "[stack", "SYSV", "memfd:", "/dev/shm", "[anon:")),
]

OTHER = "other libraries: libc, libstdc++ and the long tail WebKit links (GStreamer, AV1 codecs, libsoup, SQLite...)"


def parts(pids: list[int], field: str = "Rss:") -> dict[str, int]:
    """`field` (RSS by default) of processes `pids` by part (`PARTS`), summed from every
    /proc/PID/smaps."""
    out: dict[str, int] = {}
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps").read_text()
        except OSError:
            continue
        name = "[anon]"
        for line in text.splitlines():
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                name = head[5] if len(head) > 5 else "[anon]"
            elif head and head[0] == field:
                part = next((p for p, keys in PARTS if any(k in name for k in keys)), OTHER)
                out[part] = out.get(part, 0) + int(head[1]) * 1024
    return out


def x_window(d, title: str):
    """The viewable X window titled `title`, or None."""
    from Xlib import X

    def find(w):
        try:
            if w.get_wm_name() == title and w.get_attributes().map_state == X.IsViewable:
                return w
            children = w.query_tree().children
        except Exception:  # a window that went away meanwhile
            return None
        for child in children:
            found = find(child)
            if found:
                return found
        return None

    return find(d.screen().root)


def painted(win) -> bool:
    """Whether the window shows a page: more than a few colours (a blank window has one or two)."""
    from Xlib import X

    g = win.get_geometry()
    raw = win.get_image(0, 0, g.width, min(g.height, 200), X.ZPixmap, 0xFFFFFFFF).data
    return len({raw[i:i + 3] for i in range(0, len(raw), 4 * 7)}) > 8


def close_window(d, win) -> None:
    """WM_DELETE_WINDOW, as a window manager's close button sends it."""
    from Xlib import X, protocol

    protocols, delete = d.intern_atom("WM_PROTOCOLS"), d.intern_atom("WM_DELETE_WINDOW")
    win.send_event(protocol.event.ClientMessage(window=win, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])))
    d.flush()


def webkit(root: int) -> list[int]:
    return [p for p in tree(root) if "WebKit" in Path(f"/proc/{p}/comm").read_text(errors="replace")]


def until(what: str, cond, timeout: float = 60) -> float:
    """Polls `cond` every 10 ms; the seconds it took."""
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > timeout:
            raise SystemExit(f"bench-app: {what}: not within {timeout:.0f} s")
        time.sleep(0.01)
    return time.monotonic() - start


def measure(pid: int, settle: float, window: float) -> dict:
    """The process tree of `pid` over `window` seconds, after `settle`."""
    time.sleep(settle)  # let the page finish loading and the caches settle
    first = sample(pid)
    peak = first["rss"]
    start = time.monotonic()
    while time.monotonic() - start < window:
        time.sleep(1)
        peak = max(peak, sample(pid)["rss"])
    last = sample(pid)
    own = rollup(pid)
    return dict(last, peak=peak, cpu=(last["cpu"] - first["cpu"]) / window * 100, parts=parts(tree(pid)),
                dirty_parts=parts(tree(pid), "Private_Dirty:"), own_rss=own.get("Rss", 0), own_pss=own.get("Pss", 0),
                by_process=by_process(pid))


def by_process(root: int) -> list[tuple[str, int, int, dict[str, int]]]:
    """Each process of the tree: its role, PSS, private dirty and PSS by part."""
    out = []
    for pid in tree(root):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            r = rollup(pid)
        except OSError:
            continue
        role = ("the host" if pid == root else "the window (`warden-app`)" if comm == "warden-app"
                else "WebKit's web process" if comm.startswith("WebKitWebProc")
                else "WebKit's network process" if comm.startswith("WebKitNetwork") else comm)
        out.append((role, r.get("Pss", 0), r.get("Private_Dirty", 0), parts([pid], "Pss:")))
    return out


@contextlib.contextmanager
def world():
    """A temporary HOME, state dir, socket and D-Bus session bus: a first start, meeting no
    other Warden. Yields the folder and the app's environment."""
    with tempfile.TemporaryDirectory(prefix="warden-bench-app-") as tmp:
        t = Path(tmp)
        (t / "run").mkdir(mode=0o700)
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address=unix:path={t / 'bus'}"],
                               stdout=subprocess.PIPE, text=True)
        # The app as it ships: its WebKit settings are its own, none of the caller's.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBKIT_", "JSC_"))}
        env.update(HOME=str(t / "home"), WARDEN_STATE_DIR=str(t / "state"), DBUS_SESSION_BUS_ADDRESS=bus.stdout.readline().strip(),
                   WARDEN_CONFIG=str(t / "config.toml"), WARDEN_SOCKET=str(t / "run" / "control.sock"))
        try:
            yield t, env
        finally:
            bus.terminate()
            bus.wait()


@contextlib.contextmanager
def host_at_rest(app: Path, t: Path, env: dict):
    """`warden-app --hidden`, as the login entry starts it, once its supervisor listens."""
    host = subprocess.Popen([str(app), "--hidden"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until("the supervisor listens", lambda: (t / "run" / "control.sock").exists() or host.poll() is not None)
        if host.poll() is not None:
            raise SystemExit(f"bench-app: the app did not start (exit {host.poll()})")
        yield host
    finally:
        host.terminate()
        try:
            host.wait(timeout=10)
        except subprocess.TimeoutExpired:
            host.kill()


def mapped_files(pid: int) -> list[str]:
    """The files process `pid` maps (the app and its libraries)."""
    names = {line.split(maxsplit=5)[5] for line in Path(f"/proc/{pid}/maps").read_text().splitlines() if len(line.split(maxsplit=5)) == 6}
    return sorted(n for n in names if n.startswith("/") and Path(n).is_file())


def evict(files: list[str]) -> int:
    """Drops `files` from the page cache, as after a reboot (pages a running process maps
    stay); how many it could."""
    done = 0
    for f in files:
        try:
            fd = os.open(f, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            done += 1
        finally:
            os.close(fd)
    return done


@contextlib.contextmanager
def cpu_load():
    """A busy loop on every core, as a build beside the app makes."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for b in burners:
            b.kill()
            b.wait()


def written_back(path: Path) -> None:
    """Has the kernel write `path` to disk now, as dpkg does with each file it installs."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def run(app: Path, settle: float, window: float) -> tuple[list[tuple[str, dict]], dict, list[tuple[str, dict]], dict]:
    """The three states' figures; the times: the window mapped and painted after the second
    start, WebKit gone after the close; the rest figure of more starts: a first start with the
    app and its libraries out of the page cache, and a start beside a CPU load; and a start of
    a copy of the app written moments before."""
    from Xlib import display

    # A file written moments ago (the build, the unpacked .deb) has dirty pages in the page
    # cache until the kernel writes it back, and a process mapping them shows them as its
    # private dirty memory: the app as installed has none.
    written_back(app)

    with world() as (t, env), host_at_rest(app, t, env) as host:
        d = display.Display()
        try:
            rows = [("at rest: started hidden, as at login (the host)", measure(host.pid, settle, window))]
            files = mapped_files(host.pid)
            times = {}
            print(f"bench-app: at rest: {summary(rows[-1][1])}", flush=True)
            clicked = time.monotonic()
            subprocess.run([str(app)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=30)
            until("the window is shown", lambda: x_window(d, TITLE) is not None)
            times["mapped"] = time.monotonic() - clicked
            win = x_window(d, TITLE)
            until("the window shows its page", lambda: painted(win))
            times["painted"] = time.monotonic() - clicked
            print(f"bench-app: window shown {times['mapped']:.2f} s after the second start, its page {times['painted']:.2f} s", flush=True)
            rows.append(("window open (Servers page)", measure(host.pid, settle, window)))
            print(f"bench-app: window open: {summary(rows[-1][1])}", flush=True)
            close_window(d, x_window(d, TITLE))
            closed = time.monotonic()
            until("WebKit ends with the window", lambda: not webkit(host.pid) and len(tree(host.pid)) == 1)
            times["webkit_gone"] = time.monotonic() - closed
            rows.append(("window closed (the host again)", measure(host.pid, settle, window)))
            print(f"bench-app: window closed: WebKit gone in {times['webkit_gone']:.2f} s; {summary(rows[-1][1])}", flush=True)
        finally:
            d.close()
    starts = []
    with world() as (t, env):
        evicted = evict(files)
        with host_at_rest(app, t, env) as host:
            label = f"at rest, a first start with cold caches ({evicted} files of the app and its libraries dropped from the page cache)"
            starts.append((label, measure(host.pid, settle, window)))
    print(f"bench-app: {starts[-1][0]}: {summary(starts[-1][1])}", flush=True)
    with world() as (t, env), cpu_load(), host_at_rest(app, t, env) as host:
        label = f"at rest, started beside a CPU load (a busy loop on each of the {os.cpu_count()} cores, as a build makes)"
        starts.append((label, measure(host.pid, settle, window)))
    print(f"bench-app: {starts[-1][0]}: {summary(starts[-1][1])}", flush=True)
    with tempfile.TemporaryDirectory(dir=app.parent, prefix=".bench-app-") as d, world() as (t, env):
        fresh = Path(d) / app.name
        shutil.copy2(app, fresh)
        with host_at_rest(fresh, t, env) as host:
            unwritten = measure(host.pid, 3, 1)
    print(f"bench-app: a copy written moments before: {summary(unwritten)}", flush=True)
    return rows, times, starts, unwritten


TITLE = "MCP Warden"


def summary(r: dict) -> str:
    return (f"RSS {r['rss'] / 2**20:.1f} MiB, PSS {r['pss'] / 2**20:.1f} MiB, private dirty "
            f"{r['dirty'] / 2**20:.1f} MiB ({r['procs']} processes), CPU {r['cpu']:.2f} %")


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
    rows, times, starts, unwritten = run(Path(a.app), a.settle, a.window)
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    mib = lambda b: f"{b / 2**20:.1f} MiB"
    md = [
        "## The app at idle",
        "",
        "<!-- Generated by scripts/bench-app.sh; do not edit. -->",
        "",
        f"Release build as packaged (stripped), no servers, under Xvfb, with a D-Bus session bus of its own; "
        f"{os.cpu_count()} × {cpu}, Linux {platform.release()}, load average {os.getloadavg()[0]:.2f} at the end. "
        "One run, in the order a user goes: the app started hidden, as at login (the host alone); "
        "then `warden-app` again, as from the desktop entry, which hands over to the host, and the "
        "host starts the window's process; then the window closed as a window manager closes it. "
        "Memory is summed over the host and every process it started (the window, WebKit's web "
        "and network processes): RSS; PSS (each shared page divided among the processes that map "
        "it); private dirty (memory these processes alone have written: what they really cost); "
        "and private (dirty plus clean pages no other process maps, such as the app's own code). "
        f"CPU: their user+system time over {a.window:.0f} s after {a.settle:.0f} s of settling, as a "
        "share of one core.",
        "",
        "| State | RSS | PSS | Private dirty | Private | Peak RSS | Processes | CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows + starts:
        md.append(f"| {label} | {mib(r['rss'])} | {mib(r['pss'])} | {mib(r['dirty'])} | {mib(r['private'])} "
                  f"| {mib(r['peak'])} | {r['procs']} | {r['cpu']:.2f} % |")
    rest, opened, closed = (r for _, r in rows)
    met = lambda ok: "yes" if ok else "**NO**"
    grew = closed["dirty"] - rest["dirty"]
    at_rest = [("at rest", rest)] + [(label.split(" (")[0], r) for label, r in starts]
    targets = []
    for what, r in at_rest:
        targets += [
            (f"{what}: RSS", mib(r["rss"]), "≤ 80 MiB", r["rss"] <= 80 * 2**20),
            (f"{what}: private dirty", mib(r["dirty"]), "≤ 14 MiB", r["dirty"] <= 14 * 2**20),
        ]
    targets += [
        ("window open: RSS summed over its processes", mib(opened["rss"]), "≤ 352.5 MiB", opened["rss"] <= 352.5 * 2**20),
        ("window open: PSS summed over its processes", mib(opened["pss"]), "≤ 170 MiB", opened["pss"] <= 170 * 2**20),
        ("window shown after the second start (mapped; its page painted)",
         f"{times['mapped']:.2f} s; {times['painted']:.2f} s", "≤ 1.5 s", times["painted"] <= 1.5),
        ("window closed: no WebKit process left after", f"{times['webkit_gone']:.2f} s", "≤ 5 s", times["webkit_gone"] <= 5),
        ("window closed: the host's private dirty over its figure at rest", f"{grew / 2**20:+.1f} MiB", "≤ +4 MiB", grew <= 4 * 2**20),
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
           "| Part | " + " | ".join(label.split(":")[0].split(" (")[0] for label, _ in rows) + " |",
           "|---|" + "---:|" * len(rows)]
    md += [f"| {n} | " + " | ".join(mib(r["parts"].get(n, 0)) for _, r in rows) + " |" for n in names]
    md += ["", "The window open, by process: PSS (each shared page divided among the processes "
           "mapping it), private dirty, and the largest parts of its PSS:", "",
           "| Process | PSS | Private dirty | Largest parts of its PSS |", "|---|---:|---:|---|"]
    md += [f"| {role} | {mib(pss)} | {mib(dirty)} | "
           + "; ".join(f"{n.split(' (')[0].split(':')[0]} {mib(v)}" for n, v in sorted(by.items(), key=lambda kv: -kv[1])[:3]) + " |"
           for role, pss, dirty, by in opened["by_process"]]
    dirty = sorted(rest["dirty_parts"].items(), key=lambda kv: -kv[1])
    md += ["", "What sets these floors, and what would lower them:", "",
           f"- At rest, private dirty ({mib(rest['dirty'])}) by part: "
           + "; ".join(f"{name.split(' (')[0]} {mib(v)}" for name, v in dirty if v >= 2**19)
           + ". WebKit's and flite's share is the relocations the dynamic loader writes into "
           "their data when the host maps them (it links WebKitGTK because Tauri does, and "
           "WebKitGTK links flite); no code of theirs runs at rest. The heap is what GTK, Tauri "
           "and the supervisor keep: by `heaptrack` at rest, 3.65 MB live, 1.4 MB of it GTK's "
           "theme (the tray's icon theme has GTK parse its whole Adwaita style sheet), 0.4 MB "
           "X11 and fonts, 0.14 MB Tauri's plugins (the single-instance plugin's D-Bus "
           "connection), the rest small. Two large ones are gone: the supervisor's event channel "
           "allocates its ring of 1024 slots at start, and a slot now holds a pointer, not an "
           "event (0.49 MB before); and the shell plugin's `open`, which nothing uses, is off "
           "in tauri.conf.json (its URL regex, compiled at start, 0.15 MB). The host gives back "
           "what it frees after its start and after each window (`malloc_trim`, "
           "`src-tauri/app/src/memory.rs`), and caps malloc at two arenas. Below that, the host "
           "would need another GTK theme, which the tray's menu shows where there is no "
           "AppIndicator, or no WebKit mapped: a host that is not a Tauri app, against the "
           "design card.",
           "- At rest: the host is a Tauri app, as the design card asks, so it links WebKitGTK "
           "(Tauri 2 always builds its runtime on wry) and maps it at start; but it creates no "
           "web view, so WebKit starts no process and allocates next to nothing: its pages are "
           "shared, clean and mapped from the library files, in RSS but not in private dirty. "
           "Before, a tray without Tauri (tao, tray-icon and muda alone) held 30.7 MiB RSS and "
           "6.2 MiB private dirty; that is the card's cost.",
           "- The window: WebKitGTK renders in a web process of its own, which opens an EGL "
           "display and so loads the GL driver: with Mesa, the one driver file for every GPU and "
           "the whole LLVM it links, about 50 MB whether a GPU is there or not. WebKitGTK 2.50 "
           "refuses to start its web process without EGL, so this part stays while the window is "
           "open. The window's own process turns WebKit's DMA-BUF renderer off and names no "
           "render node (`webkit_defaults` in `src-tauri/app/src/window.rs`, which says why), so "
           "it does not load the driver itself, and JavaScriptCore's JIT off "
           "(`JSC_useJIT=false`: no writable and executable memory). WebKit's own switches for "
           "what the window does not use (WebGL, media, WebAudio, the page cache, the "
           "document-viewer cache model, a hardware acceleration policy of never) were each "
           "tried, and all together: none moved the window's PSS by more than 1.5 MiB (204.6 to "
           "206.3 MiB against 205.1 to 205.3 MiB without them, a build with symbols), since none "
           "of them unmaps a library, so the app sets none of them. What is left is the code and "
           "data of the libraries each process maps (the table above).",
           f"- Window open: RSS sums each shared page once for every process that maps it, and "
           f"the host maps the same WebKit, GTK and flite pages as the window: the host counts "
           f"{mib(opened['own_rss'])} RSS there ({mib(opened['own_pss'])} PSS), and the window's "
           f"processes alone {mib(opened['rss'] - opened['own_rss'])} (with the tray of before, "
           "which mapped none of them, the sum was 352.5 MiB, the window's processes 321.8). So "
           "the RSS sum is over its target by about the host's size, the cost of the design "
           "card's Tauri host; PSS shares each page out among the processes mapping it, and so "
           "counts what the host adds once. "
           + ("It is under its target." if opened["pss"] <= 170 * 2**20 else
              f"It is {mib(opened['pss'] - 170 * 2**20)} over its target: the GL driver and WebKit's "
              "own processes, which the window needs while it is open (the rows above)."),
           f"- A start moments after the app's file was written (a build, a copy, an unpack "
           f"that skips `fsync`) counts more: a copy started 3 s after it was written showed "
           f"{mib(unwritten['dirty'])} private dirty, "
           f"{mib(unwritten['dirty_parts'].get(APP_PART, 0))} of it the app's own file. "
           "Those are the file's pages in the page cache, dirty until the kernel writes them "
           "back (within about 30 s), and mapped by the host, not memory it wrote. dpkg writes "
           "each file back as it installs it, so the installed app never shows them; this script "
           "writes the app back before its runs.",
           "- Closed: the window is a process of its own, so closing it ends it and WebKit's "
           "processes with it, and gives all their memory back; the host is as it was at rest.",
           "- The .deb: `scripts/package.sh` repacks Tauri's gzip-compressed .deb with xz at its "
           "highest setting (`xz -9e`).", ""]
    if deb is None:
        md += ["", "No .deb was built, so the package sizes are not measured: run `scripts/package.sh --deb`."]
    md += ["", "Reproduce: `scripts/bench-app.sh` (it builds the .deb with `scripts/package.sh --deb` first).", ""]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(md))
    print(f"bench-app: wrote {a.out}")


if __name__ == "__main__":
    main()
