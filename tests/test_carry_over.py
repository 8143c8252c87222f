"""A relinked note's rows carried over (core/carry.py, engine/carry_over.py): the index
after a rename is the one a fresh index of the renamed vault makes, whether a note was
carried over or parsed again, and a note whose change could move anything is parsed
again."""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import open_vault, write
from memvault.api import Vault
from memvault.core.carry import apply_spans, carry
from memvault.core.chunks import CONTEXT_PARTS, chunk_note, embed_texts
from memvault.core.notes import parse_note
from memvault.core.relink import relink_note
from memvault.core.text import sha256_bytes
from memvault.core.wikilinks import LinkIndex
from memvault.engine.indexer import Indexer
from memvault.index.embedder import HashEmbedder
from memvault.index.schema import register
from memvault.vault import swap
from memvault.vault.files import VaultFS

SMALL = {
    "index": {"max_chunk_tokens": 40, "chunk_target_tokens": 20, "context_overlap_tokens": 16}
}  # cap: 400 chars


def full_snapshot(v: Vault) -> dict[str, Any]:
    """Every column a rename can change, of every row (labels, mtimes and the links'
    stored verdicts aside: a first sync resolves a link against the notes committed
    before its batch, so a fresh index's verdicts are not the truth to compare with)."""
    store = v.engine.store
    db = sqlite3.connect(v.engine.config.state_dir / "index.db")
    register(db)  # the keyword table's view calls it (schema 8)
    try:
        notes = {
            n.path: (n.size, n.sha256, n.kind, n.title, n.summary, n.category, n.date, n.tags,
                     n.aliases, n.frontmatter, n.headings, n.warnings, n.lines)
            for n in store.notes()
        }  # fmt: skip
        chunks = sorted(
            db.execute(
                "SELECT path, ord, heading, line_start, line_end, text, sha, tokens, title, about "
                "FROM chunks"
            ).fetchall()
        )
        fts = sorted(db.execute("SELECT text, title, headings, about FROM chunks_fts").fetchall())
    finally:
        db.close()
    links = sorted(
        (r.source, r.line, r.target, r.anchor or "", r.kind, r.embed) for r in store.links()
    )
    return {"notes": notes, "chunks": chunks, "fts": fts, "links": links}


def fresh_snapshot(root: Path, tmp_path: Path, name: str) -> dict[str, Any]:
    copy = tmp_path / name
    os.system(
        f"cp -a {root} {copy} && rm -rf {copy}/.memvault/index.db* {copy}/.memvault/vectors.bin"
    )
    with open_vault(copy, overrides=SMALL) as v:
        v.sync()
        return full_snapshot(v)


LINKERS = {
    # carried over: the only change is inside link targets, in plain paragraphs
    "logs/plain.md": "---\ntitle: Plain\nsummary: a plain note\n---\n# Plain\n\n"
    "Met about [[projects/alpha/a0]] today.\n\n- see [[projects/alpha/a1#Risks|the risks]]\n"
    "- and [the third](projects/alpha/a2.md) too\n\n## Later\n\nNothing links here.\n",
    "logs/summary.md": "# Summary\n\nThe plan is in [[projects/alpha/a1]], as agreed.\n\n"
    "More words here.\n",
    "logs/angle.md": "# Angle\n\nSee [the doc](<projects/alpha/a2.md>) and ![[projects/alpha/a0]].\n",
    "logs/many.md": "# Many\n\n"
    + "\n\n".join(f"Paragraph {i} names [[projects/alpha/a{i % 3}]] once." for i in range(12))
    + "\n",
    # parsed again: the link sits where a rewrite moves more than the link
    "logs/heading.md": "# Heading\n\n## About [[projects/alpha/a0]]\n\nUnder it.\n",
    "logs/front.md": "---\nrelated: '[[projects/alpha/a1]]'\n---\n# Front\n\nBody [[projects/alpha/a0]].\n",
    "logs/hint.md": "# Hint\n\n%% fill in %%\n\nSee [[projects/alpha/a1]].\n",
    "logs/crlf.md": "# Crlf\r\n\r\nSee [[projects/alpha/a1]] here.\r\n",
    # a paragraph long enough to be cut into pieces (over the 400-character cap)
    "logs/long.md": "# Long\n\n"
    + " ".join(["word"] * 90)
    + " [[projects/alpha/a2]] "
    + " ".join(["more"] * 40)
    + "\n",
}
CARRIED = {"logs/plain.md", "logs/summary.md", "logs/angle.md", "logs/many.md"}
PARSED = {"logs/heading.md", "logs/front.md", "logs/hint.md", "logs/crlf.md", "logs/long.md"}


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", '{"newLinkFormat": "absolute"}\n')
    for i in range(3):
        write(root, f"projects/alpha/a{i}.md", f"# Alpha {i}\n\n## Risks\n\nPart {i}.\n")
    for rel, text in LINKERS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))
    return root


