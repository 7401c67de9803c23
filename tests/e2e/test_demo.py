"""scripts/demo.py (the bridge alone in front of a real server, shown in the README): keep it working."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import NpmBins, REPO_ROOT


def test_the_demo_runs(warden_bin: Path, npm_bins: NpmBins) -> None:
    out = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "demo.py"), str(warden_bin)],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    assert "through the bridge" in out.stdout
    assert "progress 6/6" in out.stdout
    assert "Request timed out" in out.stdout and "idle_timeout_ms" in out.stdout
    assert '"kind":"session_end"' in out.stdout
