"""A heavy Obsidian user's vault: the files its plugins write among the notes.

Found by the field test of such a vault (Excalidraw, Kanban, Dataview, Templater,
Canvas, Obsidian Git; 2,000 daily notes, a .trash, attachments):

- every Excalidraw drawing had a chunk of the plugin's banner (`==⚠ Switch to
  EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠== You can decompress
  Drawing data with the command palette...`), embedded and keyed: a search for
  "settings", "menu", "decompress data" found drawings (their banner, 20 copies folded
  under one hit), and a chunk of the ids of the images it embeds (`<sha1>: [[Pasted
  Image ….png]]`). Neither is the drawing's words; its text elements are searched.
- `memvault init` left out of the index the folder of Obsidian's core Templates plugin
  (`.obsidian/templates.json`) or a top-level `Templates/`, not the folder of Templater
  (`.obsidian/plugins/templater-obsidian/data.json`, `templates_folder`), the plugin
  most vaults make their notes with (`_templates/`, `Meta/Templater/`): its templates
  were notes, `<% tp.file.title %>` a title in search and `- 6 notes in Meta/` in
  MEMORY.md's topics, `<% tp.date.now() %>` a description.
- the block ids Obsidian hides in its reading view (`^iWFQyN0b`, one on each of a
  drawing's text elements, `- [ ] task ^abc123` in any note) were embedded: four to eight
  word pieces of random letters each, 76 % of what the model read of a drawing's short
  labels (89 word pieces for 21 of words), 47 % of the field vault's drawings, which
  took twice the chunks. The model reads a chunk without them; the chunk's text, its
  citation and `[[note#^id]]` are the file's as before.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from helpers import new_vault, open_vault, write
from memvault.vault.template import find_roles, init_vault

BANNER = (
    "==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠== You can "
    "decompress Drawing data with the command palette: 'Decompress current Excalidraw file'. "
    "For more info check in plugin settings under 'Saving'"
)
FILE_ID = "5cffcea1b1530f23778adac158b699666d75bfcc"


def drawing(words: str, image: str) -> str:
    """A drawing as the plugin saves it (compressed): its text elements, an element's
    link, the images it embeds by file id, the scene in a comment."""
    scene = "\n\n".join(
        "N4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hADTgQBuCpAzoQPYB" * 4 for _ in range(3)
    )
    return (
        "---\n\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n\n---\n"
        f"{BANNER}\n\n\n# Excalidraw Data\n\n## Text Elements\n{words} ^iWFQyN0b\n\n"
        "Formula on the side ^AoCDpWg1\n\n"
        "## Element Links\nAoCDpWg1: [[carla]]\n\n"
        f"## Embedded Files\n{FILE_ID}: [[{image}]]\n\n"
        "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2: $$E = mc^2$$\n\n"
        f"%%\n## Drawing\n```compressed-json\n{scene}\n```\n%%"
    )


def chunk_texts(root: Path) -> dict[str, list[str]]:
    con = sqlite3.connect(root / ".memvault/index.db")
    try:
        rows = con.execute("SELECT path, text FROM chunks ORDER BY path, ord").fetchall()
    finally:
        con.close()
    out: dict[str, list[str]] = {}
    for path, text in rows:
        out.setdefault(path, []).append(text)
    return out


def test_a_drawings_banner_and_file_ids_are_not_indexed_its_words_are(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    for i in range(3):
        write(
            root, f"Excalidraw/sketch-{i}.excalidraw.md", drawing(f"Billing flow {i}", f"p{i}.png")
        )
        write(root, f"attachments/p{i}.png", "\x89PNG")
    write(root, "notes/settings.md", "# Settings\n\nThe plugin settings menu of the app.\n")
    with open_vault(root) as v:
        v.sync()
        texts = chunk_texts(root)
        drawn = [t for p, ts in texts.items() if p.startswith("Excalidraw/") for t in ts]
        assert drawn and not any("EXCALIDRAW VIEW" in t or FILE_ID in t for t in drawn), drawn
        # the drawing's own words: its text elements, an element's link, a formula
        assert any("Billing flow 0" in t for t in drawn)
        assert any("[[carla]]" in t for t in drawn)
        assert any("E = mc^2" in t for t in drawn)
        hits = v.search("decompress drawing data command palette plugin settings menu", k=10)
        assert hits[0].path == "notes/settings.md", hits
        assert not any("ecompress" in h.text or "MORE OPTIONS" in h.text for h in hits), hits
        assert v.search("billing flow 2", k=1)[0].path == "Excalidraw/sketch-2.excalidraw.md"
        # the image is still a link of the drawing: renamed, the plugin's line follows
        (root / "attachments/p1.png").rename(root / "attachments/q1.png")
        v.sync()
        text = (root / "Excalidraw/sketch-1.excalidraw.md").read_text(encoding="utf-8")
        assert f"{FILE_ID}: [[q1.png]]" in text
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "EXCALIDRAW VIEW" not in memory and FILE_ID not in memory


TEMPLATER = """---
created: <% tp.file.creation_date() %>
---
# <% tp.file.title %>

