"""A note holding git's conflict markers while git is not in the middle of anything (a
`git stash pop` that conflicted): a person's to resolve (a field test's findings)."""

from __future__ import annotations

from pathlib import Path

from helpers import eventually, note, open_vault, write
from memvault.vault.gitstate import git_busy
from test_memory_git import commit, git, git_vault
from test_service import Proc, api, settled


def test_links_in_a_conflicted_note_wait_until_it_is_resolved(tmp_path: Path) -> None:
    """Field test: `git stash pop` conflicted in ann.md (no MERGE_HEAD: git is busy with
    nothing), and a person renamed bob.md meanwhile: the daemon rewrote the links inside
    the conflict, both sides. The person took the stash's side (`git checkout --theirs`)
    and got `[[bob]]` back, a link to nothing, never re-targeted: the rename was done.
    Now the conflicted note is left as git wrote it, said in status, and its links are
    re-targeted once it is resolved."""
    root = git_vault(tmp_path)
    write(root, "people/bob.md", note("Bob", "Bob runs ops."))
    ann = root / "people" / "ann.md"
    body = "Ann works with [[bob]] {}.\nPhone: 1."
    write(root, "people/ann.md", note("Ann", "Ann leads data.", body=body.format("often")))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        write(root, "people/ann.md", note("Ann", "Ann leads data.", body=body.format("daily")))
        git(root, "stash", "-q")
        write(root, "people/ann.md", note("Ann", "Ann leads data.", body=body.format("weekly")))
        commit(root, "weekly")
        assert git(root, "stash", "pop", check=False).returncode != 0  # a conflict
        assert git_busy(root) is None
        conflicted = ann.read_bytes()
        assert b"<<<<<<< " in conflicted
        (root / "people" / "bob.md").rename(root / "people" / "robert.md")

        def moved() -> bool:
            hits = api(info, "POST", "/search", json={"query": "Bob runs ops"}).json()["hits"]
            return any(h["path"] == "people/robert.md" for h in hits) and bool(settled(info))

        eventually(moved, what="the rename indexed")
        assert ann.read_bytes() == conflicted  # untouched (before: [[robert]] both sides)
        warnings = api(info, "GET", "/status").json()["daemon"]["warnings"]
        assert any(w.startswith("people/ann.md: its links to moved files wait") for w in warnings)
        git(root, "checkout", "--theirs", "--", "people/ann.md")  # the stash's side
        git(root, "reset", "-q")  # (resolved: unstaged, as `git stash pop` leaves it)

        def relinked() -> str | None:
            text = ann.read_text(encoding="utf-8")
            return text if "[[robert]] daily" in text and settled(info) else None

        text = eventually(relinked, what="ann's link re-targeted once resolved")
        assert "<<<<<<<" not in text and "[[bob]]" not in text
    finally:
        proc.stop()


def test_a_folder_note_holding_conflict_markers_is_left_as_git_wrote_it(tmp_path: Path) -> None:
    """A folder note that git could not merge (a `git stash pop` or an add/add merge with
    no merge=union: no MERGE_HEAD after the pop): the update folded the two lists and
    rewrote it, the conflict's lines moved ('=======' and '>>>>>>>' left above the list,
    the other side's count gone) while git still held it unmerged. Left as it is."""
    from test_field_git_generated import limit_people

    root = git_vault(tmp_path)
    limit_people(root, 2)
    for name in ("ann", "bea", "cy"):
        write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is here."))
    with open_vault(root) as v:
        v.sync()
    folder_note = root / "people" / "people.md"
    made = folder_note.read_text(encoding="utf-8")
    begin = made.index("All 3 people")
    head, tail = made[:begin], made[begin:]
    other = tail.replace("All 3 people", "All 4 people").replace(
        "<!-- memvault:end folder -->\n", ""
    )
    ours = tail.replace("<!-- memvault:end folder -->\n", "")
    conflicted = (
        head
        + "<<<<<<< Updated upstream\n"
        + ours
        + "=======\n"
        + other
        + "- [[people/di]] - Di is there.\n"
        + ">>>>>>> Stashed changes\n"
        + "<!-- memvault:end folder -->\n"
    )
    folder_note.write_text(conflicted, encoding="utf-8")
    write(root, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(root) as v:
        v.sync()
    assert folder_note.read_text(encoding="utf-8") == conflicted  # before: rewritten