def test_a_rename_carries_the_plain_linking_notes_over_and_equals_a_fresh_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _vault(tmp_path)
    prepared: list[str] = []
    real_prepare = Indexer._prepare

    def spy(self: Indexer, path: str, *rest: Any) -> Any:
        prepared.append(path)
        return real_prepare(self, path, *rest)

    monkeypatch.setattr(Indexer, "_prepare", spy)
    with open_vault(root, overrides=SMALL) as v:
        v.sync()
        labels = {p: [c.label for c in v.engine.store.chunks_of(p)] for p in CARRIED}
        prepared.clear()
        # a longer name: each re-targeted link gains word pieces and characters
        os.rename(root / "projects/alpha", root / "projects/beta-two")
        report = v.sync()
        assert set(LINKERS) <= set(report.relinked)
        assert not CARRIED & set(prepared), "carried over, not parsed again"
        assert set(prepared) >= PARSED
        # the moved notes keep their names: carried over too (their rows were renamed)
        assert not {p for p in prepared if p.startswith("projects/")}
        for p in CARRIED:
            assert [c.label for c in v.engine.store.chunks_of(p)] == labels[p]
            assert "projects/alpha" not in (root / p).read_text(encoding="utf-8")
        # the carried links are resolved against the vault as it is now
        rows = [r for r in v.engine.store.links() if r.source in CARRIED]
        assert rows and all(
            r.resolved and r.resolved.startswith("projects/beta-two/") for r in rows
        )
        assert {h.path for h in v.engine.search("beta two a2", k=30)} >= {"logs/plain.md"}
        kept = full_snapshot(v)
    assert kept == fresh_snapshot(root, tmp_path, "fresh-1")

    # a note renamed: its name is in what the model reads of each link to it, and in a
    # summary that shows the link: those notes are parsed again
    with open_vault(root, overrides=SMALL) as v:
        prepared.clear()
        os.rename(root / "projects/beta-two/a1.md", root / "projects/beta-two/plan.md")
        report = v.sync()
        assert "logs/summary.md" in report.relinked and "logs/summary.md" in prepared
        assert "logs/plain.md" in report.relinked and "logs/plain.md" in prepared
        assert v.engine.store.note("logs/summary.md").summary == "The plan is in plan, as agreed."
        assert "projects/beta-two/plan.md" in prepared  # a new name: maybe a new title
        kept = full_snapshot(v)
    assert kept == fresh_snapshot(root, tmp_path, "fresh-2")

    # the folder moved to another top folder: the moved notes' category follows
    with open_vault(root, overrides=SMALL) as v:
        prepared.clear()
        os.rename(root / "projects/beta-two", root / "archive")
        report = v.sync()
        assert len(report.moved) == 3
        assert not {p for p in prepared if p.startswith("archive/")}
        assert v.engine.store.note("archive/a0.md").category == "archive"
        kept = full_snapshot(v)
    assert kept == fresh_snapshot(root, tmp_path, "fresh-3")


