"""Engine.sync: MEMORY.md upkeep, relinking and incremental indexing, end to end."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from helpers import make_vault, note, open_vault, rebuilt_snapshot, run_namespaced, snapshot, write
from memvault.core.excerpts import unit_texts
from memvault.core.ranking import Filters
from memvault.core.text import sha256_text
from memvault.errors import MemvaultError
from memvault.index.embedder import HashEmbedder


def mtimes(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): p.stat().st_mtime_ns
        for p in root.rglob("*.md")
        if ".memvault" not in p.parts
    }


def section(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    a = lines.index(f"<!-- memvault:begin {name} -->")
    b = lines.index(f"<!-- memvault:end {name} -->")
    return lines[a + 1 : b]


def test_first_sync_adopts_the_template_and_writes_nothing(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    before = mtimes(root)
    with open_vault(root) as v:
        report = v.sync()
        # the notes: MEMORY.md is the index of them, not a note created
        notes = [p for p in before if not p.startswith("templates/") and p != "MEMORY.md"]
        assert sorted(report.created) == sorted(notes)
        assert not report.memory_written and report.embedded_chunks > 0
        again = v.sync()
    assert mtimes(root) == before
    assert not again.changed and again.embedded_chunks == 0


def test_create_modify_delete_keep_memory_md_true(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        write(
            root,
            "decisions/2024-05-01-use-kafka.md",
            note("Use Kafka", "Events go through Kafka.", date="2024-05-01", status="accepted"),
        )
        v.sync()
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert (
            section(memory, "decisions")[0]
            == "- [[decisions/2024-05-01-use-kafka]] - Events go through Kafka."
        )

        write(
            root,
            "decisions/2024-05-01-use-kafka.md",
            note("Use Kafka", "Events go through Kafka, not RabbitMQ.", date="2024-05-01"),
        )
        v.sync()
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert (
            "- [[decisions/2024-05-01-use-kafka]] - Events go through Kafka, not RabbitMQ."
            in memory
        )

        (root / "decisions/2024-05-01-use-kafka.md").unlink()
        report = v.sync()
        assert report.deleted == ("decisions/2024-05-01-use-kafka.md",)
        assert "use-kafka" not in (root / "MEMORY.md").read_text(encoding="utf-8")
        assert not v.engine.store.chunks_of("decisions/2024-05-01-use-kafka.md")


def test_rename_retargets_links_everywhere_keeping_anchor_and_alias(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(
        root,
        "projects/notes-on-sarah.md",
        note(
            "Notes on Sarah",
            body="Ask [[people/sarah-chen#Working with Sarah|Sarah]] first. See [[sarah-chen]].",
        ),
    )
    with open_vault(root) as v:
        v.sync()
        os.rename(root / "people/sarah-chen.md", root / "people/sarah-chen-lead.md")
        report = v.sync()
        assert report.moved == (("people/sarah-chen.md", "people/sarah-chen-lead.md"),)
        # the renamed note costs nothing; the notes whose links were rewritten changed
        assert set(report.relinked) >= {
            "projects/notes-on-sarah.md",
            "projects/ai-assistant-refactor.md",
        }
    text = (root / "projects/notes-on-sarah.md").read_text(encoding="utf-8")
    assert "[[sarah-chen-lead#Working with Sarah|Sarah]] first. See [[sarah-chen-lead]]." in text
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "[[people/sarah-chen-lead]]" in memory and "[[people/sarah-chen]]" not in memory
    for rel in (
        "projects/ai-assistant-refactor.md",
        "decisions/2024-03-12-why-postgresql.md",
        "logs/2024-03-15.md",
    ):
        body = (root / rel).read_text(encoding="utf-8")
        assert "sarah-chen]]" not in body and "sarah-chen|" not in body, rel


def test_renaming_a_titled_note_embeds_nothing(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(
        root,
        "decisions/lonely.md",
        note("Lonely decision", "Nobody links here.", date="2020-01-01"),
    )
    with open_vault(root) as v:
        v.sync()
        shutil.move(root / "decisions/lonely.md", root / "decisions/archive-lonely.md")
        report = v.sync()
    assert report.moved == (("decisions/lonely.md", "decisions/archive-lonely.md"),)
    assert report.embedded_chunks == 0 and not report.relinked


def test_a_folder_rename_is_followed(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(
        root, "projects/x.md", note("X", body="[[people/sarah-chen]] and [[people/sarah-chen|S]]")
    )
    with open_vault(root) as v:
        v.sync()
        os.rename(root / "people", root / "team")
        report = v.sync()
        assert ("people/sarah-chen.md", "team/sarah-chen.md") in report.moved
    assert (
        (root / "projects/x.md")
        .read_text(encoding="utf-8")
        .endswith("[[sarah-chen]] and [[sarah-chen|S]]\n")
    )


class CountingEmbedder(HashEmbedder):
    """The hash embedder, keeping every text it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed(texts)