<% tp.date.now("YYYY-MM-DD") %> standup of the billing team.

<%* const t = await tp.system.prompt("Title") %>
## Notes

<% tp.file.cursor() %>
"""


def test_init_leaves_templaters_templates_folder_out_of_the_index(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root, "Meta/Templater/Standup.md", TEMPLATER)
    write(root, "Meta/Templater/Person.md", TEMPLATER.replace("standup", "person"))
    write(
        root, "Meta/Templates/Snippet.md", "# {{title}}\n\nA core template of the billing team.\n"
    )
    write(root, "Meta/Reading.md", "# Reading\n\nBooks about the billing team.\n")
    write(root, "Inbox/idea.md", "# Idea\n\nA standup for the billing team.\n")
    write(root, ".obsidian/templates.json", '{"folder": "Meta/Templates"}')
    write(
        root,
        ".obsidian/plugins/templater-obsidian/data.json",
        '{"command_timeout": 5, "templates_folder": "/Meta/Templater/", "trigger_on_file_creation": false}',
    )
    report = init_vault(root)
    assert report.templates_ignored == ("Meta/Templates", "Meta/Templater")
    with open_vault(root) as v:
        v.sync()
        ignored = v.status()["ignored"]
        assert ignored["Meta/Templater/"] == 2 and ignored["Meta/Templates/"] == 1, ignored
        hits = v.search("standup billing team", k=10)
        assert hits and not any(
            h.path.startswith(("Meta/Templater/", "Meta/Templates/")) for h in hits
        )
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "tp." not in memory and "- 1 note in Meta/" in memory, memory


@pytest.mark.parametrize(
    ("folder", "beside"),
    [("Drafts*", "Drafts-2024"), ("T?", "TX"), ("[T] templates", "T templates")],
)
def test_a_templater_folder_named_with_glob_characters_is_ignored_alone(
    tmp_path: Path, folder: str, beside: str
) -> None:
    """Templater's folder was written into `vault.ignore` as it is named: `Drafts*/**`
    left `Drafts-2024/` out of the index too, `T?/**` every folder of two letters. Its
    `*` and `?` escaped (`Drafts\\*/**`), it is that folder alone; `[` and `]` are
    themselves in memvault's globs (`paths.glob_regex`)."""
    root = tmp_path / "notes"
    write(root, f"{folder}/Standup.md", TEMPLATER)
    write(root, f"{beside}/retro.md", "# Retro\n\nThe billing team's retro went well.\n")
    write(
        root,
        ".obsidian/plugins/templater-obsidian/data.json",
        json.dumps({"templates_folder": folder}),
    )
    report = init_vault(root)
    assert report.templates_ignored == (folder,)
    with open_vault(root) as v:
        v.sync(vectors=False)
        ignored = v.status()["ignored"]
        assert ignored[f"{folder}/"] == 1 and set(ignored) == {f"{folder}/", "templates/"}
        assert v.engine.store.note(f"{beside}/retro.md") is not None
        assert v.engine.store.note(f"{folder}/Standup.md") is None


