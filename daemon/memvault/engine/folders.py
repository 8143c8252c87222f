"""A search's folder filter, named as the vault names its folders (issue 24).

``--folder people`` on a vault whose people folder is ``People/`` (``init`` adopted the
vault's own capitalised folders and wrote them to config.toml) found nothing: the
filter was matched against the paths as typed. A folder filter names the folder the
vault uses for that role (``people``, ``projects``, ``decisions``, ``logs``: the
folder of the MEMORY.md section of that name, ``VaultConfig.folder``), and is matched
as the filesystem matches names: on a disk that folds case (APFS, NTFS by default)
``people`` is the ``People/`` folder; on one that does not (ext4) it is not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from memvault.config import VaultConfig
from memvault.core.ranking import Filters
from memvault.vault.paths import folds_case


class FolderNames:
    """Resolves the folder of a search's filters against one vault."""

    def __init__(self, config: VaultConfig, paths: Callable[[], Iterable[str]]) -> None:
        self.config = config
        self._paths = paths  # the indexed notes' paths
        self._folds: bool | None = None  # asked of the disk once

    def resolve(self, filters: Filters) -> Filters:
        """``filters`` with its folder as the vault names it (unchanged without one)."""
        if not filters.folder:
            return filters
        folder = self.folder(filters.folder)
        return filters if folder == filters.folder else dataclasses.replace(filters, folder=folder)

    def folder(self, asked: str) -> str:
        head, _, rest = asked.strip("/").partition("/")
        wanted = "/".join(p for p in (self.config.folder(head), rest) if p)
        if self._folds is None:
            self._folds = folds_case(self.config.root)
        if not self._folds:
            return wanted
        prefix = wanted.casefold() + "/"
        for path in self._paths():
            if path.casefold().startswith(prefix):
                return path[: len(wanted)]  # the disk's spelling of it
        return wanted


__all__ = ["FolderNames"]