def test_a_save_after_the_relink_is_indexed_as_the_persons(tmp_path: Path) -> None:
    """The file is read back: what is carried over is what the relink wrote, or the note
    is indexed from what is there (here: a person's line added right after the swap)."""
    root = _vault(tmp_path)
    with open_vault(root, overrides=SMALL) as v:
        v.sync()
        linker = v.engine.linker
        real = linker.relink

        def relink_then_edit(*a: Any, **kw: Any) -> Any:
            out = real(*a, **kw)
            with open(root / "logs/plain.md", "a", encoding="utf-8") as fh:
                fh.write("\nTheir own line zebrafish.\n")
            return out

        linker.relink = relink_then_edit  # type: ignore[method-assign]
        os.rename(root / "projects/alpha", root / "projects/beta")
        v.sync()
        assert any("zebrafish" in c.text for c in v.engine.store.chunks_of("logs/plain.md"))
        kept = full_snapshot(v)
    assert kept == fresh_snapshot(root, tmp_path, "fresh")


def test_a_carried_note_is_not_read_back_its_swap_says_what_the_file_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relink's swap remembers the file it put in place (``VaultFS.written``: its
    inode, size, mtime and ctime, the sha256 written and replaced): a carried note is
    not read again, and its row is the file's (a fresh index equals it). A note moved
    under its own name is known unchanged by its size and mtime."""
    root = _vault(tmp_path)
    read: list[str] = []
    real_read = VaultFS.read

    def spy(self: VaultFS, rel: str, cap: int | None = None) -> Any:
        if cap != 0:  # (not the hash a sync takes of a new path, to find a move)
            read.append(rel)
        return real_read(self, rel, cap)

    monkeypatch.setattr(VaultFS, "read", spy)
    with open_vault(root, overrides=SMALL) as v:
        v.sync()
        read.clear()
        os.rename(root / "projects/alpha", root / "projects/beta")
        report = v.sync()
        assert set(report.relinked) >= CARRIED
        moved = {new for _, new in report.moved}
        assert not (CARRIED | moved) & set(read), read
        for p in CARRIED:
            row, data = v.engine.store.note(p), (root / p).read_bytes()
            st = (root / p).stat()
            assert (row.size, row.mtime_ns, row.sha256) == (
                len(data),
                st.st_mtime_ns,
                sha256_bytes(data),
            )
        kept = full_snapshot(v)
    assert kept == fresh_snapshot(root, tmp_path, "fresh")


def test_what_the_swap_remembers_is_gone_with_any_save_after_it(tmp_path: Path) -> None:
    """``VaultFS.written``: the file as memvault's swap left it, until anyone changes
    it: a save in place of the same size with its mtime set back (a ctime moves), a
    save by rename (another inode), a chmod."""
    root = tmp_path / "v"
    for name in ("a", "b", "c"):
        write(root, f"n/{name}.md", f"# {name}\n\nkilns\n")
    fs = VaultFS(root, quiet_ms=0)
    before = {r: sha256_bytes((root / r).read_bytes()) for r in ("n/a.md", "n/b.md", "n/c.md")}
    out = fs.update_texts({r: lambda t: t.replace("kilns", "lathe") for r in before})
    assert all(v is True for v in out.values())
    for rel, old in before.items():
        w = fs.written(rel)
        assert w is not None and fs.swapped(rel)
        assert w.before == old and w.sha256 == sha256_bytes((root / rel).read_bytes())
    # in place, the same size, the mtime put back: only the ctime tells
    path = root / "n/a.md"
    st = path.stat()
    deadline = time.monotonic() + 5
    while path.stat().st_ctime_ns == st.st_ctime_ns:  # until the clock moves on
        assert time.monotonic() < deadline
        path.write_bytes(b"# a\n\nLATHE\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert fs.written("n/a.md") is None
    # by rename: another inode, for the watcher too
    (root / "n/b.tmp").write_text("# b\n\ntheirs\n", encoding="utf-8")
    os.replace(root / "n/b.tmp", root / "n/b.md")
    assert fs.written("n/b.md") is None and not fs.swapped("n/b.md")
    os.chmod(root / "n/c.md", 0o600)
    assert fs.written("n/c.md") is None


def test_a_save_between_the_exchange_and_its_check_is_not_taken_for_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's write into the file memvault has just put in place, before the swap
    looks at it again: the file is not remembered as ours (the carry-over reads it, the
    watcher queues its events)."""
    root = tmp_path / "v"
    write(root, "n/a.md", "# a\n\nkilns\n")
    fs = VaultFS(root, quiet_ms=0)
    real = swap.exchange

    def exchange_then_theirs(a: Path, b: Path) -> bool:
        done = real(a, b)
        if b.name == "a.md":
            with open(b, "a", encoding="utf-8") as fh:
                fh.write("their line\n")
        return done

    monkeypatch.setattr(swap, "exchange", exchange_then_theirs)
    assert fs.update_texts({"n/a.md": lambda t: t.replace("kilns", "lathe")}) == {"n/a.md": True}
    assert "their line" in (root / "n/a.md").read_text(encoding="utf-8")
    assert fs.written("n/a.md") is None and not fs.swapped("n/a.md")


