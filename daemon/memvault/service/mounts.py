"""Where the vault lives, for the watcher: the filesystem type of its mount (native
events miss changes made elsewhere on a network or FUSE mount, so those are polled)
and what to tell a person when the inotify limits run out."""

from __future__ import annotations

import errno
import os
from pathlib import Path

# inotify does not see changes made by other machines on these (nor by the host on 9p/virtiofs).
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "afs",
        "ncpfs",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "davfs",
        "vboxsf",
        "virtiofs",
        "fuse",
    }
)


def mount_fs_type(path: Path, mounts: str = "/proc/mounts") -> str | None:
    """The filesystem type of the mount holding ``path`` (Linux), or None."""
    try:
        lines = Path(mounts).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].encode().decode("unicode_escape")  # \040 for spaces
        if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, kind = point, parts[2]
    return kind


def is_network_fs(kind: str | None) -> bool:
    return kind is not None and (kind in NETWORK_FS or kind.startswith("fuse."))


def limit_advice(exc: OSError) -> str:
    if exc.errno == errno.EMFILE:
        return (
            "the inotify instance limit is reached; raise it with "
            "`sudo sysctl fs.inotify.max_user_instances=1024` "
            "(persist it in /etc/sysctl.d/)"
        )
    return (
        "the inotify watch limit is reached (one watch per folder); raise it with "
        "`sudo sysctl fs.inotify.max_user_watches=524288` (persist it in /etc/sysctl.d/)"
    )


__all__ = ["NETWORK_FS", "is_network_fs", "limit_advice", "mount_fs_type"]
