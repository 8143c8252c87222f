"""A disk that takes ``Note.md`` and ``note.md`` for one name, as macOS (APFS) and
Windows (NTFS) do: a real exFAT file system, through FUSE on a loop device (exFAT also
has no hard links, no symlinks, no POSIX permissions). The mount needs root and Debian's
``exfat-fuse`` and ``exfatprogs`` (``.ci/run`` installs them); without them the tests
using it fail, saying what is missing. The fixtures ``casefs`` and ``place``
(conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _run(*args: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.fail(
            f"cannot mount an exFAT disk for these tests: {' '.join(args)}: "
            f"{(done.stderr or done.stdout).strip()}"
        )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def casefs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh exFAT file system mounted for this module (a folder of it per test)."""
    missing = [t for t in ("mkfs.exfat", "mount.exfat-fuse", "losetup") if not shutil.which(t)]
    if missing:
        pytest.fail(
            f"cannot mount an exFAT disk for these tests: {', '.join(missing)} missing "
            "(apt-get install -y exfat-fuse exfatprogs)"
        )
    if os.geteuid() != 0:
        pytest.fail("cannot mount an exFAT disk for these tests: losetup and mount need root")
    base = tmp_path_factory.mktemp("casefs")
    image, mnt = base / "exfat.img", base / "mnt"
    mnt.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(64 * 1024 * 1024)
    _run("mkfs.exfat", str(image))
    loop = _run("losetup", "-f", "--show", str(image))
    try:
        _run("mount.exfat-fuse", loop, str(mnt))
        try:
            yield mnt
        finally:
            subprocess.run(["umount", str(mnt)], check=False, timeout=60)
    finally:
        subprocess.run(["losetup", "-d", loop], check=False, timeout=60)


@pytest.fixture
def place(casefs: Path) -> Path:
    """A folder of this test's own on the exFAT disk."""
    here = casefs / f"case-{uuid.uuid4().hex[:8]}"  # (a letter: folds_case tries its name)
    here.mkdir()
    return here
