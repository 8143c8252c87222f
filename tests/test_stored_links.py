"""The store's indexed link keys (schema 19, PostgreSQL 18) and ``StoredLinks``: the same
answer as ``LinkIndex.resolve`` over every file for every link of every note, on vaults
of hostile names (any case, final sigma, Turkish İ, ß, NFD beside NFC, one name in two
folders, an alias that is another note's name, attachments with and without an
extension, ``#``, ``|``, ``^``, spaces, dots), kept through renames (case-only too),
deletes and alias edits, on both backends; the upgrade fills the keys of an older index."""

from __future__ import annotations

import os
import random
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

import psycopg
import pytest

from helpers import new_vault, open_vault, write
from memvault.core.wikilinks import LinkIndex, find_links
from memvault.engine.stored_links import StoredLinks
from memvault.errors import IndexCorrupt
from memvault.index.link_keys import key_rows
from memvault.index.pg_schema import PG_SCHEMA_VERSION
from memvault.index.schema import SCHEMA_VERSION

NAMES = [
    "Ana", "ana", "ANA", "Σοφία", "ΟΔΟΣ", "οδος", "İstanbul", "istanbul", "Straße", "STRASSE",
    "Maße", "Masse", "café", "cafe\u0301", "a b", " Lead", "x.y", "note.v2", "Plan", "plan",
    "a#b", "c|d", "e^f", "Ünïcödé", "ǅemal", "ß", "ΣΑΣ", "read.me",
]  # fmt: skip
FOLDERS = ["", "people", "People", "projects/alpha", "projects/beta", "Attachments", "ΦΑΚΕΛΟΣ"]
ALIASES = ["  Zed ", "ΖΕΔΟΣ", "zed"]  # names no file has, one only trimmed
EXTS = [".png", ".pdf", "", ".PNG", ".md.bak"]


def _path(rng: random.Random, ext: str) -> str:
    folder = rng.choice(FOLDERS)
    name = rng.choice(NAMES).strip() or "blank"
    if name.startswith(" ") and folder:
        name = name.strip()
    return f"{folder}/{name}{ext}" if folder else f"{name}{ext}"


def _forms(rng: random.Random, path: str, source: str) -> list[str]:
    """Ways a link may name ``path`` (and near misses), as written in ``source``."""
    stem = path[:-3] if path.endswith(".md") else path
    name = stem.rsplit("/", 1)[-1]
    up = os.path.relpath(stem, os.path.dirname(source) or ".")
    forms = [stem, path, name, stem.upper(), name.lower(), name.upper(), "/" + stem, up]
    forms += [unicodedata.normalize("NFD", stem), f" {name} ", "./" + name, "../" + name]
    forms += [stem.rsplit("/", 2)[-1] if stem.count("/") > 1 else name + ".MD"]
    return rng.sample(forms, 5)


def _text(rng: random.Random, targets: list[str]) -> str:
    lines = ["# T", ""]
    for t in targets:
        clean = t.replace("]", "").replace("[", "").replace("\n", "")
        kind = rng.randrange(4)
        if kind == 0:
            lines.append(f"see [[{clean}]] here")
        elif kind == 1:
            lines.append(f"see [[{clean}#Some heading|shown]]")
        elif kind == 2:
            lines.append(f"see ![[{clean}#^block1]]")
        else:
            lines.append(f"see [x](<{clean}.md#Heading>)")
    return "\n".join(lines) + "\n"


def _vault(root: Path, seed: int) -> list[str]:
    """A vault of hostile names; its notes' paths."""
    rng = random.Random(seed)
    notes = sorted({_path(rng, rng.choice([".md", ".md", ".md", ".MD"])) for _ in range(70)})
    attachments = sorted({_path(rng, rng.choice(EXTS)) for _ in range(25)} - set(notes))
    for rel in attachments:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    for rel in notes:
        targets = [t for _ in range(3) for t in _forms(rng, rng.choice(notes + attachments), rel)]
        targets += [rng.choice(NAMES) for _ in range(3)]
        aliases = rng.sample(NAMES + ALIASES, rng.randrange(4))
        head = "---\naliases: [" + ", ".join(f'"{a}"' for a in aliases) + "]\n---\n"
        write(root, rel, (head if aliases else "") + _text(rng, rng.sample(targets, 12)))
    return notes


