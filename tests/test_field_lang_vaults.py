"""Real notes in other languages, used as a person would (field test, stop 53: a Russian
digital garden and a Chinese PARA vault, both public): what broke, kept from breaking
again on small vaults of the same kind built here."""

from __future__ import annotations

import json
import os
import subprocess
import time
import unicodedata
from pathlib import Path

from helpers import (
    DaemonProcess,
    eventually,
    memvault_env,
    new_vault,
    open_vault,
    run_memvault,
    write,
)
from memvault.vault.template import init_vault

RUSSIAN_PEOPLE = (
    '[[memory.sections]]\nname = "люди"\ntitle = "Люди"\nfolder = "Люди"\n'
    'order = "updated"\nlimit = 8\n'
)


def _with_section(root: Path, section: str) -> None:
    config = root / ".memvault" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n" + section, encoding="utf-8")


def test_a_section_named_in_russian_is_written_once_however_often_memory_md_is_written(
    tmp_path: Path,
) -> None:
    # config.toml lets a section's name be letters of any script (`люди`); MEMORY.md's
    # markers were read as ASCII only, so the section was never found in the file and
    # each write added it again at the end: three writes, three "## Люди"
    root = new_vault(tmp_path)
    _with_section(root, RUSSIAN_PEOPLE)
    write(root, "Люди/Анна.md", "---\nsummary: Ведёт команду данных.\n---\n# Анна\n")
    with open_vault(root) as vault:
        vault.sync()
        write(root, "Люди/Борис.md", "---\nsummary: Пишет код.\n---\n# Борис\n")
        vault.sync()
        vault.log("Переименовал папку gamedev в геймдев")
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.count("## Люди") == 1, text
    assert text.count("<!-- memvault:begin люди -->") == 1, text
    block = text.split("<!-- memvault:begin люди -->")[1].split("<!-- memvault:end люди -->")[0]
    assert block.splitlines()[1:] == [  # no dates: by name
        "- [[Люди/Анна]] - Ведёт команду данных.",
        "- [[Люди/Борис]] - Пишет код.",
    ], block


def test_a_section_named_in_an_indic_script_is_taken_and_written_once(tmp_path: Path) -> None:
    # "letters of any script": a Hindi name's vowel signs (लोग: ो is a combining mark,
    # not a letter to str.isalnum) were refused by config.toml's check, and the
    # markers' pattern (\w) would not have read them; Tamil's, Bengali's alike
    root = new_vault(tmp_path)
    _with_section(
        root,
        '[[memory.sections]]\nname = "लोग"\ntitle = "लोग"\nfolder = "लोग"\norder = "title"\n',
    )
    write(root, "लोग/अनीता.md", "---\nsummary: डेटा टीम चलाती हैं।\n---\n# अनीता\n")
    with open_vault(root) as vault:
        vault.sync()
        write(root, "लोग/बोरिस.md", "---\nsummary: कोड लिखते हैं।\n---\n# बोरिस\n")
        vault.sync()
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.count("<!-- memvault:begin लोग -->") == 1, text
    assert text.count("## लोग") == 1, text
    block = text.split("<!-- memvault:begin लोग -->")[1].split("<!-- memvault:end लोग -->")[0]
    assert "[[लोग/अनीता]]" in block and "[[लोग/बोरिस]]" in block, text


def test_a_section_name_typed_decomposed_is_one_section_whatever_form_memory_md_keeps(
    tmp_path: Path,
) -> None:
    # A name pasted from a Mac's file name is decomposed (NFD: e and a combining acute).
    # MEMORY.md saved by an editor that composes its text (NFC) then held a marker no
    # longer spelt as config.toml's name: not found, the section added again
    root = new_vault(tmp_path)
    name = unicodedata.normalize("NFD", "décisions")
    _with_section(root, f'[[memory.sections]]\nname = "{name}"\ntitle = "Déc"\nfolder = "Déc"\n')
    write(root, "Déc/Kafka.md", "---\nsummary: Events through Kafka.\n---\n# Kafka\n")
    memory = root / "MEMORY.md"
    with open_vault(root) as vault:
        vault.sync()
        memory.write_text(unicodedata.normalize("NFC", memory.read_text("utf-8")), "utf-8")
        write(root, "Déc/Redis.md", "---\nsummary: A cache.\n---\n# Redis\n")
        vault.sync()
    text = unicodedata.normalize("NFC", memory.read_text(encoding="utf-8"))
    assert text.count("<!-- memvault:begin décisions -->") == 1, text
    assert "[[Déc/Redis]] - A cache." in text, text


def _search(tmp_path: Path, root: Path, query: str) -> list[str]:
    out = run_memvault("search", query, "--json", "--vault", str(root), env=memvault_env(tmp_path))
    assert out.returncode == 0, out.stderr
    return [h["path"] for h in json.loads(out.stdout)["hits"]]


