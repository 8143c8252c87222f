"""Search's evidence beside a chunk's fused score (core/ranking.with_evidence,
engine/evidence.py) on a real index: a note whose vectors are still pending is
neither rewarded nor punished for the evidence it cannot have yet (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_vault, note, open_vault, write

ANA = "people/ana-lopez.md"


def test_a_note_just_written_ranks_first_for_its_own_words_while_its_vectors_are_pending(
    tmp_path: Path,
) -> None:
    """Seen at a merge: the memory tool wrote Ana's note (keywords indexed, vectors
    pending) and "mornings", its own word, ranked Sarah's note first — her chunks had
    own-line evidence Ana's could not have yet (counted 0 against her), and Ana's one
    chunk, found by "mornings", passed its whole score on to Sarah through the
    "Works with [[sarah-chen]]" line beside it."""
    root = make_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync()
        text = note(
            "Ana Lopez", "Leads the data team; prefers mornings.", "Works with [[sarah-chen]]."
        )
        write(root, ANA, text)
        vault.sync([ANA], vectors=False)
        hits = vault.search("mornings", k=5)
        assert hits[0].path == ANA and hits[0].pending, [(h.path, h.score) for h in hits]


CQRS = "Main Notes/CQRS.md"
BOOK = "Books/Understanding Distributed Systems.md"


def _hop_vault(tmp_path: Path) -> Path:
    root = tmp_path / "garden"
    write(
        root,
        CQRS,
        "# CQRS\n\nCommand query responsibility segregation: separate models for reads"
        " and writes.\n\n## References\n- [[Understanding Distributed Systems]]\n",
    )
    write(
        root,
        BOOK,
        "# Understanding Distributed Systems\n\nChapter 12: messaging, exactly-once"
        " delivery is simulated with idempotent consumers.\n",
    )
    write(
        root,
        "Main Notes/Event Sourcing.md",
        "# Event Sourcing\n\nStore every change as an event; pairs well with CQRS read models.\n",
    )
    write(
        root,
        "Main Notes/Read Replicas.md",
        "# Read Replicas\n\nCopies of a database that serve reads; writes go to the primary.\n",
    )
    return root


@pytest.mark.parametrize("hop", [0.9, 0.0])
def test_the_note_a_hits_pointer_line_links_ranks_right_behind_the_hit(
    tmp_path: Path, hop: float
) -> None:
    """Asked "which book did I take the CQRS notes from?": the CQRS note's References line
    (``- [[Understanding Distributed Systems]]``) is the answer one link away, and the
    book's own text never says CQRS. With the hop (core/hops) the book comes right
    after the note that points at it; without it (0: off) it is not among the first two."""
    root = _hop_vault(tmp_path)
    with open_vault(root, overrides={"search": {"hop_weight": hop}}) as vault:
        vault.sync()
        hits = vault.search("CQRS references", k=2, group=True)
    paths = [h.path for h in hits]
    assert paths[0] == CQRS, paths
    assert (paths[1] == BOOK) == bool(hop), paths


SYMLINKS = "Files and folders/Symbolic links.md"
MANAGE = "Files and folders/Manage vaults.md"


@pytest.mark.parametrize("described", [1.0, 0.0])
def test_the_note_a_hits_best_line_describes_ranks_right_behind_the_hit(
    tmp_path: Path, described: float
) -> None:
    """A hit whose best line is a whole sentence about another note ("... see
    [[Symbolic links]] ...": no pointer line, far more than four words) brings that note
    in right behind it (core/hops ``passed_share``), though the note's own text shares
    no word with the question; off (0: pointer lines only), a note that matches the
    question's words weakly (Backups) stays between them."""
    root = tmp_path / "help"
    write(
        root,
        MANAGE,
        "# Manage vaults\n\nA vault is a folder of notes.\n\nTo keep a folder from another"
        " drive inside your vault, see [[Symbolic links]] and how to make one.\n",
    )
    write(root, SYMLINKS, "# Symbolic links\n\nA junction or symlink made with ln -s or mklink.\n")
    write(
        root,
        "Files and folders/Backups.md",
        "# Backups\n\nCopy the vault folder daily, one copy on a second drive.\n",
    )
    write(
        root,
        "Files and folders/Folders.md",
        "# Folders\n\nMove a folder into your vault, or keep it inside another folder.\n",
    )
    write(root, "Plugins/Sync.md", "# Sync\n\nSync keeps a vault the same on every device.\n")
    # the rule alone: the link evidence and the vector side's kept place off (each
    # would lift the linked note too)
    alone = {"hop_described": described, "link_weight": 0.0, "nearest_place": 0}
    with open_vault(root, overrides={"search": alone}) as vault:
        vault.sync()
        hits = vault.search("keep a folder from another drive inside my vault", k=5, group=True)
    paths = [h.path for h in hits]
    assert MANAGE in paths and SYMLINKS in paths, paths
    assert (paths.index(SYMLINKS) == paths.index(MANAGE) + 1) == bool(described), paths


def test_a_hop_never_leads_outside_a_searchs_folder(tmp_path: Path) -> None:
    """A filtered search keeps to its filter: the book the CQRS note points at lies
    outside ``Main Notes/`` and does not enter a search of that folder."""
    root = _hop_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync()
        hits = vault.search("CQRS references", k=5, folder="Main Notes")
    assert hits and all(h.path.startswith("Main Notes/") for h in hits), [h.path for h in hits]


OS_BOOK = "Books/Operating Systems.md"
SIGKILL = "Main Notes/SIGKILL.md"


def _digest_vault(tmp_path: Path) -> Path:
    """A book's notes (eleven chapters, one on signals) and a one-line note on SIGKILL."""
    root = tmp_path / "garden"
    topics = [
        "paging and the translation lookaside buffer",
        "scheduling with multilevel feedback queues",
        "locks and condition variables",
        "the file system journal and crash consistency",
        "RAID levels and disk striping",
        "virtual machines and hypervisors",
        "semaphores and the dining philosophers",
        "memory allocation with free lists",
        "the buddy allocator",
        "inode layout on disk",
    ]
    chapters = "".join(
        f"## Chapter {i}\n\n" + f"This chapter covers {topic}. " * 6 + "\n\n"
        for i, topic in enumerate(topics)
    )
    write(
        root,
        OS_BOOK,
        "# Operating Systems\n\n" + chapters + "## Chapter signals\n\nWhich kill signal cannot"
        " be caught? SIGKILL cannot be caught, a kill signal the process cannot handle;"
        " signal handlers catch SIGINT and SIGTERM.\n",
    )
    write(root, SIGKILL, "# SIGKILL\n\nThe kill signal a process cannot catch or handle.\n")
    write(root, "Main Notes/Pipes.md", "# Pipes\n\nA pipe connects one process to another.\n")
    return root


@pytest.mark.parametrize("focus", [0.25, 0.0])
def test_a_note_about_the_match_throughout_passes_a_digest_that_mentions_it_once(
    tmp_path: Path, focus: float
) -> None:
    """Modelled on the garden's digests (its OS book, 79 chunks, one on signals): the
    book's signals chapter repeats the question's words and ranks first; the SIGKILL
    note is the vector side's nearest chunk. The two sides disagree about the note, and the book's mean
    vector is far from its signals chunk (ten other chapters) while the note's is
    its one chunk: with the focus (core/focus) the note comes first; without (0) the
    book stays first."""
    root = _digest_vault(tmp_path)
    with open_vault(root, overrides={"search": {"focus_weight": focus}}) as vault:
        vault.sync()
        hits = vault.search("which kill signal cannot be caught", k=2, group=True)
    paths = [h.path for h in hits]
    assert set(paths) == {OS_BOOK, SIGKILL}, paths
    assert paths[0] == (SIGKILL if focus else OS_BOOK), paths