def test_a_templater_folder_that_is_no_folder_of_the_vault_is_not_written(tmp_path: Path) -> None:
    """Templater's setting naming a folder that is not there (or one outside the vault,
    a dot-folder) changes nothing: the vault's own top-level Templates/ still is."""
    root = tmp_path / "notes"
    write(root, "Templates/Daily.md", TEMPLATER)
    write(root, "Inbox/idea.md", "# Idea\n\nA standup.\n")
    for folder in ("Gone", "../outside", ".hidden"):
        write(
            root,
            ".obsidian/plugins/templater-obsidian/data.json",
            json.dumps({"templates_folder": folder}),
        )
        assert find_roles(root) == ({}, ("Templates",))


def embedded(root: Path, path: str) -> list[str]:
    """The texts queued for the model (a sync without vectors leaves them queued)."""
    con = sqlite3.connect(root / ".memvault/index.db")
    try:
        rows = con.execute(
            "SELECT p.text FROM pending p JOIN chunks c ON c.label = p.label "
            "WHERE c.path = ? ORDER BY c.ord",
            (path,),
        ).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def test_block_ids_are_not_read_by_the_model_but_stay_in_the_note(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    labels = ["Okta", "CRM", "Payments", "Loyalty Engine", "Register", "Order History"] * 40
    ids = [f"{i:04d}{w[:2]}Zq" for i, w in enumerate(labels)]
    elements = "\n\n".join(f"{w} ^{i}" for w, i in zip(labels, ids, strict=True)) + "\n\nEnd"
    write(root, "Excalidraw/systems.excalidraw.md", drawing(elements, "p.png"))
    write(root, "Excalidraw/labels.excalidraw.md", drawing("\n\n".join([*labels, "End"]), "q.png"))
    write(root, "notes/plan.md", "# Plan\n\n- [ ] Ship the ledger ^ship-1\n- [ ] Tell ops\n")
    write(
        root,
        "notes/links.md",
        "# Links\n\nSee [[plan#^ship-1]] and [[systems.excalidraw#^0002PaZq]].\n",
    )
    with open_vault(root) as v:
        v.sync(vectors=False)
        texts = embedded(root, "Excalidraw/systems.excalidraw.md")
        drawn = chunk_texts(root)["Excalidraw/systems.excalidraw.md"]
        assert sum(t.count("Okta ^") for t in drawn) == 40  # the chunks: the file's lines
        ids_read = [i for i in [*ids, "iWFQyN0b", "AoCDpWg1"] if any(f"^{i}" in t for t in texts)]
        assert texts and ids_read == [], ids_read
        # the ids take no room in the model's window: as many chunks as the labels alone
        assert len(texts) == len(embedded(root, "Excalidraw/labels.excalidraw.md"))
        (plan,) = embedded(root, "notes/plan.md")
        assert "Ship the ledger\n- [ ] Tell ops" in plan and "ship-1" not in plan
        # the file's words as they are: the hit's text, the block's anchor
        hit = v.search("ship the ledger", k=1)[0]
        assert hit.path == "notes/plan.md" and "Ship the ledger ^ship-1" in hit.text
        assert [p for p in v.links_check() if p.source == "notes/links.md"] == []
        v.sync()  # and embedded, by the model's window
        found = {h.path for h in v.search("loyalty engine", k=2, group=True)}
        assert found == {"Excalidraw/systems.excalidraw.md", "Excalidraw/labels.excalidraw.md"}


def _rows(root: Path) -> dict[str, list[tuple[int, str, str]]]:
    """Each note's chunks as the index holds them: (label, sha, text)."""
    con = sqlite3.connect(root / ".memvault/index.db")
    try:
        rows = con.execute("SELECT path, label, sha, text FROM chunks ORDER BY path, ord")
        out: dict[str, list[tuple[int, str, str]]] = {}
        for path, label, sha, text in rows:
            out.setdefault(path, []).append((label, sha, text))
        return out
    finally:
        con.close()


def test_an_index_of_schema_17_reads_again_its_drawings_and_block_ids(tmp_path: Path) -> None:
    """An index an older memvault made holds each drawing's banner chunk and the block
    ids' embedded texts; with no schema step an unchanged drawing kept its banner in
    search until it was saved again (most never are), and a chunk's stored sha was no
    longer the one its text gives (a lost vector re-embedded under another key). The
    upgrade reads those notes again, as a fresh index would; others stay as they are."""
    from memvault.index.schema import SCHEMA_VERSION, register

    root = new_vault(tmp_path)
    write(root, "Excalidraw/sketch.excalidraw.md", drawing("Billing flow", "p.png"))
    write(root, "notes/plan.md", "# Plan\n\n- [ ] Ship the ledger ^ship-1\n- [ ] Tell ops\n")
    write(root, "notes/plain.md", "# Plain\n\nThe ledger ships on Monday, x^2 aside.\n")
    with open_vault(root) as v:
        v.sync()
    fresh = _rows(root)
    drawn = "Excalidraw/sketch.excalidraw.md"
    db = sqlite3.connect(root / ".memvault/index.db")
    register(db)  # (the keyword table's triggers call it)
    with db:  # as schema 17 left them: a banner chunk, a sha of the text with its block id
        db.execute(
            "UPDATE chunks SET text = ? || char(10) || text WHERE path = ? AND ord = 0",
            (BANNER, drawn),
        )
        db.execute("UPDATE chunks SET sha = 'with-its-block-id' WHERE path = 'notes/plan.md'")
        db.execute("UPDATE meta SET value = '17' WHERE key = 'schema_version'")
    db.close()
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(SCHEMA_VERSION)
        report = v.sync()
        assert set(report.modified) == {drawn, "notes/plan.md"}, report
        assert not any("ecompress" in h.text for h in v.search("decompress drawing data", k=5))
    now = _rows(root)
    assert [t for _, _, t in now[drawn]] == [t for _, _, t in fresh[drawn]]
    assert [s for _, s, _ in now["notes/plan.md"]] == [s for _, s, _ in fresh["notes/plan.md"]]
    assert now["notes/plain.md"] == fresh["notes/plain.md"]  # not read: label and vector kept


def test_a_postgres_schema_16_reads_again_its_drawings_and_block_ids(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same on PostgreSQL, version 16 -> 17."""
    import psycopg

    from memvault.index.pg_schema import PG_SCHEMA_VERSION

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    drawn = "Excalidraw/sketch.excalidraw.md"
    write(root, drawn, drawing("Billing flow", "p.png"))
    write(root, "notes/plan.md", "# Plan\n\n- [ ] Ship the ledger ^ship-1\n- [ ] Tell ops\n")
    write(root, "notes/plain.md", "# Plain\n\nThe ledger ships on Monday, x^2 aside.\n")
    with open_vault(root) as v:
        v.sync()
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as version 16 left it
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '16' WHERE key = 'schema_version'")
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION)
        assert set(v.sync().modified) == {drawn, "notes/plan.md"}


def test_a_new_model_does_not_cut_again_a_drawing_whose_block_ids_it_never_reads(
    tmp_path: Path,
) -> None:
    """A new model (same tokenizer, same window) re-embeds a drawing's chunks as they are:
    its chunks were sized by the text the model reads, without the block ids, so the text
    as written (ids and all) may pass the window; it counted as past it, and the drawing
    was read and cut again at every change of model (said as "1 notes cut again")."""
    from memvault.index.embedder import HashEmbedder

    root = new_vault(tmp_path)
    labels = ["Okta", "CRM", "Payments", "Loyalty Engine", "Register", "Order History"] * 40
    ids = [f"{i:04d}{w[:2]}Zq" for i, w in enumerate(labels)]
    elements = "\n\n".join(f"{w} ^{i}" for w, i in zip(labels, ids, strict=True)) + "\n\nEnd"
    drawn = "Excalidraw/systems.excalidraw.md"
    write(root, drawn, drawing(elements, "p.png"))
    with open_vault(root) as v:
        v.sync()
        kept = v.engine.store.labels_of([drawn])
        window = min(v.engine.config.index.max_chunk_tokens, v.engine.embedding.max_tokens)
        assert any(c.tokens > window for c in v.engine.store.chunks_of(drawn))  # as written
    with open_vault(root, embedder=HashEmbedder(dim=32)) as v:
        report = v.sync()
        assert not any("cut again" in w for w in report.warnings), report.warnings
        assert v.engine.store.labels_of([drawn]) == kept


def test_a_block_id_obsidian_adds_to_a_line_leaves_it_its_line_vector(tmp_path: Path) -> None:
    """Obsidian's "Copy link to block" appends `^id` to the line. The chunk's embedded
    text is the same (the model reads no block id): it keeps its vector, and the line
    must keep its own (context ranks lines by them). The line's embedded text held the
    id: a text never embedded, the line left with no vector."""
    from memvault.core.excerpts import unit_texts
    from memvault.core.text import sha256_text

    root = new_vault(tmp_path)
    write(root, "notes/plan.md", "# Plan\n\n- [ ] Ship the ledger\n- [ ] Tell ops\n")
    with open_vault(root) as v:
        v.sync()
        write(root, "notes/plan.md", "# Plan\n\n- [ ] Ship the ledger ^ship-1\n- [ ] Tell ops\n")
        report = v.sync()
        assert report.modified == ("notes/plan.md",) and report.embedded_chunks == 0
        store, model = v.engine.store, v.engine.embedding.model_id()
        lines = [t for c in store.chunks_of("notes/plan.md") for t in unit_texts(c.text)]
        assert "- [ ] Ship the ledger" in lines, lines
        assert all(store.cached(model, [sha256_text(t)]) for t in lines), lines


CODE_CARETS = (
    "# Git\n\nList what the branch adds ^adds\n\n"
    "```sh\ngit log feature ^main\n```\n\n"
    "~~~~\ngit rev-list HEAD ^origin\n~~~~\n\n"
    "Or inline: `git log topic ^dev\n--oneline` prints one line each.\n\n"
    "Indented, after a blank line:\n\n    git log fix ^release\n"
)


def test_a_caret_word_ending_a_line_of_code_is_read_by_the_model(tmp_path: Path) -> None:
    """``^word`` ending a line of code is code, not a block id: Obsidian shows it (its own
    help writes a manual block id inside a fence as the example it shows), and
    ``[[note#^word]]`` finds no block there. The model read it dropped, as an id: `git log
    feature ^main` embedded as `git log feature`, the opposite command. Now kept in a
    fence of backticks or tildes (any length), a code span running over a line's end and
    indented code; the id ending the prose beside them is still dropped; the chunks' text
    and the anchors resolve as before."""
    from memvault.core.excerpts import unit_texts

    root = new_vault(tmp_path)
    write(root, "notes/git.md", CODE_CARETS)
    write(root, "notes/links.md", "# Links\n\nSee [[git#^adds]] and [[git#^main]].\n")
    code = ("feature ^main", "HEAD ^origin", "topic ^dev", "fix ^release")
    with open_vault(root) as v:
        v.sync(vectors=False)
        texts = "\n".join(embedded(root, "notes/git.md"))
        assert [c for c in code if c not in texts] == [], texts
        assert "what the branch adds\n" in texts and "^adds" not in texts
        stored = "\n".join(chunk_texts(root)["notes/git.md"])
        assert "branch adds ^adds" in stored and all(c in stored for c in code)
        lines = [t for c in v.engine.store.chunks_of("notes/git.md") for t in unit_texts(c.text)]
        assert "List what the branch adds" in lines, lines
        # a line's own text (context's ranking): a fence is one unit, an indented line
        # is code alone; a line of a span running over its end is read alone (left open)
        assert [c for c in code if not any(c in t for t in lines)] == ["topic ^dev"], lines
        broken = [(p.anchor, p.verdict) for p in v.links_check() if p.source == "notes/links.md"]
        assert broken == [("^main", "anchor")]  # ^adds is a block; ^main in a fence is not
        assert (
            v.get("notes/git.md", heading="^adds").text.strip() == "List what the branch adds ^adds"
        )


def test_an_index_of_schema_18_reads_its_notes_with_a_caret_in_code_again(tmp_path: Path) -> None:
    """Schema 18 dropped a `^word` ending a line of code from what the model reads; a note
    rarely saved again kept that text for good. The 18 -> 19 step has the notes with a
    `^` where 18 looked and a sign of code read again (the model reads `feature ^main`),
    and only those: a note whose block id ends prose is left as it is."""
    root = new_vault(tmp_path)
    write(root, "notes/git.md", CODE_CARETS)
    write(root, "notes/plain.md", "# Plain\n\nA paragraph with an id ^para\n")
    with open_vault(root) as v:
        v.sync(vectors=False)
    db = sqlite3.connect(root / ".memvault" / "index.db", isolation_level=None)
    # what schema 18 queued: the model's text without the `^word` ending a line of code
    db.execute("UPDATE pending SET text = replace(text, ' ^main', '')")
    db.execute("UPDATE chunks SET sha = 'of 18' WHERE text LIKE '%feature ^main%'")
    db.execute("DROP TABLE link_keys")  # schema 18 had none
    db.execute("UPDATE meta SET value = '18' WHERE key = 'schema_version'")
    db.close()
    assert not any("feature ^main" in t for t in embedded(root, "notes/git.md"))
    with open_vault(root) as v:
        db = sqlite3.connect(root / ".memvault" / "index.db")
        marked = db.execute("SELECT path FROM notes WHERE mtime_ns = -1").fetchall()
        db.close()
        assert marked == [("notes/git.md",)]
        v.sync(vectors=False)
    assert any("feature ^main" in t for t in embedded(root, "notes/git.md"))


def test_a_drawing_of_the_plugins_2x_is_searched_by_its_words_kept_inside_its_comment(
    tmp_path: Path,
) -> None:
    """The plugin (2.x) keeps its whole data section inside `%%` (`%%` then `# Excalidraw
    Data`): a comment, never indexed, the drawing's text elements with it. Such a
    drawing was found by nothing of its own (its only chunk `tags: [excalidraw]` once
    the banner went); now by its text elements, described by the first; the scene, the
    banner and the file ids stay out."""
    root = new_vault(tmp_path)
    old = drawing("Billing flow", "p.png")  # the plugin's 1.x layout, the data outside %%
    new = old.replace("\n\n\n# Excalidraw Data\n", "\n\n\n%%\n# Excalidraw Data\n").replace(
        "\n\n%%\n## Drawing\n", "\n\n## Drawing\n"
    )
    assert new.count("%%") == 2 and new != old
    write(root, "Excalidraw/ledger.excalidraw.md", new.replace("Billing flow", "Ledger reconciler"))
    write(root, "notes/other.md", "# Other\n\nNothing of ledgers here.\n")
    with open_vault(root) as v:
        v.sync()
        (hit,) = v.search("ledger reconciler", k=1)
        assert hit.path == "Excalidraw/ledger.excalidraw.md" and "Ledger reconciler" in hit.text
        drawn = chunk_texts(root)["Excalidraw/ledger.excalidraw.md"]
        assert not any(
            "EXCALIDRAW VIEW" in t or FILE_ID in t or "N4KAkAR" in t or "excalidraw]" in t
            for t in drawn
        ), drawn
        assert v.engine.store.note("Excalidraw/ledger.excalidraw.md").summary == (
            "Ledger reconciler"
        )
