"""A vault on a disk that takes ``Note.md`` and ``note.md`` for one name, as macOS
(APFS) and Windows (NTFS) do: a real exFAT file system, through FUSE on a loop device
(exFAT also has no hard links, no symlinks, no POSIX permissions). The mount needs root
and Debian's ``exfat-fuse`` and ``exfatprogs`` (``.ci/run`` installs them); without
them these tests fail, saying what is missing (the fixtures: tests/casefs.py; a team's
clone on such a disk: test_pg_casefs.py)."""

from __future__ import annotations

import os
import subprocess
import unicodedata
from pathlib import Path

import pytest

from helpers import DaemonProcess, open_vault
from memvault.vault.paths import folds_case
from memvault.vault.template import init_vault


def test_the_disk_folds_case_and_memvault_knows_it(place: Path) -> None:
    root = place / "vault"
    init_vault(root)
    assert (root / "memory.md").read_bytes() == (root / "MEMORY.md").read_bytes()
    assert folds_case(root)


def _indexed(vault) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(p for p in vault.engine.store.manifest() if p != "MEMORY.md")


def test_add_creates_a_note_on_a_disk_without_hard_links(place: Path) -> None:
    """A new note was linked into place (``link`` never overwrites): exFAT has no hard
    links, and every ``add`` failed with "Operation not permitted", nothing written."""
    root = place / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        made = vault.add("people", "Alice Martin", summary="Payments lead")
        assert made.path == "people/alice-martin.md"
        assert "Payments lead" in (root / "people" / "alice-martin.md").read_text()
        assert _indexed(vault) == ["people/alice-martin.md"]
        assert "[[people/alice-martin]] - Payments lead" in (root / "MEMORY.md").read_text()
        with pytest.raises(Exception, match="already exists"):
            vault.add("people", "Alice Martin")  # still never over a note there
        assert [p.name for p in (root / "people").iterdir()] == ["alice-martin.md"]


def test_a_note_renamed_in_case_only_is_one_note_in_the_index(place: Path) -> None:
    """``mv alice.md Alice.md``: the old name still opens the file on such a disk, so
    the watcher's sync kept its row beside the new one: two people in search, status
    and MEMORY.md ("1 more note says the same")."""
    root = place / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        vault.add("people", "Alice", summary="Payments lead")
        vault.add("people", "Bob", body="Works with [[alice]].")
        os.rename(root / "people" / "alice.md", root / "people" / "Alice.md")
        vault.sync(
            ["people/alice.md", "people/Alice.md"], moves=[("people/alice.md", "people/Alice.md")]
        )
        assert _indexed(vault) == ["people/Alice.md", "people/bob.md"]
        memory = (root / "MEMORY.md").read_text()
        assert "- [[people/Alice]] - Payments lead\n" in memory
        assert "more note" not in memory
        # Bob's link left as written, as on ext4 and by Obsidian: it still leads there
        assert (root / "people" / "bob.md").read_text().endswith("Works with [[alice]].\n")
        assert [h.path for h in vault.search("Payments lead", group=True)][:1] == [
            "people/Alice.md"
        ]


def test_a_folder_renamed_in_case_only_moves_its_notes(place: Path) -> None:
    root = place / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        vault.add("people", "Alice", summary="Payments lead")
        os.rename(root / "people", root / "People")
        vault.sync(["people", "People"], moves=[("people", "People")])
        assert _indexed(vault) == ["People/alice.md"]