# -- the core, against a parse from scratch ------------------------------------------------

WORDS = [
    "ana",
    "bob",
    "plan",
    "risk",
    "note",
    "team",
    "work",
    "time",
    "data",
    "week",
    "goal",
    "idea",
]
# one word piece each, ~36 characters: runs of them reach the cap on characters first
LONG = [w * 9 for w in WORDS]


def _random_note(rng: random.Random) -> str:
    vocabulary = rng.choice([WORDS, LONG])
    parts = []
    if rng.random() < 0.5:
        parts.append(
            f"---\ntitle: T{rng.randrange(99)}\n"
            + ("summary: s\n" if rng.random() < 0.5 else "")
            + "---\n"
        )
    parts.append(f"# Note {rng.randrange(99)}\n\n")
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.3:
            parts.append(
                f"## Sec {rng.choice(WORDS)}"
                + (" [[projects/alpha/a1]]" if rng.random() < 0.2 else "")
                + "\n\n"
            )
        for _ in range(rng.randint(1, 5)):
            words = [rng.choice(vocabulary) for _ in range(rng.randint(2, 16))]
            for _ in range(rng.randint(0, 2)):
                t = f"projects/alpha/a{rng.randrange(3)}"
                form = rng.choice(
                    [
                        f"[[{t}]]",
                        f"[[{t}|x y]]",
                        f"[[{t}#Risks]]",
                        f"[d]({t}.md)",
                        f"[d](<{t}.md>)",
                        f"`[[{t}]]`",
                    ]
                )
                words.insert(rng.randrange(len(words) + 1), form)
            sep = "\n" if rng.random() < 0.3 else " "
            parts.append(sep.join(words) + "\n\n")
    return "".join(parts)


