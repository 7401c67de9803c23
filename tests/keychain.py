"""A private OS keychain for tests: a D-Bus session bus with gnome-keyring's Secret Service (an
unlocked login keyring) under a temp folder, never the user's own. Shared by tests/ui and
tests/e2e."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def private_keychain(root: Path) -> tuple[str, list[subprocess.Popen]]:
    """The bus address and the processes to stop. Started without the test's environment, so
    that they are not taken for a test's leftovers."""
    for tool in ("dbus-daemon", "gnome-keyring-daemon", "gdbus"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is missing: scripts/setup.sh installs it", pytrace=False)
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root / "keyring")}
    (root / "keyring").mkdir()
    (root / "keyring-run").mkdir(mode=0o700)
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address=unix:path={root / 'bus'}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=base,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().strip()
    keyring = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**base, "DBUS_SESSION_BUS_ADDRESS": address, "XDG_DATA_HOME": str(root / "keyring"),
             "XDG_RUNTIME_DIR": str(root / "keyring-run")},
    )
    assert keyring.stdin is not None
    keyring.stdin.write(b"test")
    keyring.stdin.close()
    subprocess.run(["gdbus", "wait", "--session", "--timeout", "20", "org.freedesktop.secrets"],
                   env={**base, "DBUS_SESSION_BUS_ADDRESS": address}, check=True, timeout=30)
    return address, [keyring, bus]