def test_a_folder_rename_re_embeds_none_of_the_linking_chunks(tmp_path: Path) -> None:
    """Issue 27: a folder rename rewrites every link into it (absolute links: each
    names the folder), yet what the model reads of a link is the link without its
    inner folders (the link kept as a link: brackets, first folder, heading, alias),
    so no linking chunk or line is embedded again; each keeps its label, and its
    keyword row holds the new text."""
    root = make_vault(tmp_path)
    write(root, ".obsidian/app.json", '{"newLinkFormat": "absolute"}\n')
    for i in range(4):
        write(root, f"projects/alpha/a{i}.md", note(f"Alpha {i}", body=f"Alpha part {i}."))
    for i in range(6):
        body = (
            f"Linker {i} asks about [[projects/alpha/a{i % 4}]] today.\n\n"
            f"- see [[projects/alpha/a1#Risks|the risks]] and [[projects/alpha/a2#Plan]]\n"
            f"- and [the third](projects/alpha/a3.md) or [web](https://example.org/alpha/x)\n\n"
            f"## Later {i}\n\nNothing links here, paragraph {i}."
        )
        write(root, f"logs/2024-02-0{i + 1}.md", note(f"Linker {i}", body=body))
    embedder = CountingEmbedder()
    with open_vault(root, embedder=embedder) as v:
        v.sync()
        first = "\n".join(embedder.texts)
        assert "[[projects/a1#Risks|the risks]]" in first and "[[projects/a2#Plan]]" in first
        assert "[the third](projects/a3.md)" in first and "(https://example.org/alpha/x)" in first
        assert "projects/alpha" not in first
        store = v.engine.store
        linkers = [f"logs/2024-02-0{i + 1}.md" for i in range(6)]
        before = {p: [c.label for c in store.chunks_of(p)] for p in linkers}
        embedder.texts.clear()
        os.rename(root / "projects/alpha", root / "projects/beta")
        report = v.sync()
        assert len(report.moved) == 4 and set(linkers) <= set(report.relinked)
        for p in linkers:
            text = (root / p).read_text(encoding="utf-8")
            assert "projects/alpha/" not in text.replace("example.org/alpha", ""), p
            assert "[[projects/beta/a1#Risks|the risks]]" in text
            assert [c.label for c in store.chunks_of(p)] == before[p]
            assert any("projects/beta/a2#Plan" in c.text for c in store.chunks_of(p))
        assert report.embedded_chunks == 0
        assert embedder.texts == []
        # the keyword rows hold the new text
        assert {h.path for h in v.engine.search("beta a3", k=20)} >= set(linkers)
        kept = snapshot(v)
    assert kept == rebuilt_snapshot(root, tmp_path)  # as an index built from nothing


def test_a_version_4_index_reads_again_the_notes_holding_a_link(tmp_path: Path) -> None:
    """An index written before links were embedded without their folders (schema 4)
    opens: the notes with a chunk holding a link with a folder are cut again by the
    next sync, and only those (a link without one was embedded as it is now); the
    index then equals one built from nothing."""
    import sqlite3

    root = make_vault(tmp_path)
    write(
        root, "logs/linked.md", note("Linked", body="Met [[people/team/sarah-chen|Sarah]] today.")
    )
    write(root, "logs/plain.md", note("Plain", body="Nothing links from here."))
    write(root, "logs/short.md", note("Short", body="Met [[people/sarah-chen|Sarah]], one folder."))
    with open_vault(root) as v:
        v.sync()
        linking = {
            n.path for n in v.engine.store.notes()
            for c in v.engine.store.chunks_of(n.path)
            if ("[[" in c.text or "](" in c.text) and c.text.count("/") >= 2
        }  # fmt: skip
    assert "logs/linked.md" in linking
    assert "logs/plain.md" not in linking and "logs/short.md" not in linking
    db = sqlite3.connect(root / ".memvault" / "index.db")
    with db:  # what schema 4 held: the sha of the text with its links' folders
        db.execute(
            "UPDATE chunks SET sha = 'x' || sha "
            "WHERE (text LIKE '%[[%' OR text LIKE '%](%') AND text LIKE '%/%/%'"
        )
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    db.close()
    with open_vault(root) as v:
        report = v.sync()
        assert set(report.modified) == linking
        assert v.engine.store.pending_state()[0] == 0  # re-queued and given vectors
        kept = snapshot(v)  # the shas of the texts embedded now
    assert kept == rebuilt_snapshot(root, tmp_path)