def _same_answers(v: Any, rng: random.Random) -> int:
    """Every link of every note, and generated targets, resolved both ways; how many."""
    store = v.engine.store
    paths, aliases = store.paths_and_aliases()
    full = LinkIndex(paths + store.attachment_paths(), aliases)
    stored = StoredLinks(store)
    files = sorted(set(paths + store.attachment_paths()))
    asked = 0
    for source in paths:
        text = (v.root / source).read_text(encoding="utf-8") if (v.root / source).exists() else ""
        targets = [link.target for link in find_links(text)]
        targets += [t for _ in range(2) for t in _forms(rng, rng.choice(files), source)]
        targets += [*rng.sample(NAMES, 4), "", "/", "..", "../../x", "#", "Zed", "ζεδος"]
        for target in targets:
            want = full.resolve(target, source)
            assert stored.resolve(target, source) == want, (target, source)
            asked += 1
    for path in files + [unicodedata.normalize("NFD", p) for p in files] + ["no/such.md"]:
        assert (path in stored) == (path in full), path
        assert stored.aliases_of(path) == full.aliases_of(path), path
    batch = [(t, s) for s in paths[:10] for t in NAMES]  # one query for many links
    idx = stored.index_for(batch)
    assert all(idx.resolve(t, s) == full.resolve(t, s) for t, s in batch)
    return asked


def _kept_rows(v: Any) -> tuple[list[Any], list[Any]]:
    """The link keys the store kept, and those its rows make afresh."""
    db = v.engine.store._db
    kept = sorted(tuple(r) for r in db.execute("SELECT key, kind, path, note FROM link_keys"))
    fresh = [r for p, a in v.engine.store.paths_and_aliases()[1].items() for r in key_rows(p, a, 1)]
    fresh += [
        r
        for p in v.engine.store.paths_and_aliases()[0]
        if p not in v.engine.store.paths_and_aliases()[1]
        for r in key_rows(p, (), 1)
    ]
    fresh += [r for p in v.engine.store.attachment_paths() for r in key_rows(p, (), 0)]
    return kept, sorted(fresh)


def _mutate(root: Path, notes: list[str], seed: int) -> None:
    """Renames (case only, into NFD, to another folder), deletes, alias edits."""
    rng = random.Random(seed)
    picked = rng.sample(notes, 12)
    for rel in picked[:3]:  # case only
        p = root / rel
        p.rename(p.with_name(p.stem.swapcase() + p.suffix))
    for rel in picked[3:5]:  # to a name written in NFD
        p = root / rel
        p.rename(p.with_name(unicodedata.normalize("NFD", p.stem + " é") + p.suffix))
    for rel in picked[5:7]:
        (root / "moved").mkdir(exist_ok=True)
        os.rename(root / rel, root / "moved" / rel.replace("/", "_"))
    for rel in picked[7:9]:
        os.remove(root / rel)
    for rel in picked[9:]:
        text = (root / rel).read_text(encoding="utf-8")
        body = text.split("---\n", 2)[-1]
        write(root, rel, f'---\naliases: ["{rng.choice(NAMES)}", "Ana"]\n---\n' + body)
    for p in sorted(root.rglob("*.png"))[:2]:
        os.rename(p, p.with_name("Renamed " + p.name))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stored_lookups_answer_as_the_link_index_sqlite(tmp_path: Path, seed: int) -> None:
    root = new_vault(tmp_path)
    notes = _vault(root, seed)
    rng = random.Random(seed)
    with open_vault(root) as v:
        v.sync()
        kept, fresh = _kept_rows(v)
        assert kept == fresh
        assert _same_answers(v, rng) > 500
        _mutate(root, notes, seed)
        v.sync()
        kept, fresh = _kept_rows(v)
        assert kept == fresh
        _same_answers(v, rng)


