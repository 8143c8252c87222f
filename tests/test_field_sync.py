"""A vault kept in step by a file sync tool (Syncthing, Dropbox, Nextcloud, iCloud).

Found by the field test of a synced vault:

- a sync tool applies another machine's changes in one burst: a note deleted there and
  a new note made there from the same template (the same bytes: an empty daily log)
  arrived in one batch, and the sync took them for a rename of the one into the other,
  re-targeting a person's `[[2026-12-04]]` to `[[2026-12-05]]`. Obsidian does not:
  the deleted note's links stay, unresolved. Bytes that say nothing of their own (no
  chunk: empty, or a template's headings and hints) do not tell a rename; a rename
  the file system reported still does.
- a Dropbox conflict copy, `ana (Ana's MacBook's conflicted copy 2026-12-05).md`, was a
  note of its own: a second Ana in MEMORY.md's people and every hit on her twice in
  search (Syncthing's and Nextcloud's names were known, Dropbox's real form was not).
- the conflict copies memvault did know were passed by in silence: the other machine's
  words in them (the edit that lost the race) were in no search and nothing said so.
  `status` lists each, naming the note it is a copy of, from a full scan; the daemon
  makes one as a copy comes or goes.
- a folder made inside a dot-folder (`.git/objects/0a` at each commit the Obsidian Git
  plugin makes, `.obsidian/plugins/x`, Syncthing's `.stversions/people`, `.trash/old`)
  restarted the file watches and reconciled the whole vault: 0.3 s of CPU each at
  20,000 notes. No note can arrive there; only a folder that arrives where notes are
  (created, or moved in from `.trash/`) needs the watches renewed.
- an Excalidraw drawing (`.excalidraw.md`) outside the plugin's folder was described in
  MEMORY.md by the plugin's banner, `⚠ Switch to EXCALIDRAW VIEW in the MORE OPTIONS
  menu of this document. ⚠`, and titled "Excalidraw Data" (every drawing alike). Its
  first text element describes it; its file name is its title, as Obsidian shows it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import DaemonProcess, eventually, new_vault, open_vault, run_memvault, write
from memvault.vault.files import VaultFS
from test_watcher import start_watching

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


def test_a_folder_of_empty_notes_renamed_unseen_is_still_followed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "projects/alpha/plan.md", EMPTY_DAY)
    write(root, "people/carla.md", "# Carla\n\nSee [[projects/alpha/plan]].\n")
    with open_vault(root) as v:
        v.sync()
        (root / "projects/alpha").rename(root / "projects/beta")  # unseen: no event
        report = v.sync()
        assert report.moved == (("projects/alpha/plan.md", "projects/beta/plan.md"),)
        assert "[[plan]]" in (root / "people/carla.md").read_text(encoding="utf-8")


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


COPIES = {
    "people/ana.sync-conflict-20261205-101010-ABCDEFG.md": "Syncthing",
    "people/ana (conflicted copy 2026-12-05 101010).md": "Nextcloud",
    "people/ana (Ana's MacBook's conflicted copy 2026-12-05).md": "Dropbox",
    "people/ana (Ana's conflicted copy).md": "Dropbox, no date",
    "people/ana (Case Conflict).md": "Dropbox, case",
    "people/ana (Selective Sync Conflict).md": "Dropbox, selective sync",
    "people/ana_conflict-20261205-101010.md": "ownCloud",
}
ANA = "---\ntitle: Ana Lopez\n---\n# Ana Lopez\n\nAna leads the data team.\n"


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_a_sync_tools_conflict_copy_is_no_note_and_is_listed(tmp_path: Path, copy: str) -> None:
    root = tmp_path / "vault"
    write(root, "people/ana.md", ANA)
    write(root, copy, ANA.replace("data team", "data team and climbs"))
    scan = VaultFS(root).scan()
    assert sorted(scan.notes) == ["people/ana.md"]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert "conflict copy of people/ana.md" in reasons[copy]
    with open_vault(root) as v:
        v.sync()
        assert [h.path for h in v.search("Ana data team")] == ["people/ana.md"]
        listed = {p["path"]: p["reason"] for p in v.status()["problems"]}
        assert "merge what it adds into that note" in listed[copy]
    assert copy not in (root / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "name", ["people/ana 2.md", "people/ana-LAPTOP-1.md", "Conflict resolution.md"]
)
def test_names_a_person_gives_notes_stay_notes(tmp_path: Path, name: str) -> None:
    root = tmp_path / "vault"
    write(root, name, ANA)
    scan = VaultFS(root).scan()
    assert list(scan.notes) == [name] and scan.skipped == ()


def test_the_daemon_lists_a_conflict_copy_as_it_comes_and_goes(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana.md", ANA)
    daemon = DaemonProcess(tmp_path, root)
    env_status = ("status", "--vault", str(root))
    try:
        daemon.ready(answering=True)
        eventually(lambda: "[[people/ana]]" in (root / "MEMORY.md").read_text("utf-8"))
        copy = root / "people/ana (Ana's MacBook's conflicted copy 2026-12-05).md"
        # the sync tool writes its temp file, then renames it into place
        temp = root / "people/.dropbox-partial.tmp"
        temp.write_text(ANA.replace("team.", "team and climbs."), encoding="utf-8")
        os.rename(temp, copy)
        env = daemon_env(tmp_path)

        def listed() -> str:
            out = run_memvault(*env_status, env=env).stdout
            return out if "conflict copy of people/ana.md" in out else ""

        out = eventually(listed, 30, "the copy listed")
        assert "people/ana (Ana's MacBook's conflicted copy 2026-12-05).md" in out
        copy.unlink()  # merged and deleted
        eventually(lambda: not listed(), 30, "the copy no longer listed")
        assert "conflicted" not in (root / "MEMORY.md").read_text(encoding="utf-8")
    finally:
        assert daemon.stop() == 0


def daemon_env(tmp_path: Path) -> dict[str, str]:
    from helpers import memvault_env

    return memvault_env(tmp_path)


def test_a_folder_made_in_a_dot_folder_costs_no_reconcile(tmp_path: Path) -> None:
    watched = start_watching(tmp_path)
    try:
        watched.settle()
        renewals, batches = watched.watcher.observers.renewals, len(watched.batches)
        for folder in (".git/objects/0a", ".obsidian/plugins/dataview", ".stversions/people"):
            (watched.root / folder).mkdir(parents=True)
            write(watched.root, f"{folder}/data.json", "{}")
        write(watched.root, "people/marker.md", "# Marker\n\nA note after them.\n")
        eventually(lambda: watched.batched("people/marker.md"), 30, "the marker synced")
        watched.settle()
        assert watched.watcher.observers.renewals == renewals
        assert None not in watched.batches[batches:]  # no full reconcile
        # a folder restored from .trash/ brings notes: watched afresh, and indexed
        (watched.root / ".trash/old").mkdir(parents=True)
        write(watched.root, ".trash/old/kept.md", "# Kept\n\nMentions wombats.\n")
        os.rename(watched.root / ".trash/old", watched.root / "old")
        eventually(lambda: watched.watcher.observers.renewals > renewals, 30, "renewed")
        eventually(lambda: "old/kept.md" in watched.indexed(), 30, "the restored note")
        write(watched.root, "old/later/new.md", "# New\n\nMentions quokkas.\n")
        eventually(lambda: "old/later/new.md" in watched.indexed(), 30, "a note in it later")
    finally:
        watched.watcher.stop()
        watched.vault.close()


DRAWING = """---

excalidraw-plugin: parsed
tags: [excalidraw]

---
==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠== You can \
decompress Drawing data with the command palette: 'Decompress current Excalidraw file'. \
For more info check in plugin settings under 'Saving'


# Excalidraw Data

## Text Elements
Architecture sketch for the billing service ^abc123

Owned by [[carla]] ^def456

%%
## Drawing
```json
{"type": "excalidraw", "version": 2, "elements": [{"id": "abc123", "type": "text"}]}
```
%%
"""


def test_an_excalidraw_drawing_is_described_by_its_words_not_the_plugins(
    tmp_path: Path,
) -> None:
    root = new_vault(tmp_path)
    write(root, "billing-architecture.excalidraw.md", DRAWING)
    with open_vault(root) as v:
        v.sync()
        hit = v.search("billing architecture sketch", k=1)[0]
        assert hit.title == "billing-architecture.excalidraw"
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    line = next(x for x in memory.splitlines() if "billing-architecture" in x)
    assert line == (
        "- [[billing-architecture.excalidraw]] - Architecture sketch for the billing service"
    )