def test_a_note_saved_in_a_folder_a_mac_named_stays_found_under_the_daemon(
    tmp_path: Path,
) -> None:
    # A vault copied from a Mac keeps its names decomposed (NFD: ё is е and a combining
    # diaeresis). The watcher names the folder of such a note in NFC, for the engine to
    # learn its names by a scan; the engine looked for that folder as NFC spelt it, did
    # not find it, and took its notes for deleted: each save of one dropped it from search
    root = new_vault(tmp_path)
    folder = unicodedata.normalize("NFD", "forge/Объёмы йогуртов")
    note = root / folder / unicodedata.normalize("NFD", "Йогурт.md")
    write(root, f"{folder}/{note.name}", "# Йогурт\n\nЖирность три процента.\n")
    daemon = DaemonProcess(tmp_path, root)
    try:
        daemon.ready(answering=True)
        eventually(lambda: _search(tmp_path, root, "жирность"), 30, "the note indexed")
        with open(note, "a", encoding="utf-8") as fh:  # an editor's save, in place
            fh.write("\nСметана тоже.\n")
        eventually(lambda: _search(tmp_path, root, "сметана"), 30, "the saved note found")
        assert _search(tmp_path, root, "жирность") == ["forge/Объёмы йогуртов/Йогурт.md"]
    finally:
        assert daemon.stop() == 0


def test_a_save_in_a_section_folder_a_mac_named_keeps_the_section_in_memory_md(
    tmp_path: Path,
) -> None:
    # A French vault from a Mac: `init` takes its Décisions/ (NFD on disk) for decisions.
    # One save of one note there, under the daemon, emptied the whole section: every
    # note of the folder was taken for deleted
    root = tmp_path / "notes"
    folder = unicodedata.normalize("NFD", "Décisions")
    write(root, f"{folder}/Kafka.md", "---\nsummary: Les événements passent par Kafka.\n---\n")
    write(root, f"{folder}/Postgres.md", "---\nsummary: On garde PostgreSQL.\n---\n")
    init_vault(root)
    daemon = DaemonProcess(tmp_path, root)
    memory = root / "MEMORY.md"
    lines = [
        "- [[Décisions/Kafka]] - Les événements passent par Kafka.",
        "- [[Décisions/Postgres]] - On garde PostgreSQL.",
    ]
    try:
        daemon.ready(answering=True)
        eventually(lambda: all(line in memory.read_text("utf-8") for line in lines), 30)
        with open(root / folder / "Kafka.md", "a", encoding="utf-8") as fh:
            fh.write("\nEt Zookeeper.\n")
        eventually(lambda: _search(tmp_path, root, "Zookeeper"), 30, "the saved note found")
        assert all(line in memory.read_text("utf-8") for line in lines)
    finally:
        assert daemon.stop() == 0


def test_a_rename_after_a_commit_warns_of_no_note_kept_busy(tmp_path: Path) -> None:
    # The Chinese vault commits itself (Obsidian Git, every few minutes). The first rename
    # after a commit found git's files changed since the last sync, so MEMORY.md waited
    # for the next sync (0.1 s later) — and the daemon warned that it "kept changing,
    # stayed open for writing in another program or moved meanwhile": it had not
    root = new_vault(tmp_path)
    write(root, "笔记/数据库迁移.md", "# 数据库迁移\n\n三月迁移到 PostgreSQL。\n")
    write(root, "日志.md", "见 [[数据库迁移]]。\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    daemon = DaemonProcess(tmp_path, root)
    try:
        daemon.ready(answering=True)
        eventually(lambda: "[[日志]]" in (root / "MEMORY.md").read_text("utf-8"), 30)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "自动备份"], check=True)
        time.sleep(1)  # the commit's own events synced first, as Obsidian Git's are
        os.rename(root / "笔记/数据库迁移.md", root / "笔记/PostgreSQL 迁移.md")
        log = root / "日志.md"
        eventually(lambda: "[[PostgreSQL 迁移]]" in log.read_text("utf-8"), 30)
    finally:
        assert daemon.stop() == 0
    assert "kept changing" not in daemon.stderr, daemon.stderr[-3000:]


def test_a_folder_in_both_unicode_forms_on_ext4_keeps_the_notes_of_each(tmp_path: Path) -> None:
    # ext4 keeps `Décisions/` in NFC and in NFD apart: two folders (one made on Linux, one
    # synced from a Mac), whose notes have the same keys (`Décisions/...`, NFC). A scan of
    # that folder, as the watcher asks for one (a note there with an NFC twin), walked
    # the one spelt as asked, and took every note of the other for deleted
    root = new_vault(tmp_path)
    nfc, nfd = "Décisions", unicodedata.normalize("NFD", "Décisions")
    write(root, f"{nfc}/Kafka.md", "# Kafka\n\nEvents go through Kafka.\n")
    write(root, f"{nfd}/Postgres.md", "# Postgres\n\nWe keep PostgreSQL.\n")
    vault = open_vault(root)
    try:
        vault.sync()
        both = {"Décisions/Kafka.md", "Décisions/Postgres.md"}
        assert both <= {n.path for n in vault.engine.store.notes()}
        write(root, f"{nfd}/Kafka.md", "# Kafka\n\nA twin of another form.\n")
        vault.sync(["Décisions"])  # the folder's scan, as the watcher asks
        assert both <= {n.path for n in vault.engine.store.notes()}
        for folder in (nfc, nfd):  # each spelling's scan is the folder's, both forms
            vault.sync([folder])
            assert both <= {n.path for n in vault.engine.store.notes()}
        assert vault.search("PostgreSQL", k=3)[0].path == "Décisions/Postgres.md"
    finally:
        vault.close()