def test_add_writes_into_the_persons_folder_spelt_as_the_disk_has_it(place: Path) -> None:
    """config.toml says ``people``, the person named the folder ``People/``: one folder
    on such a disk. ``add`` said "created people/carol.md", the file went into
    ``People/``, and the index never had it (its sync looked for ``people/carol.md``);
    ``add --update`` of a note there said it "already exists"."""
    root = place / "vault"
    init_vault(root)
    (root / "people").rmdir()
    (root / "People").mkdir()
    (root / "People" / "Bob.md").write_text("# Bob\n\nSRE.\n")
    with open_vault(root) as vault:
        vault.sync()
        made = vault.add("people", "Carol", summary="Designer")
        assert made.path == "People/carol.md"
        assert sorted(os.listdir(root / "People")) == ["Bob.md", "carol.md"]
        assert _indexed(vault) == ["People/Bob.md", "People/carol.md"]
        changed = vault.add("people", "Bob", body="On call this week.", update=True)
        assert changed.path == "People/Bob.md"
        assert sorted(os.listdir(root / "People")) == ["Bob.md", "carol.md"]
        assert (root / "People" / "Bob.md").read_text().endswith("On call this week.\n")
        assert "On call this week." in vault.get("People/Bob.md").text
        config = [p["reason"] for p in vault.status()["problems"] if p["kind"] == "config"]
        assert config == [
            "the section 'Key People' lists the folder people/, which the vault "
            "spells People/ (this disk takes the two for one name, but MEMORY.md lists a "
            "folder's notes as config.toml spells it, as a clone on Linux must): in "
            '.memvault/config.toml change folder = "people" to folder = "People" (a daemon '
            "reads it when restarted)"
        ]
        asked = vault.get("people/BOB.md")  # (MCP memory_get said "people/BOB.md", "BOB")
        assert (asked.path, asked.title) == ("People/Bob.md", "Bob")
        # found by its title, as Obsidian names a file: its path as the disk spells it
        (root / "People" / "Sarah Chen.md").write_text("# Sarah Chen\n\nCTO.\n")
        vault.sync()
        changed = vault.add("people", "Sarah Chen", body="Likes Rust.", update=True)
        assert changed.path == "People/Sarah Chen.md"


def test_the_memory_tool_writes_into_the_persons_folder_and_renames_in_case_only(
    place: Path,
) -> None:
    """An agent's ``/memories/people/...`` lands in the person's ``People/``, indexed
    as the disk spells it; a rename in case only (a note, a folder) was refused: "The
    destination ... already exists" (the old name is that destination on such a disk)."""
    root = place / "vault"
    init_vault(root)
    (root / "people").rmdir()
    (root / "People").mkdir()
    (root / "People" / "Bob.md").write_text("# Bob\n\nSRE.\n")
    with open_vault(root) as vault:
        vault.sync()
        vault.memory_tool(
            {"command": "create", "path": "/memories/people/carol.md", "file_text": "# Carol\n"}
        )
        vault.memory_tool(
            {
                "command": "str_replace",
                "path": "/memories/people/bob.md",
                "old_str": "SRE.",
                "new_str": "SRE, on call.",
            }
        )
        assert sorted(os.listdir(root / "People")) == ["Bob.md", "carol.md"]
        assert _indexed(vault) == ["People/Bob.md", "People/carol.md"]
        said = vault.memory_tool(
            {
                "command": "rename",
                "old_path": "/memories/People/Bob.md",
                "new_path": "/memories/People/bob.md",
            }
        )
        assert said.startswith("Successfully renamed")
        assert sorted(os.listdir(root / "People")) == ["bob.md", "carol.md"]
        assert (root / "People" / "bob.md").read_text() == "# Bob\n\nSRE, on call.\n"
        vault.memory_tool(
            {"command": "rename", "old_path": "/memories/People", "new_path": "/memories/people"}
        )
        assert "people" in os.listdir(root) and "People" not in os.listdir(root)
        assert _indexed(vault) == ["people/bob.md", "people/carol.md"]
        assert "[[people/bob]]" in (root / "MEMORY.md").read_text()


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


def test_notes_git_keeps_in_two_cases_are_named_by_status(place: Path, tmp_path: Path) -> None:
    """Made on Linux, ``people/Ana.md`` and ``people/ana.md`` pulled here are one file:
    git checks out one (a pull says nothing), the other's words are in git only, and
    status said "index matches the files on disk"."""
    source = tmp_path / "source"
    init_vault(source)
    (source / "people" / "Ana.md").write_text("# Ana\n\nAna from sales.\n")
    (source / "people" / "ana.md").write_text("# ana\n\nana from support.\n")
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "two Anas")
    _git(place, "clone", "-q", str(source), "vault")
    root = place / "vault"
    assert len(os.listdir(root / "people")) == 1
    with open_vault(root) as vault:
        vault.sync()
        problems = [p for p in vault.status()["problems"] if p["kind"] == "git"]
    assert [p["path"] for p in problems] == ["people/Ana.md"]
    said = problems[0]["reason"]
    assert "(people/Ana.md, people/ana.md)" in said
    assert "the one file here is people/" in said
    assert "git show HEAD:people/" in said


