"""The Raspberry Pi installer and systemd unit pass their linters (shellcheck, systemd-analyze).

Both tools are Debian packages (``apt-get install -y shellcheck systemd``); each test skips with
the reason when its tool is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PI = Path(__file__).resolve().parents[2] / "raspberry-pi"


def test_install_script_passes_shellcheck():
    tool = shutil.which("shellcheck")
    if tool is None:
        pytest.skip("shellcheck not installed (apt-get install -y shellcheck)")
    result = subprocess.run(
        [tool, "--severity=style", str(PI / "install.sh")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_install_script_is_executable_and_strict():
    script = PI / "install.sh"
    text = script.read_text()
    assert script.stat().st_mode & 0o111, "install.sh must be executable"
    assert "set -euo pipefail" in text
    for package in ("python3-picamera2", "python3-opencv", "python3-lgpio", "python3-gpiozero"):
        assert package in text
    assert "--system-site-packages" in text
    assert re.search(r"usermod -a -G gpio,video,dialout", text)


def test_systemd_unit_passes_systemd_analyze_verify(tmp_path):
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze not installed (apt-get install -y systemd)")
    unit = (PI / "companion.service").read_text()
    # verify checks that ExecStart exists: point it at this interpreter (installed path on a Pi).
    unit = unit.replace("/opt/companion/venv/bin/companion", sys.executable)
    (tmp_path / "companion.service").write_text(unit)
    result = subprocess.run(
        [tool, "verify", "--man=no", str(tmp_path / "companion.service")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.strip() == "", result.stderr


def test_systemd_unit_is_notify_with_watchdog_and_dedicated_user():
    unit = (PI / "companion.service").read_text()
    settings = dict(
        line.split("=", 1) for line in unit.splitlines() if "=" in line and line[:1].isalpha()
    )
    assert settings["Type"] == "notify"
    assert int(settings["WatchdogSec"]) > 0
    assert settings["Restart"] == "always"
    assert settings["User"] == "companion"
    assert set(settings["SupplementaryGroups"].split()) == {"gpio", "video", "dialout"}
    # hardening must not hide the camera / GPIO / serial devices
    assert "PrivateDevices" not in settings
    assert settings["NoNewPrivileges"] == "yes"