def test_links_are_left_alone_when_the_setting_is_off(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(root, "projects/x.md", note("X", body="[[people/sarah-chen]]"))
    with open_vault(root, overrides={"vault": {"update_links_on_rename": False}}) as v:
        v.sync()
        os.rename(root / "people/sarah-chen.md", root / "people/sc.md")
        v.sync()
    assert "[[people/sarah-chen]]" in (root / "projects/x.md").read_text(encoding="utf-8")


def test_a_rename_while_nothing_ran_is_still_followed(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    os.rename(root / "people/sarah-chen.md", root / "people/sarah.md")
    with open_vault(root) as v:
        report = v.sync()
    assert report.moved == (("people/sarah-chen.md", "people/sarah.md"),)
    assert "[[people/sarah]]" in (root / "MEMORY.md").read_text(encoding="utf-8")


def test_a_persons_words_in_memory_md_survive(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        text = mem.read_text(encoding="utf-8")
        text = text.replace("## Key People\n", "## Key People\nCall Sarah on Tuesdays.\n")
        text = text.replace(
            "<!-- memvault:begin people -->\n", "<!-- memvault:begin people -->\n* my pinned line\n"
        )
        text = text.replace("Backend lead on the platform team", "My own words about Sarah")
        mem.write_text(text + "\nA closing thought.\n", encoding="utf-8")
        write(root, "people/ana.md", note("Ana", "Data lead.", updated="2099-01-01"))
        v.sync()
    out = mem.read_text(encoding="utf-8")
    for words in (
        "Call Sarah on Tuesdays.",
        "* my pinned line",
        "My own words about Sarah",
        "A closing thought.",
    ):
        assert words in out
    people = section(out, "people")
    assert people[0] == "* my pinned line" and "- [[people/ana]] - Data lead." in people
    assert sum("[[people/sarah-chen]]" in ln for ln in people) == 1


def test_an_unparsable_memory_md_is_left_untouched_and_reported(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        broken = mem.read_text(encoding="utf-8").replace("<!-- memvault:end logs -->\n", "")
        mem.write_text(broken, encoding="utf-8")
        write(root, "logs/2024-03-16.md", note("2024-03-16", "Next day.", date="2024-03-16"))
        report = v.sync()
    assert mem.read_text(encoding="utf-8") == broken
    assert any("never closed" in p for p in report.problems)


def test_unchanged_restart_embeds_nothing(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    with open_vault(root) as v:
        report = v.sync()
    assert report.embedded_chunks == 0 and not report.changed


def test_editing_one_paragraph_re_embeds_only_its_chunks(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for i in range(500):
        body = "\n\n".join(
            f"## Part {j}\n\nParagraph {j} of note {i} about topic {i % 17}." for j in range(4)
        )
        write(root, f"projects/p{i:03}.md", note(f"P{i}", f"Project {i}.", body=body))
    with open_vault(root) as v:
        v.sync()
        path = root / "projects/p123.md"
        path.write_text(
            path.read_text(encoding="utf-8").replace("Paragraph 2 of", "Paragraph two of"),
            encoding="utf-8",
        )
        report = v.sync()
        assert report.modified == ("projects/p123.md",)
        # the edited chunk, and the one after it (embedded with the edited text as context)
        changed = {c.label for c in v.engine.store.chunks_of("projects/p123.md")}
        assert 1 <= report.embedded_chunks <= 2 and len(changed) >= report.embedded_chunks
        hits = v.engine.search("Paragraph two of note 123", k=3)
        assert hits[0].path == "projects/p123.md"


def test_delete_removes_chunks_from_fts_and_vectors(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(root, "decisions/zebra.md", note("Zebra crossings", "Unique zebra words."))
    with open_vault(root) as v:
        v.sync()
        labels = {c.label for c in v.engine.store.chunks_of("decisions/zebra.md")}
        assert labels and labels <= v.engine.embedding.vectors.labels()
        (root / "decisions/zebra.md").unlink()
        v.sync()
        assert not labels & v.engine.embedding.vectors.labels()
        assert v.engine.store.fts('"zebra"', 10) == []
        assert all(h.path != "decisions/zebra.md" for h in v.engine.search("zebra crossings"))


def test_a_model_change_re_embeds_everything_and_says_so(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        first = v.sync()
    with open_vault(root, embedder=HashEmbedder(dim=32)) as v:
        report = v.sync()
        assert report.embedded_chunks == first.embedded_chunks
        assert v.engine.store.meta("model_changed") == "hash-64 -> hash-32"
        assert any("model changed" in w for w in report.warnings)
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()


def test_after_any_sequence_the_index_equals_a_rebuild(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        write(root, "people/ana.md", note("Ana", "Data lead.", body="Works with [[sarah-chen]]."))
        v.sync()
        os.rename(root / "people/ana.md", root / "people/ana-lopez.md")
        write(root, "logs/2024-04-01.md", note("2024-04-01", "April.", body="Met [[ana-lopez]]."))
        v.sync()
        shutil.move(root / "decisions", root / "adr")
        (root / "logs/2024-03-15.md").unlink()
        v.sync()
        mine = snapshot(v)
    assert mine == rebuilt_snapshot(root, tmp_path)


def test_binary_notes_are_skipped_with_a_reason_and_not_rehashed(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "logs/broken.md").write_bytes(b"\x00\x01\x02 not text")
    (root / "logs/latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    with open_vault(root) as v:
        report = v.sync()
        reasons = {s.path: s.reason for s in report.skipped}
        assert "binary" in reasons["logs/broken.md"] and "UTF-8" in reasons["logs/latin1.md"]
        assert not v.sync().skipped


def test_filters_and_grouping(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        hits = v.engine.search("PostgreSQL", filters=Filters(folder="decisions"))
        assert hits and {h.path for h in hits} == {"decisions/2024-03-12-why-postgresql.md"}
        assert v.engine.search("PostgreSQL", filters=Filters(tags=("postgresql",)))
        assert not v.engine.search("PostgreSQL", filters=Filters(since="2030-01-01"))
        grouped = v.engine.search("Sarah", group=True, k=10)
        assert len({h.path for h in grouped}) == len(grouped)


def test_read_only_vaults_refuse_to_sync(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root, read_only=True) as v:
        try:
            v.sync()
        except MemvaultError as exc:
            assert "read-only" in str(exc)
        else:
            raise AssertionError("a read-only vault synced")


def test_line_vectors_are_cached_with_their_chunks_and_pruned_with_them(tmp_path: Path) -> None:
    """Each line of a chunk is embedded on its own (core/excerpts) into the same cache;
    pruning after a compaction keeps the live notes' lines and drops the deleted ones'."""
    root = make_vault(tmp_path)
    for i in range(8):
        body = "\n\n".join(f"**Ann**: note {i} fact {j} about topic {i * 10 + j}" for j in range(4))
        write(root, f"logs/2024-01-0{i + 1}.md", note(f"Day {i}", body=body))
    with open_vault(root) as v:
        v.sync()
        store, model = v.engine.store, v.engine.embedding.embedder.model_id

        def line_shas(path: str) -> set[str]:
            return {sha256_text(t) for c in store.chunks_of(path) for t in unit_texts(c.text)}

        kept, gone = line_shas("logs/2024-01-01.md"), line_shas("logs/2024-01-08.md")
        assert len(kept) == 4 and len(store.cached(model, kept)) == 4
        for i in range(1, 8):
            (root / f"logs/2024-01-0{i + 1}.md").unlink()
        v.sync()  # most vectors deleted: the index is compacted and the cache pruned
        assert len(store.cached(model, kept)) == 4
        assert store.cached(model, gone) == {}


def test_line_vectors_off_embeds_only_chunks(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(root, "logs/2024-01-01.md", note("Day", body="first line\n\nsecond line"))
    with open_vault(root, overrides={"index": {"line_vectors": False}}) as v:
        v.sync()
        store, model = v.engine.store, v.engine.embedding.embedder.model_id
        assert store.cache_count(model) == len(store.labels())


# -- problems are state, not events -----------------------------------------------------


def problems(v) -> list[tuple[str, str, str]]:
    return [(p["path"], p["kind"], p["reason"]) for p in v.status()["problems"]]


def test_an_unclosed_memory_md_section_stays_a_problem_until_it_is_fixed(
    tmp_path: Path, caplog
) -> None:
    root = make_vault(tmp_path)
    memory = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        good = memory.read_text(encoding="utf-8")
        broken = good.replace("<!-- memvault:end logs -->\n", "")  # a marker deleted by hand
        memory.write_text(broken, encoding="utf-8")
        with caplog.at_level("INFO", logger="memvault"):
            v.sync()
            write(root, "people/ana.md", note("Ana", "Data lead."))  # the next sync...
            v.sync()
            v.sync(paths=["people/ana.md"])
        # ...does not wipe it: it is listed with the file and the reason until fixed
        ((path, _, reason),) = [p for p in problems(v) if p[1] == "memory"]
        assert path == "MEMORY.md" and "section 'logs' is never closed" in reason
        told = [r for r in caplog.records if "never closed" in r.getMessage()]
        assert len(told) == 1 and told[0].levelname == "WARNING"  # logged once, when it appeared
        assert memory.read_text(encoding="utf-8") == broken  # left alone, as promised
        caplog.clear()
        with caplog.at_level("INFO", logger="memvault"):
            memory.write_text(good, encoding="utf-8")
            v.sync()
        assert not [p for p in problems(v) if p[1] == "memory"]
        assert any("resolved" in r.getMessage() for r in caplog.records)
        assert "[[people/ana]]" in memory.read_text(encoding="utf-8")


def test_skipped_files_bad_frontmatter_and_cut_notes_are_listed_with_file_and_reason(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    (root / "notes").mkdir()
    (root / "notes" / "binary.md").write_bytes(b"\x00\x01\x02 not text")
    write(root, "notes/yaml.md", "---\ntitle: [unclosed\n---\n# Yaml\n\nBody.\n")
    write(root, "notes/huge.md", "# Huge\n\n" + "word " * 60_000)
    with open_vault(root, overrides={"vault": {"max_note_bytes": 200_000}}) as v:
        v.sync()
        write(root, "people/ana.md", note("Ana", "Data lead."))
        v.sync()  # an unrelated sync later: still there
        found = {p[0]: (p[1], p[2]) for p in problems(v)}
    assert found["notes/binary.md"][0] == "skipped" and "binary" in found["notes/binary.md"][1]
    assert found["notes/yaml.md"][0] == "note" and "YAML" in found["notes/yaml.md"][1]
    assert found["notes/huge.md"][0] == "note" and "max_note_bytes" in found["notes/huge.md"][1]
    with open_vault(root, read_only=True) as v:  # another process reads the same state
        assert {p[0] for p in problems(v)} >= {"notes/binary.md", "notes/yaml.md", "notes/huge.md"}
    write(root, "notes/yaml.md", "---\ntitle: Fixed\n---\n# Yaml\n\nBody.\n")
    (root / "notes" / "binary.md").unlink()
    with open_vault(root) as v:
        v.sync()
        assert {p[0] for p in problems(v)} == {"notes/huge.md"}


UNLISTABLE = r"""
import json, os, sys
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder

root = Path(sys.argv[1])
out = {}
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
    memory = (root / "MEMORY.md").read_bytes()
    os.chmod(root / "decisions", 0)  # no longer listable (nor readable) by this user
    try:
        for name, paths in (("full", None), ("folder", ["decisions"])):
            r = v.sync(paths)
            out[name] = [list(r.deleted), [s.reason for s in r.skipped]]
        out["memory_kept"] = (root / "MEMORY.md").read_bytes() == memory
        out["found"] = [h.path for h in v.search("pgvector PostgreSQL", k=10)]
    finally:
        os.chmod(root / "decisions", 0o755)
    r = v.sync()
    out["after"] = [list(r.created), list(r.deleted)]
print(json.dumps(out))
"""


def test_a_folder_that_cannot_be_listed_keeps_its_notes_indexed_and_listed(
    tmp_path: Path,
) -> None:
    """A folder's permissions changed (a backup tool, a chmod): a full sync took every
    note in it for deleted -- out of the index and out of MEMORY.md -- and back again
    once it could be read. Run as a user without root's override (a user namespace of
    its own: chmod binds there)."""
    root = make_vault(tmp_path)
    as_a_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    out = run_namespaced(as_a_user, UNLISTABLE, str(root))
    for name in ("full", "folder"):
        deleted, reasons = out[name]
        assert deleted == [] and reasons == ["cannot list folder: Permission denied"], out
    assert out["memory_kept"]
    assert "decisions/2024-03-12-why-postgresql.md" in out["found"]
    assert out["after"] == [[], []]


def test_a_file_dated_past_2262_is_indexed_and_holds_up_nothing(tmp_path: Path) -> None:
    """A modification time past 2262 (a FAT disk's or a sync tool's garbage, `touch -d
    2400-01-01`) does not fit SQLite's 64-bit integers in ns: every sync of the vault
    failed (OverflowError) -- the daemon's, and the one each CLI search runs first."""
    root = make_vault(tmp_path)
    far = 13_600_000_000  # seconds: the year 2400
    write(root, "people/far.md", note("Far Future", body="Quasar notes."))
    write(root, "assets/far.png", "not really a picture")
    for path in ("people/far.md", "people/sarah-chen.md", "assets/far.png"):
        os.utime(root / path, (far, far))
    os.utime(root / "projects/ai-assistant-refactor.md", (-2_208_988_800, -2_208_988_800))  # 1900
    with open_vault(root) as v:
        first = v.sync()
        assert "people/far.md" in first.created and "people/sarah-chen.md" in first.created
        again = v.sync()
        assert not again.changed  # the clamped time reads back the same
        assert [h.path for h in v.search("quasar", k=1)] == ["people/far.md"]
    assert "[[people/far]]" in (root / "MEMORY.md").read_text(encoding="utf-8")


def _index_rows(v: object) -> dict[str, object]:
    """Everything a sync writes for a note, by path and order (labels renumber):
    the chunks, their keyword rows, every link row with its verdict, the rows'
    fields, and which chunks wait for their vectors."""
    db = v.engine.store._db  # type: ignore[attr-defined]
    chunks = db.execute(
        "SELECT c.path, c.ord, c.heading, c.line_start, c.line_end, c.text, c.sha, c.tokens, "
        "f.text, f.title, f.headings, f.about FROM chunks c JOIN chunks_fts f "
        "ON f.rowid = c.label ORDER BY c.path, c.ord"
    ).fetchall()
    # not the stored verdict: a first sync resolves each batch's links against the
    # notes committed before it (a link to a note of its own batch is stored
    # unresolved; link checks and the relink resolve afresh), so a fresh index's
    # verdicts are not the truth to compare with (the same on 7d52d9f)
    links = db.execute(
        "SELECT source, line, target, anchor, kind, embed FROM links ORDER BY source, line, target"
    ).fetchall()
    notes = db.execute(
        "SELECT path, sha256, kind, title, summary, category, tags, aliases, frontmatter, "
        "headings, warnings, lines FROM notes ORDER BY path"
    ).fetchall()
    labels = {label for (label,) in db.execute("SELECT label FROM chunks")}
    assert v.engine.embedding.vectors.labels() == labels  # type: ignore[attr-defined]
    return {"chunks": chunks, "links": links, "notes": notes}


def test_a_folder_rename_leaves_the_index_a_fresh_index_would_make(tmp_path: Path) -> None:
    # every relinked note indexed again from its new text: chunks, keyword rows, link
    # rows, note rows as a first sync of the renamed vault makes them (notes with code,
    # math, tags, frontmatter, links inside code that stay as they are); a guard for the
    # parse and sync speed-ups of this branch (it passes on 7d52d9f too)
    root = make_vault(tmp_path)
    for i in range(6):
        write(root, f"projects/alpha/a{i}.md", note(f"A{i}", f"Alpha {i}.", body=f"Part {i}."))
    for i in range(8):
        body = (
            f"Links [[projects/alpha/a{i % 6}]] and [[projects/alpha/a{(i + 1) % 6}|the next]].\n\n"
            f"## Detail #tag{i}\n\nCode `[[projects/alpha/a0]]` and $[[x]]$ stay; "
            f"[md](projects/alpha/a{i % 6}.md#Part) too.\n\n"
            "```\n[[projects/alpha/a1]]\n```\n\n- item [[projects/alpha/a2#Part]]\n"
        )
        write(root, f"topics/t{i}.md", note(f"T{i}", body=body, tags="[x, y]"))
    (root / ".obsidian").mkdir(exist_ok=True)
    (root / ".obsidian/app.json").write_text('{"newLinkFormat": "absolute"}\n')
    with open_vault(root) as v:
        v.sync()
        os.rename(root / "projects/alpha", root / "projects/beta")
        report = v.sync(paths=["projects/alpha", "projects/beta"])
        assert len(report.moved) == 6 and len(report.relinked) == 8
        mine = _index_rows(v)
    text = (root / "topics/t3.md").read_text(encoding="utf-8")
    assert "[[projects/beta/a3]]" in text and "`[[projects/alpha/a0]]`" in text
    copy = tmp_path / "fresh"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(copy) as v:
        v.sync()
        fresh = _index_rows(v)
    assert mine == fresh