def test_stored_lookups_answer_as_the_link_index_postgres(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    notes = _vault(root, 7)
    rng = random.Random(7)
    with open_vault(root) as v:
        v.sync()
        kept, fresh = _kept_rows(v)
        assert kept == fresh
        assert _same_answers(v, rng) > 500
        _mutate(root, notes, 7)
        v.sync()
        kept, fresh = _kept_rows(v)
        assert kept == fresh
        _same_answers(v, rng)


def test_an_index_of_schema_18_gets_every_files_keys(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    _vault(root, 4)
    with open_vault(root) as v:
        v.sync()
        before, _ = _kept_rows(v)
    db = sqlite3.connect(root / ".memvault" / "index.db", isolation_level=None)
    db.execute("DROP TABLE link_keys")  # schema 18 had none
    db.execute("UPDATE meta SET value = '18' WHERE key = 'schema_version'")
    db.close()
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
        kept, fresh = _kept_rows(v)
        assert kept == fresh == before
        assert _same_answers(v, random.Random(4)) > 500
        assert not v.sync().changed


def test_an_index_of_schema_20_is_refused(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        v.engine.store.set_meta("schema_version", str(SCHEMA_VERSION + 1))
    with pytest.raises(IndexCorrupt, match="newer than this memvault"):
        from memvault.index.store import Store

        Store(root / ".memvault" / "index.db", root / ".memvault" / "cache.db")


def test_a_postgres_index_of_schema_17_gets_every_files_keys(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    _vault(root, 5)
    with open_vault(root) as v:
        v.sync()
        schema = v.engine.store.schema
        before, _ = _kept_rows(v)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{schema}".link_keys')
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '17' WHERE key = 'schema_version'")
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        kept, fresh = _kept_rows(v)
        assert kept == fresh == before
        assert _same_answers(v, random.Random(5)) > 500


def test_a_write_with_no_daemon_reads_no_map_of_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memvault add` / `log` with no daemon resolve their note's links by the store's link
    keys: the every-file reads a link index is built from are never made (issue 27: 0.28 s
    at 100,000 notes), and the verdicts are the link index's."""
    from memvault.index.store import Store

    root = new_vault(tmp_path)
    write(root, "people/ana.md", '---\naliases: ["Annie"]\n---\n# Ana\n')
    write(root, "projects/ana.md", "# Ana project\n")
    write(root, "people/bob.md", "# Bob\n")
    (root / "Attachments").mkdir(exist_ok=True)
    (root / "Attachments" / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with open_vault(root) as v:
        v.sync()
    calls: list[str] = []
    for name in ("paths_and_aliases", "attachment_paths"):
        real = getattr(Store, name)

        def spied(self: Any, *a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            calls.append(_name)
            return _real(self, *a, **kw)

        monkeypatch.setattr(Store, name, spied)
    body = "See [[bob]], [[Annie]], [[ana]], ![[diagram.png]], [[people/ANA]], [[nobody]]."
    with open_vault(root) as v:
        added = v.add("decisions", "Pick", body=body).path
        logged = v.log("met [[bob]] and [[Annie]]").path
        assert calls == []
        store = v.engine.store
        monkeypatch.undo()
        paths, aliases = store.paths_and_aliases()
        full = LinkIndex(paths + store.attachment_paths(), aliases)
        for source in (added, logged):
            rows = store.links(source)
            assert {r.target for r in rows} >= {"bob", "Annie"}
            for r in rows:
                want = full.resolve(r.target, source)
                assert (r.verdict, r.resolved, tuple(r.candidates)) == (
                    want.verdict,
                    want.path,
                    want.candidates,
                ), r
    store = Store(root / ".memvault" / "index.db", root / ".memvault" / "cache.db")
    try:
        by_target = {r.target: r for r in store.links(added)}
    finally:
        store.close()
    assert by_target["ana"].verdict == "ambiguous"
    assert by_target["Annie"].verdict == "alias"
    assert by_target["diagram.png"].resolved == "Attachments/diagram.png"
    assert by_target["people/ANA"].resolved == "people/ana.md"


def test_keys_made_by_another_python_are_made_again(tmp_path: Path) -> None:
    """``wikilinks.key`` reads Python's Unicode tables (NFC, lower case), as MEMORY.md's
    order keys do: a writer finding them made under others (meta ``order_keys``) keys every
    file again with its own (``note_order.rekey``)."""
    root = new_vault(tmp_path)
    _vault(root, 6)
    with open_vault(root) as v:
        v.sync()
        before, _ = _kept_rows(v)
    db = sqlite3.connect(root / ".memvault" / "index.db", isolation_level=None)
    db.execute("UPDATE link_keys SET key = key || '?' WHERE path NOT GLOB '*[a-z]*'")
    db.execute("DELETE FROM link_keys WHERE kind = 1")  # keys another Python made otherwise
    db.execute("UPDATE meta SET value = '1 Unicode 9.0.0' WHERE key = 'order_keys'")
    db.close()
    with open_vault(root) as v:
        kept, fresh = _kept_rows(v)
        assert kept == fresh == before


@pytest.mark.parametrize("alias", ["\u03aa\u0301", "ΠΡΩ\u03aa\u0301", "\u1fbc\u0301"])
def test_an_alias_whose_key_is_not_its_own_key_resolves(tmp_path: Path, alias: str) -> None:
    """``wikilinks.key`` lower-cases after NFC, so a key is not always its own key (Ϊ́:
    ϊ and an acute, which NFC makes ΐ). The stored alias keys gave ``LinkIndex`` the
    key as the alias, keyed again: a `memvault add` with no daemon stored ``[[Ϊ́]]``
    unresolved where the link index (a daemon) resolves it to the note of that alias."""
    root = new_vault(tmp_path)
    write(root, "people/iota.md", f'---\naliases: ["{alias}"]\n---\n# Iota\n')
    with open_vault(root) as v:
        v.sync()
    with open_vault(root) as v:  # a new process: no link index held
        added = v.add("decisions", "Pick", body=f"See [[{alias}]].").path
        store = v.engine.store
        paths, aliases = store.paths_and_aliases()
        full = LinkIndex(paths + store.attachment_paths(), aliases)
        assert full.resolve(alias, added).path == "people/iota.md"
        assert StoredLinks(store).resolve(alias, added) == full.resolve(alias, added)
        (row,) = [r for r in store.links(added) if r.target == alias]
        assert (row.verdict, row.resolved) == ("alias", "people/iota.md")


def test_files_not_in_the_store_yet_of_one_key_are_each_a_file(tmp_path: Path) -> None:
    """``extra`` (a long sync's notes still to index, a git pull's) holding two files whose
    paths differ only by case: each is a file, as in ``LinkIndex.with_files`` (membership:
    ``taken`` asks it of a link's old target); the one-spelling-a-key map kept the last."""
    root = new_vault(tmp_path)
    write(root, "people/bob.md", "# Bob\n")
    with open_vault(root) as v:
        v.sync()
        twins = ["People/Ana.md", "people/ana.md", "people/ANA.md"]
        stored = StoredLinks(v.engine.store, twins)
        full = LinkIndex(v.engine.store.paths_and_aliases()[0]).with_files(twins)
        for path in [*twins, "PEOPLE/ana.md", "people/bob.md"]:
            assert (path in stored) == (path in full), path
        assert all(p in stored for p in twins)
        assert stored.resolve("ana", "people/bob.md") == full.resolve("ana", "people/bob.md")


def test_memory_md_links_resolved_by_one_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A MEMORY.md update with no link index held (a write with no daemon, a daemon after a
    note went) resolves every link of its sections: one query a link was a round trip a
    link on PostgreSQL (~1 ms each on a local server: 0.29 s for 300). The links MEMORY.md
    holds as indexed are looked up at once; the answers are the link index's."""
    from memvault.index.store import Store

    root = new_vault(tmp_path)
    for i in range(40):
        write(root, f"people/p{i:02}.md", f"# Person {i}\n")
    write(root, "projects/p07.md", "# A project of the same name\n")
    with open_vault(root) as v:
        v.sync()
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    targets = list(dict.fromkeys(link.target for link in find_links(text)))
    assert len(targets) >= 9  # (8 a section, then its folder note)
    calls: list[int] = []
    real = Store.keyed

    def spied(self: Any, keys: Any) -> Any:
        calls.append(1)
        return real(self, keys)

    with open_vault(root) as v:
        store = v.engine.store
        paths, aliases = store.paths_and_aliases()
        full = LinkIndex(paths + store.attachment_paths(), aliases)
        monkeypatch.setattr(Store, "keyed", spied)
        resolve = v.engine.catalogue.resolver("MEMORY.md")
        got = [resolve(t) for t in [*targets, *targets]]
        assert len(calls) <= 2, len(calls)
        for target, path in zip([*targets, *targets], got, strict=True):
            want = full.resolve(target, "MEMORY.md")
            assert path == (want.path if want.verdict in ("resolved", "alias") else None)
        assert resolve("nowhere") is None and resolve("p03") == "people/p03.md"


def test_the_links_of_a_name_that_went_resolved_by_one_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note linked from many went (deleted, renamed) with no link index held: every
    stored link of its name is resolved again (``follow``), one query a link before (a
    round trip each on PostgreSQL: 2,000 daily logs linking a person, ~2 s on a local
    server). They are looked up at once; the verdicts are the link index's."""
    from memvault.index.store import Store

    root = new_vault(tmp_path)
    write(root, "people/hub.md", "# Hub\n")
    write(root, "projects/hub.md", "# Another hub\n")
    for i in range(30):
        folder = "logs" if i % 3 else "people"
        write(root, f"{folder}/n{i:02}.md", f"# N{i}\n\nmet [[hub]] and [[people/hub]]\n")
    with open_vault(root) as v:
        v.sync()
    calls: list[int] = []
    real = Store.keyed

    def spied(self: Any, keys: Any) -> Any:
        calls.append(1)
        return real(self, keys)

    (root / "people" / "hub.md").unlink()
    with open_vault(root) as v:
        monkeypatch.setattr(Store, "keyed", spied)
        v.sync()
        monkeypatch.undo()
        assert len(calls) < 20, len(calls)  # a few a step of the sync, none a link (118 before)
        store = v.engine.store
        paths, aliases = store.paths_and_aliases()
        full = LinkIndex(paths + store.attachment_paths(), aliases)
        rows = [r for r in store.links() if r.target in ("hub", "people/hub")]
        assert len(rows) == 60
        for r in rows:
            want = full.resolve(r.target, r.source)
            assert (r.verdict, r.resolved, tuple(r.candidates)) == (
                want.verdict,
                want.path,
                want.candidates,
            ), r
        assert {r.resolved for r in rows if r.target == "hub"} == {"projects/hub.md"}
