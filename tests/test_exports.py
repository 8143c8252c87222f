"""The public surface: everything in __all__ resolves; nothing heavy on import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import memvault

ROOT = Path(__file__).resolve().parents[1]


def test_every_exported_name_resolves() -> None:
    for name in memvault.__all__:
        assert getattr(memvault, name) is not None, name
    assert set(memvault.__all__) >= {
        "Vault",
        "SyncReport",
        "Hit",
        "Context",
        "MemvaultError",
        "UnsafePath",
    }


def test_errors_form_one_tree() -> None:
    errors = [
        getattr(memvault, n)
        for n in memvault.__all__
        if n.endswith(("Error", "Found", "Path", "Exists", "Conflict", "Corrupt", "Held"))
    ]
    assert all(issubclass(e, memvault.MemvaultError) for e in errors)


def test_importing_memvault_is_light() -> None:
    code = "import sys, memvault; print([m for m in ('numpy', 'hnswlib', 'torch') if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "daemon"), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"
