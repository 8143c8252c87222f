"""The links table's verdicts of a note that did not change, after the files it links
come, go or change case: those of a fresh index of the same files (review of
0fcb838..49c9285; on a real pull of obsidian-help, 29dda15 -> master, 2,225 link rows
kept ``resolved`` where a fresh index says ``ambiguous``). Pre-existing: a sync
resolves only the links of the notes it indexes (and, for aliases, ``_resolve_again``),
so a link into a deleted note stays ``resolved`` to it. Readers judge links live
(``link_problems``), so what goes wrong is what reads the stored verdicts:
``unresolved_targets`` (an alias given later is never tried on such a link) and
``sources_linking``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from helpers import open_vault, write


def _verdicts(root: Path, source: str) -> list[tuple[int, str, str, str | None, tuple[str, ...]]]:
    with open_vault(root) as v:
        v.sync()
        return sorted(
            (r.line, r.target, r.verdict, r.resolved, r.candidates)
            for r in v.engine.store.links(source)
        )


def test_an_unchanged_notes_link_verdicts_follow_the_files_it_links(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "a.md", "# A\n\nSee [[b]].\n\nAnd [[c]].\n\nAnd [[d]].\n")
    for name in ("b", "c", "d"):
        write(root, f"{name}.md", f"# {name}\n\nText.\n")
    with open_vault(root) as v:
        v.sync()
        (root / "b.md").unlink()  # gone: [[b]] leads nowhere
        os.rename(root / "c.md", root / "C.md")  # [[c]] leads to C.md
        write(root, "x/d.md", "# d too\n\nText.\n")  # [[d]] is ambiguous now
        v.sync()
        kept = sorted(
            (r.line, r.target, r.verdict, r.resolved, r.candidates)
            for r in v.engine.store.links("a.md")
        )
    fresh = tmp_path / "fresh"
    shutil.copytree(
        root, fresh, ignore=shutil.ignore_patterns("index.db*", "vectors.bin", "cache.db*")
    )
    assert kept == _verdicts(fresh, "a.md")
