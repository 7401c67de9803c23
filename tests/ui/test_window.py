"""The window's processes: its own process started by the host, no GL driver, none of its
WebKit settings in the host, no writable executable memory; its log file named in the footer."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By

from support import World, ours, exe_name, parent, hosts, webkit, windows


def test_the_window_is_a_process_of_its_own_started_by_the_host_which_serves_the_socket(world: World) -> None:
    """One program in two roles: the host, which the desktop entry started and which listens
    on the control socket, and the window, its child, which holds the web view's WebKit
    processes (the host holds none)."""
    [host] = hosts(world.root / "state")
    [window] = windows(world.root / "state")
    assert (world.status()["supervisor"]["pid"], parent(window), {parent(p) for p in webkit(world.root / "state")}) == (host, host, {window})


def test_the_window_process_maps_no_gl_driver(world: World) -> None:
    """WebKit's DMA-BUF renderer is off (window.rs, webkit_defaults), so the window's own
    process has no use for GL and does not load the driver (with Mesa, LLVM: about 50 MB);
    only its web process does."""
    [window] = windows(world.root / "state")
    gl = {line.split()[-1] for line in Path(f"/proc/{window}/maps").read_text().splitlines()
          if any(k in line for k in ("libLLVM", "_dri.so", "libgallium"))}
    assert not gl, gl


def test_the_host_has_none_of_the_windows_webkit_settings(world: World) -> None:
    """What the window sets for its own WebKit reaches its web process, and stays there: the
    host (and what the host opens or starts) does not have it."""
    mine = ours(world.root / "state")
    [tray_pid] = hosts(world.root / "state")
    web = [p for p in mine if "WebKitWebProcess" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")]
    names = (b"WEBKIT_DISABLE_DMABUF_RENDERER=", b"WEBKIT_WEB_RENDER_DEVICE_FILE=", b"JSC_useJIT=")
    settings = lambda pid: sorted(v for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                                  if v.startswith(names))
    assert ([settings(p) for p in web], settings(tray_pid)) == (
        [[b"JSC_useJIT=false", b"WEBKIT_DISABLE_DMABUF_RENDERER=1", b"WEBKIT_WEB_RENDER_DEVICE_FILE=/dev/null"]], [])


def test_no_process_of_the_window_maps_writable_executable_memory(world: World) -> None:
    """JavaScriptCore's JIT is off (window.rs, webkit_defaults): on, it reserves 1 GiB of memory
    that is writable and executable at once in the window and in each of its WebKit processes."""
    kinds = {"warden-app", "WebKitWebProcess", "WebKitNetworkProcess"}
    rwx = {}
    for pid in ours(world.root / "state"):
        if (name := exe_name(pid)) in kinds:
            try:
                maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
            except OSError:  # it ended meanwhile
                continue
            rwx[(pid, name)] = [line for line in maps if line.split()[1].startswith("rwx")]
    assert ({name for _, name in rwx}, [m for m in rwx.values() if m]) == (kinds, []), rwx


def test_the_host_keeps_a_log_file_that_the_footer_names(world: World) -> None:
    """The host logs to a file in the state dir too (a start line, then what stderr gets),
    for a bug report; the window's footer names it and opens it."""
    [host] = hosts(world.root / "state")
    log = (world.root / "state" / "warden-app.log").read_text()
    button = world.driver.find_element(By.CSS_SELECTOR, '[data-testid="open-app-log"]')
    assert (f"started (pid {host})" in log, "warden-app.log" in button.text) == (True, True)