def test_carry_gives_what_a_parse_from_scratch_gives_or_declines(tmp_path: Path) -> None:
    """Random notes linking a folder that is renamed to names shorter and longer, cut
    with a small window (so the cap on characters decides cuts): each carried note's
    chunk texts, lines, embedded texts, links and fields are those of its new text
    parsed and chunked from scratch."""
    count = HashEmbedder().count_tokens
    kw = {"target_tokens": 30, "max_tokens": 60, "parts": CONTEXT_PARTS}
    rng = random.Random(7)
    carried = declined = 0
    for new_folder in ("projects/b", "projects/beta", "projects/a-much-longer-folder-name"):
        files = [f"projects/alpha/a{i}.md" for i in range(3)] + ["logs/n.md"]
        moves = {f: f.replace("projects/alpha", new_folder) for f in files[:3]}
        before = LinkIndex(files)
        after = LinkIndex([moves.get(f, f) for f in files])
        for _ in range(150):
            old = _random_note(rng)
            result = relink_note(old, "logs/n.md", "logs/n.md", before, after, moves, "absolute")
            if not result.spans:
                continue
            assert apply_spans(old, result.spans) == result.text
            note = parse_note("logs/n.md", old)
            chunks = chunk_note(note, count, **kw)
            fm = note.frontmatter.get("summary")
            plan = carry(
                old,
                result.spans,
                result.links,
                [(h.level, h.text, h.line) for h in note.headings],
                [(c.line_start, c.line_end, c.text) for c in chunks],
                summary_from_frontmatter=bool(fm),
                max_tokens=60,
            )
            if plan is None:
                declined += 1
                continue
            carried += 1
            new = parse_note("logs/n.md", result.text)
            fresh = chunk_note(new, count, **kw)
            assert plan.text == result.text
            got = [
                (c.line_start, c.line_end, plan.chunk_texts.get(i, c.text))
                for i, c in enumerate(chunks)
            ]
            assert got == [(c.line_start, c.line_end, c.text) for c in fresh]
            assert [c.heading_path for c in chunks] == [c.heading_path for c in fresh]
            same = {"parts": CONTEXT_PARTS, "max_tokens": 60, "overlap_tokens": 16}
            assert embed_texts(note, chunks, count_tokens=count, **same) == embed_texts(
                new, fresh, count_tokens=count, **same
            )
            assert [(k.line, k.target, k.anchor, k.kind, k.embed) for k in plan.links] == [
                (k.line, k.target, k.anchor, k.kind, k.embed) for k in new.links
            ]
            fields = ("title", "summary", "frontmatter", "tags", "aliases", "headings")
            assert [getattr(note, f) for f in fields] == [getattr(new, f) for f in fields]
    assert carried > 200 and declined > 20  # both ways taken, neither vacuous


def test_a_carried_note_resolves_its_links_with_the_notes_the_same_sync_creates_and_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sync with a rename, a new note and a deleted one (a git pull): a carried-over
    note's links are resolved as the indexer's are, against the vault the sync leaves
    (review of stop 32: its link to the new note was stored unresolved, its link to the
    deleted one resolved)."""
    root = tmp_path / "vault"
    write(root, ".obsidian/app.json", '{"newLinkFormat": "absolute"}\n')
    write(root, "projects/alpha/a0.md", "# Alpha 0\n\nPart.\n")
    write(root, "logs/old.md", "# Old\n\nGoing.\n")
    (root / "logs/plain.md").write_bytes(
        b"# Plain\n\nMet about [[projects/alpha/a0]] and [[Brand new]] and [[old]].\n"
    )
    prepared: list[str] = []
    real_prepare = Indexer._prepare

    def spy(self: Indexer, path: str, *rest: Any) -> Any:
        prepared.append(path)
        return real_prepare(self, path, *rest)

    monkeypatch.setattr(Indexer, "_prepare", spy)
    with open_vault(root) as v:
        v.sync()
        prepared.clear()
        os.rename(root / "projects/alpha", root / "projects/beta")
        write(root, "logs/Brand new.md", "# Brand new\n\nHere now.\n")
        (root / "logs/old.md").unlink()
        v.sync()
        assert "logs/plain.md" not in prepared, "carried over, not parsed again"
        rows = {r.target: r for r in v.engine.store.links("logs/plain.md")}
        assert rows["projects/beta/a0"].resolved == "projects/beta/a0.md"
        assert rows["Brand new"].verdict == "resolved"
        assert rows["Brand new"].resolved == "logs/Brand new.md"
        assert rows["old"].verdict == "unresolved" and rows["old"].resolved is None
