"""A first sync of many notes: its link rows, and its two lanes side by side."""

from __future__ import annotations

from pathlib import Path

from helpers import new_vault, note, open_vault, write
from memvault.core.wikilinks import LinkIndex
from memvault.engine import indexer

NOTES = 450  # more than two batches of BATCH_NOTES (200): links cross batches both ways


def _links_vault(tmp_path: Path) -> Path:
    """Notes each linking the one before and the one after (by name, by path), the last
    through an alias the first note gives itself, and a name two folders share."""
    root = new_vault(tmp_path)
    for i in range(NOTES):
        body = f"Before [[n{(i - 1) % NOTES:03}]], after [[people/n{(i + 1) % NOTES:03}]]."
        if i == NOTES - 1:
            body += " Back to [[the first]]."
        if i == 0:
            body += " Twin [[twin]]."
        fields = {"aliases": "[the first]"} if i == 0 else {}
        write(root, f"people/n{i:03}.md", note(f"N {i}", f"note {i}", body, **fields))
    write(root, "projects/twin.md", note("Twin", "one twin"))
    write(root, "decisions/twin.md", note("Twin", "the other twin"))
    return root


def _stored(v: object) -> dict[tuple[str, int, str], tuple[str, str | None, tuple[str, ...]]]:
    rows = v.engine.store.links()  # type: ignore[attr-defined]
    return {(r.source, r.line, r.target): (r.verdict, r.resolved, r.candidates) for r in rows}


def _truth(v: object) -> dict[tuple[str, int, str], tuple[str, str | None, tuple[str, ...]]]:
    """Each stored link resolved afresh against every file of the vault as it is."""
    store = v.engine.store  # type: ignore[attr-defined]
    paths, aliases = store.paths_and_aliases()
    idx = LinkIndex(paths + store.attachment_paths(), aliases)
    out = {}
    for r in store.links():
        res = idx.resolve(r.target, r.source)
        out[(r.source, r.line, r.target)] = (res.verdict, res.path, res.candidates)
    return out


def test_first_sync_resolves_links_into_later_batches(tmp_path: Path) -> None:
    root = _links_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        stored = _stored(v)
        mine = [k for k in stored if k[0].startswith("people/")]
        assert len(mine) == 2 * NOTES + 2
        assert stored == _truth(v)
        # concretely: into the same batch, a later one, an earlier one, by alias, a tie
        first = "people/n000.md"
        assert stored[(first, 8, "people/n001")] == ("resolved", "people/n001.md", ())
        assert stored[(first, 8, "n449")] == ("resolved", "people/n449.md", ())
        assert stored[("people/n449.md", 7, "people/n000")] == ("resolved", first, ())
        assert stored[("people/n449.md", 7, "the first")] == ("alias", first, ())
        assert stored[("people/n250.md", 7, "n249")] == ("resolved", "people/n249.md", ())
        assert stored[(first, 8, "twin")] == (
            "ambiguous",
            None,
            ("decisions/twin.md", "projects/twin.md"),
        )


def test_new_notes_of_one_save_resolve_each_other(tmp_path: Path) -> None:
    """A save of notes that link each other (a small sync: one batch, no pause)."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        write(root, "people/ana.md", note("Ana", "ana", "Works with [[bo]]."))
        write(root, "people/bo.md", note("Bo", "bo", "Works with [[ana]] and [[people/bo]]."))
        v.sync(["people/ana.md", "people/bo.md"])
        stored = _stored(v)
        assert stored[("people/ana.md", 7, "bo")] == ("resolved", "people/bo.md", ())
        assert stored[("people/bo.md", 7, "ana")] == ("resolved", "people/ana.md", ())
        assert stored[("people/bo.md", 7, "people/bo")] == ("resolved", "people/bo.md", ())
        assert stored == _truth(v)


def test_an_alias_given_in_a_later_batch_resolves_links_of_earlier_ones(
    tmp_path: Path, monkeypatch: object
) -> None:
    """An alias a note gives itself in the sync's last batch: the links naming it that
    earlier batches stored are resolved to it too."""
    monkeypatch.setattr(indexer, "BATCH_NOTES", 3)  # type: ignore[attr-defined]
    root = new_vault(tmp_path)
    for i in range(8):
        write(root, f"logs/l{i}.md", note(f"L {i}", f"log {i}", "See [[Boss]]."))
    write(root, "people/zed.md", note("Zed", "zed", "Me.", aliases="[Boss]"))
    with open_vault(root) as v:
        v.sync()
        stored = _stored(v)
        for i in range(8):
            assert stored[(f"logs/l{i}.md", 7, "Boss")] == ("alias", "people/zed.md", ())
        assert stored == _truth(v)
