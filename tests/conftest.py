"""Shared fixtures: where ``../shared`` is, and a skip with a clear reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` beside the repository, or ``$COMPANION_SHARED`` when set."""
    env = os.environ.get("COMPANION_SHARED")
    return Path(env) if env else (REPO.parent / "shared")


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not path.is_dir():
        pytest.skip(
            f"shared folder not found beside the repository ({path.name}/); "
            "set COMPANION_SHARED"
        )
    return path


@pytest.fixture(scope="session")
def realdata(shared: Path) -> Path:
    path = shared / "realdata"
    if not path.is_dir():
        pytest.skip("../shared/realdata is absent: the real-photo checks need it")
    return path