def test_names_this_disk_keeps_apart_are_no_twins_to_status(place: Path, tmp_path: Path) -> None:
    """``Straße.md`` and ``STRASSE.md`` (ß folds to ss, yet exFAT, NTFS and APFS keep
    them apart), ``Café.md`` composed and decomposed (exFAT keeps Unicode forms apart),
    ``People/a.md`` beside ``people/b.md`` (one folder here, both files in it): a clone
    checks out every one, nothing is in git only, yet status said "git keeps 2 files
    whose names differ only in case" and told the person to ``git mv`` them."""
    source = tmp_path / "source"
    init_vault(source)
    cafe = "Caf\u00e9.md"
    names = ["Stra\u00dfe.md", "STRASSE.md", cafe, unicodedata.normalize("NFD", cafe)]
    for i, name in enumerate(names):
        (source / "projects" / name).write_text(f"# Note {i}\n\nWords {i}.\n")
    (source / "People").mkdir()
    (source / "People" / "a.md").write_text("# a\n")
    (source / "people" / "b.md").write_text("# b\n")
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "notes")
    _git(place, "clone", "-q", str(source), "vault")
    root = place / "vault"
    assert sorted(os.listdir(root / "projects")) == sorted(names)  # four files here
    assert sorted(os.listdir(root / "people")) == ["a.md", "b.md"]
    with open_vault(root) as vault:
        vault.sync()
        assert [p for p in vault.status()["problems"] if p["kind"] == "git"] == []


def test_memory_md_renamed_in_case_only_is_still_the_index_and_named_back(place: Path) -> None:
    """A person's ``Memory.md`` is memvault's MEMORY.md on such a disk: a sync and an
    ``add`` go on (none said "MEMORY.md already exists"), and memvault's next write of
    it gives it back the name config.toml says."""
    root = place / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        vault.sync()
        os.rename(root / "MEMORY.md", root / "Memory.md")
        vault.sync()
        vault.add("people", "Zed", summary="Zed of ops")
        assert "MEMORY.md" in os.listdir(root) and "Memory.md" not in os.listdir(root)
        assert "[[people/zed]] - Zed of ops" in (root / "MEMORY.md").read_text()
        assert sorted(vault.engine.store.manifest()) == ["MEMORY.md", "people/zed.md"]


def test_the_daemon_says_its_token_is_open_to_every_user_on_a_disk_without_permissions(
    place: Path, tmp_path: Path
) -> None:
    """exFAT keeps no permissions: daemon.json, made 0600, is 0777 there, and the HTTP
    API's token in it readable by any user of the machine; nothing said so."""
    root = place / "vault"
    init_vault(root)
    daemon = DaemonProcess(tmp_path, root)
    try:
        daemon.ready()
        assert os.stat(root / ".memvault" / "daemon.json").st_mode & 0o077
    finally:
        daemon.stop()
    assert "daemon.json is readable by every user of this machine" in daemon.stderr
    assert "keeps no permissions (exFAT, FAT, a Windows drive in WSL" in daemon.stderr


def test_an_update_of_a_note_renamed_in_case_meanwhile_keeps_the_persons_name(
    place: Path,
) -> None:
    """A relink writing ``Note1.md`` while the person renamed it ``note1.md`` (a daemon
    field test: 200 notes renamed during a relink were all named back): the swap onto
    the old name renamed the file back there. As on ext4, the old name is gone: the
    note is not found, and the watcher's move brings the relink to its new name."""
    from memvault.errors import NoteNotFound
    from memvault.vault.files import VaultFS

    fs = VaultFS(place)
    for n in (1, 2, 3):
        (place / f"Note{n}.md").write_text(f"See [[hub]] {n}.\n")
    os.rename(place / "Note1.md", place / "note1.md")
    os.rename(place / "Note2.md", place / "note2.md")
    with pytest.raises(NoteNotFound):
        fs.update_text("Note1.md", lambda t: t.replace("hub", "center"))
    done = fs.update_texts(
        {p: lambda t: t.replace("hub", "center") for p in ("Note2.md", "Note3.md")}
    )
    assert isinstance(done["Note2.md"], NoteNotFound) and done["Note3.md"] is True
    assert sorted(os.listdir(place)) == ["Note3.md", "note1.md", "note2.md"]
    assert (place / "note1.md").read_text() == "See [[hub]] 1.\n"
    assert (place / "Note3.md").read_text() == "See [[center]] 3.\n"


def test_disconnect_gives_a_changed_file_its_name_back_on_a_disk_without_hard_links(
    place: Path,
) -> None:
    """``disconnect`` takes a file out by renaming it aside, then checks it: one that
    changed gets its name back by a hard link, which exFAT refused (EPERM), leaving the
    person's file under a hidden temp name."""
    from memvault.interfaces.cli.connect import _remove_if

    path = place / "CLAUDE.md"
    path.write_text("my own words\n")
    assert _remove_if(path, "0" * 64) is False
    assert os.listdir(place) == ["CLAUDE.md"]
    assert path.read_text() == "my own words\n"


