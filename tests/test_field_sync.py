"""A vault kept in step by a file sync tool (Syncthing, Dropbox, Nextcloud, iCloud).

Found by the field test of a synced vault:

- a sync tool applies another machine's changes in one burst: a note deleted there and
  a new note made there from the same template (the same bytes: an empty daily log)
  arrived in one batch, and the sync took them for a rename of the one into the other,
  re-targeting a person's `[[2026-12-04]]` to `[[2026-12-05]]`. Obsidian does not:
  the deleted note's links stay, unresolved. Bytes that say nothing of their own (no
  chunk: empty, or a template's headings and hints) do not tell a rename; a rename
  the file system reported still does.
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers import DaemonProcess, eventually, new_vault, open_vault, write

EMPTY_DAY = "---\ntype: log\n---\n# Log\n\n%% what happened %%\n\n## Follow-ups\n"


def test_a_deleted_template_note_and_a_new_one_alike_are_no_rename(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "logs/2026-12-04.md", EMPTY_DAY)
    write(root, "people/carla.md", "# Carla\n\nSee [[2026-12-04]] for the standup.\n")
    with open_vault(root) as v:
        v.sync()
        # the sync tool's burst: the other machine deleted one day and began the next
        (root / "logs/2026-12-04.md").unlink()
        write(root, "logs/2026-12-05.md", EMPTY_DAY)
        report = v.sync(["logs/2026-12-04.md", "logs/2026-12-05.md"])
        assert report.moved == ()
        assert report.deleted == ("logs/2026-12-04.md",)
        assert report.created == ("logs/2026-12-05.md",)
        assert "[[2026-12-04]]" in (root / "people/carla.md").read_text(encoding="utf-8")
        # a full sync (the daemon's start, a reconcile) decides the same
        write(root, "logs/2026-12-06.md", EMPTY_DAY)
        (root / "logs/2026-12-05.md").unlink()
        write(root, "people/carla.md", "# Carla\n\nSee [[2026-12-05]] too.\n")
        v.sync()
        assert "[[2026-12-05]]" in (root / "people/carla.md").read_text(encoding="utf-8")


def test_a_note_with_words_of_its_own_is_still_followed_by_its_bytes(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "people/ana.md", "# Ana\n\nAna leads the data team.\n")
    write(root, "people/carla.md", "# Carla\n\nWorks with [[ana]].\n")
    with open_vault(root) as v:
        v.sync()
        os.rename(root / "people/ana.md", root / "people/ana-lopez.md")  # unseen: no event
        report = v.sync(["people/ana.md", "people/ana-lopez.md"])
        assert report.moved == (("people/ana.md", "people/ana-lopez.md"),)
        assert "[[ana-lopez]]" in (root / "people/carla.md").read_text(encoding="utf-8")


def test_an_empty_note_renamed_under_the_daemon_keeps_its_links(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "logs/2026-12-04.md", EMPTY_DAY)
    write(root, "people/carla.md", "# Carla\n\nSee [[2026-12-04]] for the standup.\n")
    daemon = DaemonProcess(tmp_path, root)
    try:
        daemon.ready(answering=True)
        carla = root / "people/carla.md"
        eventually(lambda: "[[logs/2026-12-04]]" in (root / "MEMORY.md").read_text("utf-8"))
        os.rename(root / "logs/2026-12-04.md", root / "logs/standup.md")  # the kernel says so
        eventually(lambda: "[[standup]]" in carla.read_text(encoding="utf-8"), 30)
    finally:
        assert daemon.stop() == 0
