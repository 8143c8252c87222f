"""Search's evidence beside a chunk's fused score (core/ranking.with_evidence,
engine/evidence.py) on a real index: a note whose vectors are still pending is
neither rewarded nor punished for the evidence it cannot have yet (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_vault, note, open_vault, payment_notes, write

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


LOG = "logs/2026-03-01.md"


def _ticket_vault(tmp_path: Path) -> Path:
    """A day log whose one line names a ticket, among lines about something else, and
    fourteen notes about payments that never name it."""
    root = tmp_path / "memory"
    lines = [f"- 0{h}:1{h} Standup with the platform team on roadmap item {h}." for h in range(9)]
    lines.insert(4, "- 04:44 Opened PAY-4521 for the ledger rounding bug.")
    write(root, LOG, "# 2026-03-01\n\n" + "\n".join(lines) + "\n")
    payment_notes(root)
    return root


@pytest.mark.parametrize("place", [1, 0])
def test_the_one_note_naming_a_ticket_is_first_when_it_is_asked_about(
    tmp_path: Path, place: int
) -> None:
    """The capybara line of the outage test: the one chunk holding the question's rare
    word scored 1.0 on the keyword side but near 0 on the vector side (a long day log,
    little like the question), and the payment notes — the question's other words, its
    meaning — ranked it 7th. The note holding the rare word is kept first
    (core/ranking.rare_kept, ``search.rare_place`` 1); off, it is not."""
    root = _ticket_vault(tmp_path)
    with open_vault(root, overrides={"search": {"rare_place": place}}) as vault:
        vault.sync()
        paths = list(dict.fromkeys(h.path for h in vault.search("what happened with PAY-4521?")))
        if place:
            assert paths[0] == LOG, paths
        else:
            assert paths[0] != LOG, paths  # the defect, kept in view


def test_a_rare_word_keeps_no_place_for_a_note_the_searchs_folder_leaves_out(
    tmp_path: Path,
) -> None:
    root = _ticket_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync()
        hits = vault.search("what happened with PAY-4521?", folder="notes")
        assert hits and all(h.path.startswith("notes/") for h in hits)


def test_two_identifiers_in_one_lookup_each_keep_their_note_on_top(tmp_path: Path) -> None:
    """Asked "did PAY-4521 come up with kestrel-db-04?": two day logs, each naming one
    of them, among sixty notes about payments. Neither word carries 0.55 of the
    query's weight, so the rule kept neither; each is a rare word of its own now
    (``search.rare_words`` 2): both logs are the first two notes. Written as a list
    without spaces ("PAY-4521,kestrel-db-04"), they were one word: the same."""
    root = _ticket_vault(tmp_path)
    payment_notes(root, 60)  # a vault of some size: each word in one chunk of 50+
    host = "logs/2026-03-02.md"
    lines = [f"- 1{h}:0{h} Payments sync with finance on invoice batch {h}." for h in range(9)]
    lines.insert(5, "- 15:05 Restarted kestrel-db-04 twice while chasing slow payments.")
    write(root, host, "# 2026-03-02\n\n" + "\n".join(lines) + "\n")
    with open_vault(root) as vault:
        vault.sync()
        lookups = ("did PAY-4521 come up with kestrel-db-04?", "PAY-4521 and kestrel-db-04")
        # a list written without spaces is two words too: a comma or a semicolon parts them
        for query in (*lookups, "PAY-4521,kestrel-db-04", "(PAY-4521;kestrel-db-04)"):
            paths = list(dict.fromkeys(h.path for h in vault.search(query)))
            assert set(paths[:2]) == {LOG, host}, (query, paths)


def test_a_rare_name_in_a_chinese_question_finds_its_note(tmp_path: Path) -> None:
    """关于凤凰的决定是什么 ("what was decided about Phoenix?"), written without spaces:
    the rare word's rule asked for the whole run, which no chunk holds, and never saw
    凤凰, held by one line of a day log among fourteen notes about decisions; the
    keyword side's pairs and the notes' meaning ranked the log below them. Its pairs are
    counted as the keyword side asks for them, the rare ones joined: the log first."""
    root = tmp_path / "memory"
    lines = [f"- 0{h}:1{h} 和平台团队开会，讨论路线图第{h}项。" for h in range(9)]
    lines.insert(4, "- 04:44 提出了凤凰方案，一个小试验。")
    write(root, LOG, "# 2026-03-01\n\n" + "\n".join(lines) + "\n")
    for i in range(14):
        text = f"# 决定 {i}\n\n关于预算的决定是什么？我们的决定是下周再讨论第{i}项。\n"
        write(root, f"decisions/d{i}.md", text)
    with open_vault(root) as vault:
        vault.sync()
        for query in ("关于凤凰的决定是什么", "凤凰方案后来怎么样了"):
            paths = list(dict.fromkeys(h.path for h in vault.search(query)))
            assert paths[0] == LOG, (query, paths)


MEMORY_NOTES = {
    "projects/billing-v2.md": "# Billing v2\n\nA usage-based billing engine: payments, invoices"
    " and proration. What happened last month: payment retries failed twice.\n",
    "projects/ledger-migration.md": "# Ledger migration\n\nMoving the payments ledger to"
    " PostgreSQL. The cut-over happened on a Sunday; two payment tickets are still open.\n",
    "people/ana-lopez.md": "# Ana Lopez\n\nWorks on search. Asked what happened with the"
    " payment provider's outage.\n",
    "people/tom-diaz.md": "# Tom Diaz\n\nTom works on the vendor contracts and pricing. Tom"
    " prefers calls in the morning.\n",
    "people/tom-berg.md": "# Tom Berg\n\nTom leads edge caching; talk to Tom about the CDN"
    " vendor.\n",
    "decisions/2026-02-01-retry-payments.md": "# Retry failed payments\n\nWe decided to retry"
    " failed payments three times. Before, customers were charged twice.\n",
    "logs/2026-02-27.md": "# 2026-02-27\n\n- 10:00 Incident review: the payment webhook timed"
    " out; tickets opened for each failure.\n- 14:00 Budget call.\n",
    "logs/2026-02-28.md": "# 2026-02-28\n\n- 09:30 Payments standup: refunds, and the ticket"
    " queue.\n",
    LOG: "# 2026-03-01\n\n"
    "- 09:05 Standup: Ana flagged latency in the search relaunch; we look again on Thursday.\n"
    "- 10:30 Paired with Ben on the data warehouse loads. Most of the time went into old code.\n"
    "- 11:40 1:1 with Carla about growth plans and the on-call rotation.\n"
    "- 13:15 Opened PAY-4521 for the ledger rounding bug.\n"
    "- 14:10 Call with Tom Rautenbach from the vendor about the edge caching contract; sharp"
    " questions on pricing.\n"
    "- 15:00 Long meeting on the mobile onboarding screens. Dmitri wants a decision by Friday.\n"
    "- 17:20 Wrote up notes on the edge caching budget for Elena.\n",
}


@pytest.mark.model
@pytest.mark.parametrize("place", [1, 0])
def test_with_the_real_model_the_one_note_naming_a_person_is_first(
    tmp_path: Path, place: int
) -> None:
    """The bundled model, a day log that names a vendor's Tom Rautenbach once among
    other entries, and two notes about other Toms: "who is Tom Rautenbach?" ranked the
    two Toms first and the log third (the vectors know Tom, not Rautenbach; the log's
    chunk is the candidates' least like the question). The note holding the rare word
    is kept first."""
    from memvault.api import Vault

    root = tmp_path / "memory"
    for rel, text in MEMORY_NOTES.items():
        write(root, rel, text)
    (root / ".memvault").mkdir()
    with Vault.open(root, overrides={"search": {"rare_place": place}}) as vault:
        vault.sync()
        paths = list(dict.fromkeys(h.path for h in vault.search("who is Tom Rautenbach?")))
    assert LOG in paths
    assert (paths[0] == LOG) == bool(place), paths