def test_a_disk_without_the_exchange_leaves_it_to_the_others(place: Path, tmp_path: Path) -> None:
    """exFAT has no renameat2(RENAME_EXCHANGE): its EINVAL turned the exchange off for the
    whole process, and a vault on ext4 in it lost what the exchange protects (a save that
    lands between memvault's check and its swap is swapped straight back; a run of
    test_memory_race after these tests lost a person's edit)."""
    from memvault.vault.swap import exchange

    (place / "a").write_text("a")
    (place / "b").write_text("b")
    assert exchange(place / "a", place / "b") is False
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    assert exchange(tmp_path / "a", tmp_path / "b") is True
    assert (tmp_path / "a").read_text() == "b"


def test_a_new_note_killed_between_its_claim_and_its_rename_is_finished(place: Path) -> None:
    """A new note on a disk without hard links: its name claimed empty, then its temp
    file renamed onto the claim. Killed in between, the next start deleted the temp
    file: the words gone, an empty note left, and the agent's retry told "already
    exists". Now the temp file is renamed onto its claim; a person's empty note, older
    than a temp file beside it, is left as it is."""
    root = place / "vault"
    init_vault(root)
    people = root / "people"
    (people / "empty.md").write_text("")
    old = os.stat(people / "empty.md").st_mtime_ns
    os.utime(people / "empty.md", ns=(old - 60 * 10**9, old - 60 * 10**9))
    (people / ".empty.md.memvault-tmp-0badf00d").write_text("# not the person's\n")
    (people / ".alice.md.memvault-tmp-1234abcd").write_text("# Alice\n\nPayments lead.\n")
    (people / "alice.md").touch()  # the claim
    with open_vault(root) as vault:
        assert sorted(os.listdir(people)) == ["alice.md", "empty.md"]
        assert (people / "alice.md").read_text() == "# Alice\n\nPayments lead.\n"
        assert (people / "empty.md").read_text() == ""
        vault.sync()
        assert "people/alice.md" in vault.engine.store.manifest()


def test_a_save_through_another_case_of_a_notes_name_is_indexed(place: Path) -> None:
    """A program that opens ``people/ALICE.md`` writes into the person's
    ``people/alice.md`` on such a disk, and the watcher names the path as the program
    spelt it: the sync took it for a file not there (its folder lists no ALICE.md) and
    the new words stayed out of the index until a full scan."""
    root = place / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        vault.add("people", "Alice", summary="Payments lead")
        with open(root / "people" / "ALICE.md", "a", encoding="utf-8") as fh:
            fh.write("\nOwns the zanzibar rollout.\n")
        report = vault.sync(["people/ALICE.md"])
        assert report.modified == ("people/alice.md",)
        assert report.vanished == ()  # (a daemon rescans the vault for a note vanished)
        assert _indexed(vault) == ["people/alice.md"]


def test_a_vault_named_in_another_case_is_one_vault_with_one_writer(
    place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/mnt/usb/VAULT`` opens the vault at ``/mnt/usb/vault`` on such a disk, but
    exFAT through FUSE gives each spelling a file of its own: its lock (and index.db's
    SQLite locks) held through one spelling did not stop a writer through the other.
    Two writers opened, both wrote, and the exFAT driver died ("Transport endpoint is
    not connected"). The vault's folder is named as the disk lists it."""
    from memvault.config import VaultConfig
    from memvault.errors import LockHeld

    root = place / "vault"
    init_vault(root)
    other = place / "VAULT"
    assert VaultConfig.load(other).root == root
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "0.2")
    with open_vault(root) as vault:
        vault.add("people", "Alice", summary="Payments lead")
        with pytest.raises(LockHeld):
            open_vault(other)


def test_a_name_renamed_into_nfd_is_found_though_its_folder_kept_its_mtime(place: Path) -> None:
    """exFAT leaves a folder's mtime as it was when a name in it is renamed, and the
    folder's NFD names were kept by that mtime: a note renamed ``Café.md`` decomposed
    (as a Mac spells it) after memvault had looked in its folder was not found under
    its name, and a note made there was a second ``Café.md`` beside it, of the same look."""
    from memvault.errors import NoteExists
    from memvault.vault.files import VaultFS

    fs = VaultFS(place)
    cafe = "Caf\u00e9.md"
    (place / "draft.md").write_text("# Café\n\nThe espresso notes.\n")
    before = os.stat(place).st_mtime_ns
    assert fs.path(cafe) == place / cafe  # (not there yet: its folder looked at)
    os.rename(place / "draft.md", place / unicodedata.normalize("NFD", cafe))
    assert os.stat(place).st_mtime_ns == before  # what exFAT does
    assert fs.read(cafe).decoded.text == "# Café\n\nThe espresso notes.\n"
    with pytest.raises(NoteExists):
        fs.create(cafe, "# Another Café\n")
    assert os.listdir(place) == [unicodedata.normalize("NFD", cafe)]


def test_an_upper_case_md_alone_is_told_the_name_to_take(place: Path) -> None:
    """``Fact.MD`` alone in its folder: status (a scan, and a sync of its path) said
    "Fact.md beside it is another note, which a rename onto it would replace: give it
    another name, Fact 2.md" (the look-up of ``Fact.md`` opened ``Fact.MD`` itself on
    such a disk), where ``mv Fact.MD Fact.md`` is the rename that makes it a note."""
    root = place / "vault"
    init_vault(root)
    (root / "Fact.MD").write_text("The quokka budget review moves to Thursday.\n")
    with open_vault(root) as vault:
        for report in (vault.sync(), vault.sync(["Fact.MD"])):
            (why,) = [s.reason for s in report.skipped if s.path == "Fact.MD"]
            assert why.endswith("(rename it Fact.md to have it indexed)")
        said = vault.memory_tool(
            {"command": "rename", "old_path": "/memories/Fact.MD", "new_path": "/memories/Fact.md"}
        )
        assert said.startswith("Successfully renamed")
        assert os.listdir(root).count("Fact.md") == 1 and "Fact.MD" not in os.listdir(root)
        assert vault.engine.store.note("Fact.md") is not None


def test_a_note_renamed_in_case_while_a_relink_batch_reads_the_others_keeps_its_name(
    place: Path,
) -> None:
    """A relink batch lists each folder once, when it reads the notes, and swaps them
    all after: ``Note1.md`` renamed ``note1.md`` by a person while the batch read the
    notes after it was still listed as ``Note1.md``, and its swap named it back (on
    ext4 the old name is gone: not found, the person's name kept). The names are
    listed again after the batch's reads, just before its swaps."""
    from memvault.errors import NoteNotFound
    from memvault.vault.files import VaultFS

    for n in (1, 2, 3):
        (place / f"Note{n}.md").write_text(f"See [[hub]] {n}.\n")
    fs = VaultFS(place)

    def renamed_meanwhile(text: str) -> str:  # the person's rename, mid-batch
        os.rename(place / "Note1.md", place / "note1.md")
        return text.replace("hub", "center")

    done = fs.update_texts(
        {
            "Note1.md": lambda t: t.replace("hub", "center"),
            "Note2.md": renamed_meanwhile,
            "Note3.md": lambda t: t.replace("hub", "center"),
        }
    )
    assert isinstance(done["Note1.md"], NoteNotFound)
    assert done["Note2.md"] is True and done["Note3.md"] is True
    assert sorted(os.listdir(place)) == ["Note2.md", "Note3.md", "note1.md"]
    assert (place / "note1.md").read_text() == "See [[hub]] 1.\n"


def test_a_folder_of_upper_case_md_files_is_listed_once_a_scan_or_sync(
    place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``Fact.MD`` the scan met listed its whole folder again (is a ``Fact.md``
    beside it, or is that the same file in another case?): a folder of 10,000 of them
    took 45 s to scan on exFAT, not 2 s, at each status and each ``view /memories``.
    Each folder is listed once a scan, and once a sync of such paths."""
    from memvault.vault import paths

    root = place / "vault"
    init_vault(root)
    (root / "facts").mkdir()
    for i in range(30):
        (root / "facts" / f"Fact {i}.MD").write_text(f"Fact {i}.\n")
    calls: list[str] = []
    real = os.listdir
    monkeypatch.setattr(paths.os, "listdir", lambda p: calls.append(p) or real(p))
    with open_vault(root) as vault:
        for paths_ in (None, [f"facts/Fact {i}.MD" for i in range(30)]):
            report = vault.sync(paths_)
            reasons = {s.path: s.reason for s in report.skipped if s.path.endswith(".MD")}
            assert len(reasons) == 30, reasons
            assert reasons["facts/Fact 7.MD"].endswith("(rename it Fact 7.md to have it indexed)")
            listed = [c for c in calls if str(c).endswith("facts")]
            assert len(listed) <= 1, (paths_ is None, listed)
            calls.clear()
