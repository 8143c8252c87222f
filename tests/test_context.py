"""The budgeted context never exceeds its budget: as a pure function over any
pieces and tokenizer, and through the engine with the real model's tokenizer
over many queries and budgets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import host_log, make_vault, note, open_vault, payment_notes, write
from memvault.api import Vault
from memvault.core.context import Piece, assemble, index_part

WORD = re.compile(r"\w+|[^\w\s]")


def count(text: str) -> int:
    """A stand-in tokenizer: words and punctuation marks (joins can change the count)."""
    return len(WORD.findall(text))


texts = st.text(alphabet=st.sampled_from(list("abc xyz.,#|[]\n\n-é漢😀")), min_size=0, max_size=120)


@st.composite
def pieces(draw: st.DrawFn) -> list[Piece]:
    out = []
    for i in range(draw(st.integers(0, 12))):
        path = draw(st.sampled_from(["a.md", "b.md", "people/c.md", "logs/2024-01-02.md"]))
        start = draw(st.integers(1, 50))
        whole = draw(st.booleans()) and i % 4 == 0
        out.append(
            Piece(
                path,
                -1 if whole else draw(st.integers(0, 6)),
                tuple(draw(st.lists(st.sampled_from(["Intro", "Plan", "Why"]), max_size=2))),
                start,
                start + draw(st.integers(0, 9)),
                draw(texts),
                whole=whole,
                title=draw(st.sampled_from(["", "A", "Plan"])),
                date=draw(st.sampled_from([None, "2024-01-02"])),
            )
        )
    return out


@settings(max_examples=300, deadline=None)
@given(
    hits=pieces(),
    linked=pieces(),
    budget=st.integers(0, 400),
    memory=texts,
    share=st.floats(0, 1),
)
def test_assemble_never_exceeds_the_budget(
    hits: list[Piece], linked: list[Piece], budget: int, memory: str, share: float
) -> None:
    index = index_part(memory, int(budget * share), count, ["abc"])
    ctx = assemble("q", budget, count, index, hits, linked)
    assert ctx.tokens == count(ctx.text) <= budget
    chosen = [p for p in (*hits, *linked) if p.text.strip("\n")]
    for source in ctx.sources:  # everything cited is in the text, nothing else is cited
        if source.why == "index":
            assert index and index in ctx.text
        else:
            assert source.path in {p.path for p in chosen}
            assert f"[[{source.path.removesuffix('.md')}" in ctx.text


def test_a_fact_logged_again_elsewhere_goes_in_once() -> None:
    fact = "Decision: Use PostgreSQL for the user service database schema, one table per aggregate."
    hits = [
        Piece("decisions/a.md", 0, (), 11, 14, f"{fact}\n*Migrated from line 343.*"),
        Piece("decisions/b.md", 0, (), 11, 14, f"{fact}\n*Migrated from line 2653.*"),
        Piece("decisions/c.md", 0, (), 3, 5, "We chose Kafka for domain events; ordering per key."),
        Piece("logs/d.md", 0, (), 1, 1, "Short line."),
        Piece("logs/e.md", 0, (), 1, 1, "Short line!"),  # too short to call a near duplicate
    ]
    ctx = assemble("q", 1000, count, "", hits)
    assert [s.path for s in ctx.sources] == [
        "decisions/a.md",
        "decisions/c.md",
        "logs/d.md",
        "logs/e.md",
    ]
    assert ctx.text.count("PostgreSQL") == 1


def test_when_duplicates_use_up_the_candidates_the_context_looks_further(
    tmp_path: Path,
) -> None:
    """A dump logged one decision on 150 days: the first 100 candidates are copies,
    which go in once; the context then looks further and finds the other decision."""
    root = make_vault(tmp_path)
    fact = (
        "We decided to use PostgreSQL for the user service database schema: one table "
        "per aggregate, JSONB for preferences."
    )
    for i in range(150):
        write(root, f"decisions/d{i:03}.md", note(f"Decision {i}", body=fact))
    write(
        root,
        "decisions/split.md",
        note("Split", body="Later we split the user service schema into accounts and profiles."),
    )
    with open_vault(root) as vault:
        vault.sync()
        ctx = vault.context("user service database schema decision", budget=1000)
    paths = [s.path for s in ctx.sources]
    assert "decisions/split.md" in paths
    assert sum(p.startswith("decisions/d") for p in paths) == 1  # the copies went in once
    assert ctx.tokens <= 1000


# -- through the engine, with the real model's tokenizer ------------------------------------

QUERIES = [
    "What did we decide about the database?",
    "Who prefers async communication?",
    "assistant refactor status",
    "PostgreSQL pgvector",
    "what happened on 2024-03-15",
    "kafka",
    "Sarah Chen",
    "[[people/sarah-chen]] | # ^ unicode é 漢字",
    "a",
    "why " * 200,
]
BUDGETS = [1, 5, 20, 60, 150, 400, 1000, 2000, 5000]


@pytest.mark.model
def test_context_within_budget_for_many_queries_and_budgets_with_the_real_model(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    for i in range(30):
        body = "\n\n".join(
            f"## Part {j}\n\nNote {i} talks about topic {j}: the database, the team, "
            f"Sarah Chen's updates and the refactor, paragraph {j} of note {i}." * (1 + j % 3)
            for j in range(5)
        )
        folder = ("projects", "decisions", "people", "logs")[i % 4]
        write(root, f"{folder}/n{i:02}.md", note(f"Note {i}", f"Summary {i}.", body))
    with Vault.open(root) as vault:
        vault.sync()
        tokens = vault.engine.count_tokens
        for query in QUERIES:
            for budget in BUDGETS:
                ctx = vault.context(query, budget=budget)
                assert ctx.tokens == tokens(ctx.text) <= budget, (query, budget)
                if budget >= 150:
                    assert ctx.sources, (query, budget)  # something useful fits


# -- bad input: a clear error or an empty context, never a crash, never over budget ---------


@pytest.fixture
def talk_vault(tmp_path: Path) -> Path:
    root = make_vault(tmp_path)
    for i in range(12):
        body = "\n\n".join(
            f"**Ann**: on day {j} we talked about the database and kafka, note {i}"
            for j in range(20)
        )
        write(root, f"logs/2024-01-{i + 1:02}.md", note(f"Day {i + 1}", body=body))
    return root


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_question_is_a_clear_error(talk_vault: Path, query: str) -> None:
    with open_vault(talk_vault) as vault:
        vault.sync()
        with pytest.raises(ValueError, match="empty"):
            vault.context(query, budget=500)


@pytest.mark.parametrize("budget", [0, -5])
def test_a_budget_below_one_is_a_clear_error(talk_vault: Path, budget: int) -> None:
    with open_vault(talk_vault) as vault:
        vault.sync()
        with pytest.raises(ValueError, match="at least 1 token"):
            vault.context("database", budget=budget)


@pytest.mark.parametrize(
    ("query", "budget"),
    [
        ("database", 1),
        ("database", 2),
        ("the of and is what who", 300),  # only stopwords
        ("?!... ;; — …", 300),  # only punctuation
        ("database " * 5000, 400),  # 5,000 words, one of them
        (" ".join(f"word{i}" for i in range(5000)), 400),  # 5,000 distinct words
    ],
)
def test_odd_questions_and_tiny_budgets_give_a_context_within_budget(
    talk_vault: Path, query: str, budget: int
) -> None:
    with open_vault(talk_vault) as vault:
        vault.sync()
        ctx = vault.context(query, budget=budget)
        assert ctx.tokens == vault.engine.count_tokens(ctx.text) <= budget
        if budget < 5:
            assert ctx.text == "" and ctx.sources == ()


def test_context_packs_the_lines_that_answer_with_their_citation(tmp_path: Path) -> None:
    """With excerpts on, the line that answers comes in cited with its note and line,
    where its whole chunk would not fit the budget; with them off, it does not come in."""
    root = make_vault(tmp_path)
    filler = [f"**Bob**: nothing much happened on walk {j} around the lake" for j in range(12)]
    lines = [*filler[:6], "**Ann**: my sister Carla adopted a grey cat named Pixel", *filler[6:]]
    write(root, "logs/2024-02-03.md", note("Walks", body="\n\n".join(lines)))
    texts = {}
    for excerpts in (True, False):
        with open_vault(root, overrides={"context": {"excerpts": excerpts}}) as vault:
            vault.sync()
            ctx = vault.context("Carla adopted a cat: Pixel?", budget=60)
        assert ctx.tokens <= 60
        texts[excerpts] = ctx.text
    # frontmatter (lines 1-3), heading (4), blank (5), then a turn every other line: L18,
    # cited by the note's header, and inside the line range of its block (the header's
    # or the block's own range line) -- a block may start with the line before it
    assert re.match(r"\[\[logs/2024-02-03\]\] L\d", texts[True])
    blocks = re.split(r"^(?:\[\[logs/2024-02-03\]\] )?(L\d+(?:-\d+)?)$", texts[True], flags=re.M)
    ranges = {where: body for where, body in zip(blocks[1::2], blocks[2::2], strict=True)}
    answer = [where for where, body in ranges.items() if "named Pixel" in body]
    assert len(answer) == 1
    first, _, last = answer[0][1:].partition("-")
    assert int(first) <= 18 <= int(last or first)
    lines_of_block = [n for n in range(int(first), int(last or first) + 1) if n % 2 == 0]
    assert ranges[answer[0]].strip().split("\n\n")[lines_of_block.index(18)].endswith("Pixel")
    assert "Pixel" not in texts[False]  # the whole chunk (~150 tokens) does not fit


# -- no budget spent on nothing ------------------------------------------


EMBED_FILES = """---
title: Embed files
---
# Embed files

You can embed files from your vault into a note with an exclamation mark before a link.

## Embed a PDF

To embed a PDF, write `![[Document.pdf]]` in the note.

Open the PDF at a page with `![[Document.pdf#page=3]]`.

Set the height of the embedded PDF viewer with `![[Document.pdf#height=400]]`.

## Embed an image

Write `![[Engelbart.jpg]]` to embed an image; add `|100` to set its width.
"""

CREDITS = """---
title: Credits
---
# Credits

We would like to thank the following projects, which this application relies on.

### Links

- Electron: MIT License
- CodeMirror: MIT License
- pdf.js: Apache License 2.0
- Mermaid: MIT License
- Prism: MIT License

### Translations

Thanks to the many volunteers who translate the interface.
"""


@pytest.mark.model
def test_a_context_spends_nothing_on_an_empty_index(tmp_path: Path) -> None:
    """A context opened with a bare ``# Memory Index`` (an index with nothing but
    headings and markers) and ended with a bare heading. The notes sit in a folder no
    section lists and keep themselves out of MEMORY.md (``memory-index: false``: else
    the Topics section would name their folder, ``- 2 notes in help/``)."""
    root = tmp_path / "vault"
    write(
        root,
        "MEMORY.md",
        "# Memory Index\n\n## Notes\n<!-- memvault:begin notes -->\n<!-- memvault:end notes -->\n",
    )
    out = "---\nmemory-index: false\n---\n"
    write(root, "help/Embed files.md", out + EMBED_FILES)
    write(root, "help/Credits.md", out + CREDITS)
    with Vault.open(root, create=True) as vault:
        vault.sync()
        ctx = vault.context("how do I embed a PDF", budget=800)
    assert ctx.tokens <= 800
    assert ctx.text.startswith("[[help/Embed files")  # no index part: it has nothing to say
    assert "Memory Index" not in ctx.text and "<!--" not in ctx.text
    assert "MEMORY.md" not in {s.path for s in ctx.sources}
    assert "![[Document.pdf]]" in ctx.text
    assert not re.search(r"^#+ .*\Z", ctx.text.rstrip(), re.M)  # no bare heading at the end


def test_a_piece_far_below_the_best_is_not_filler_even_with_room(tmp_path: Path) -> None:
    """The filler bar (core/excerpts.worth_a_place): a candidate scoring under a third
    of the best (here: the worst on both counts, lexical and vector) stays out,
    however much budget is left."""
    root = tmp_path / "vault"
    write(
        root,
        "logs/2024-02-03.md",
        note(
            "Walks",
            body="**Ann**: my sister Carla adopted a "
            "grey cat named Pixel\n\n**Bob**: Carla loves that cat",
        ),
    )
    write(root, "logs/2024-02-05.md", note("Cats", body="**Bob**: a cat sleeps all day"))
    write(
        root,
        "logs/2024-02-04.md",
        note(
            "Boats",
            body="**Bob**: sailing regatta results "
            "posted at the harbour office\n\n**Ann**: wind was strong all morning",
        ),
    )
    with open_vault(root) as vault:
        vault.sync()
        ctx = vault.context("Carla adopted a cat named Pixel", budget=2000)
    assert "named Pixel" in ctx.text
    # (the index may name it: MEMORY.md fits its share whole)
    assert "[[logs/2024-02-04]] L" not in ctx.text
    assert "logs/2024-02-04.md" not in {s.path for s in ctx.sources}


@pytest.mark.model
def test_an_empty_template_note_does_not_outrank_a_real_one_with_the_real_model(
    tmp_path: Path,
) -> None:
    """a decision added with no body ranked 2nd, above the real PostgreSQL
    decision, and its four placeholder lines took context budget."""
    root = make_vault(tmp_path)
    query = "What did we decide about the database schema?"
    with Vault.open(root) as vault:
        vault.sync()
        for title in ("Use Kafka for events", "Pick a feature flag service", "Adopt gRPC"):
            vault.add("decisions", title)
        vault.sync()  # their vectors too (a write leaves them to the vector lane)
        hits = vault.search(query, k=10, group=True)
        ctx = vault.context(query, budget=1000)
    paths = [h.path for h in hits]
    real = paths.index("decisions/2024-03-12-why-postgresql.md")
    empty = [i for i, p in enumerate(paths) if p.startswith("decisions/") and "postgresql" not in p]
    assert empty and all(i > real for i in empty), paths
    for hint in ("constraints", "in one or two sentences", "easier or harder", "%%"):
        assert hint not in ctx.text, hint
    assert "pgvector" in ctx.text


def test_the_line_of_the_one_asked_about_wins_a_tie(tmp_path: Path) -> None:
    """Two lines alike but for who says them: asked about Bob, Bob's own line comes in
    (a line led by a bold label that names a word of the question is about it); asked
    about Ann, Ann's. Before, the tie went to whichever came first in the note."""
    root = make_vault(tmp_path)
    filler = [
        f"**{'Ann' if i % 2 else 'Bob'}**: the weather on day {i} was grey and windy"
        for i in range(16)
    ]
    lines = [
        *filler[:8],
        "**Ann**: Bob, guess what, I adopted a kitten",
        "**Bob**: Ann, guess what, I adopted a puppy",
        *filler[8:],
    ]
    write(root, "logs/2024-02-03.md", note("Chat", body="\n\n".join(lines)))
    with open_vault(root) as vault:
        vault.sync()
        bob = vault.context("What did Bob adopt?", budget=30)
        ann = vault.context("What did Ann adopt?", budget=30)
    assert "puppy" in bob.text and "kitten" not in bob.text
    assert "kitten" in ann.text and "puppy" not in ann.text


@pytest.mark.parametrize(
    "filters",
    [{"folder": "decisions"}, {"folder": "DECISIONS"}, {"tags": ["database"]}],
)
def test_a_filtered_context_draws_on_no_note_the_filter_leaves_out(
    tmp_path: Path, filters: dict
) -> None:
    """The notes a filtered context's hits link to are drawn on only when the filter
    passes them too: the PostgreSQL decision links Sarah Chen and the refactor, which
    `folder="decisions"` (and its tag) leave out, as search does."""
    root = make_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync()
        question = "Who is Sarah Chen and what did we decide about the database?"
        assert any(s.path == "people/sarah-chen.md" for s in vault.context(question).sources)
        ctx = vault.context(question, budget=2000, **filters)
    cited = {s.path for s in ctx.sources} - {"MEMORY.md"}
    assert cited == {"decisions/2024-03-12-why-postgresql.md"}, ctx.text
    notes = [line for line in ctx.text.splitlines() if line.startswith("[[")]
    assert notes and all(line.startswith("[[decisions/") for line in notes), ctx.text


TICKET_LOG = "logs/2026-03-01.md"
TICKET_LINE = 18  # the log's line naming the ticket


def _ticket_vault(root: Path) -> None:
    """A long day log (its lines are a context's pieces) whose one line names a ticket,
    among lines about something else, and fourteen short notes about payments."""
    lines = [
        f"- 0{h % 10}:1{h % 10} Standup with the platform team on roadmap item {h}: the new"
        " onboarding flow and its copy."
        for h in range(30)
    ]
    lines.insert(15, "- 04:44 Opened PAY-4521 for the ledger rounding bug.")
    write(root, TICKET_LOG, "# 2026-03-01\n\n" + "\n".join(lines) + "\n")
    payment_notes(root)


def _cites(ctx: object, path: str, line: int) -> bool:
    return any(
        s.path == path and s.line_start <= line <= s.line_end
        for s in ctx.sources  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("place", [1, 0])
def test_a_context_of_a_ticket_holds_the_line_naming_it(tmp_path: Path, place: int) -> None:
    """The one line naming the ticket asked about, in a long day log little like the
    question, was outranked by the payment notes' lines (the question's other words, its
    meaning): a 400-token context held none of the log. The lines holding the query's
    rare word come first (engine/rare_lines, ``search.rare_place`` 1); off, they do not."""
    root = tmp_path / "memory"
    _ticket_vault(root)
    with open_vault(root, overrides={"search": {"rare_place": place}}) as vault:
        vault.sync()
        ctx = vault.context("what happened with PAY-4521?", budget=400)
    if place:
        assert "PAY-4521" in ctx.text and _cites(ctx, TICKET_LOG, TICKET_LINE), ctx.text
        assert ctx.sources[0].path == TICKET_LOG
    else:
        assert "PAY-4521" not in ctx.text  # the defect, kept in view


def test_a_context_of_two_identifiers_holds_the_line_naming_each(tmp_path: Path) -> None:
    """Asked "what happened with PAY-4521 and kestrel-db-04?": the ticket's line in one long
    day log, the host's in another, among sixty notes about payments. Neither word
    carries 0.55 of the query's weight, so neither line was kept: a 200-token context
    held neither. Each is a rare word of its own (``search.rare_words`` 2)."""
    root = tmp_path / "memory"
    _ticket_vault(root)
    payment_notes(root, 60)  # each word in one chunk of 50+
    host = host_log(root)
    with open_vault(root) as vault:
        vault.sync()
        ctx = vault.context("what happened with PAY-4521 and kestrel-db-04?", budget=200)
    assert _cites(ctx, TICKET_LOG, TICKET_LINE) and _cites(ctx, host, 13), ctx.text


QUESTION = "what happened with PAY-4521 and kestrel-db-04?"


def test_a_context_of_two_identifiers_holds_each_when_one_is_named_on_many_lines(
    tmp_path: Path,
) -> None:
    """Asked "what happened with PAY-4521 and kestrel-db-04?" where the day log names the
    ticket on six lines and another log the host on one: the lines holding either word
    were kept first in the order of their scores, the ticket's six before the host's,
    and a 100-token context held four of the ticket's lines and not the host's. Each
    word's best line comes first, then each one's second (``core/excerpts.held_in_turn``).
    Asked as "PAY-4521,kestrel-db-04", the two were one word: the host's line left out."""
    root = tmp_path / "memory"
    lines = [
        f"- 0{h % 10}:1{h % 10} Standup with the platform team on roadmap item {h}: the new"
        " onboarding flow and its copy."
        for h in range(30)
    ]
    for j in range(6):
        lines.insert(15 + j, f"- 04:4{j} PAY-4521 ledger rounding bug, attempt {j}: payments off.")
    write(root, TICKET_LOG, "# 2026-03-01\n\n" + "\n".join(lines) + "\n")
    payment_notes(root, 150)  # each word in one chunk of 50+ (``RARE_AMONG``)
    host = host_log(root)
    with open_vault(root) as vault:
        vault.sync()
        asked = [vault.context(q, budget=100) for q in (QUESTION, "PAY-4521,kestrel-db-04")]
    for ctx in asked:  # a list without spaces is two words: the comma parts them
        assert _cites(ctx, host, 13), ctx.text
        assert any(s.path == TICKET_LOG and 17 <= s.line_start <= 22 for s in ctx.sources), ctx.text


def test_a_rare_word_brings_no_line_the_contexts_folder_leaves_out(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _ticket_vault(root)
    with open_vault(root) as vault:
        vault.sync()
        ctx = vault.context("what happened with PAY-4521?", budget=400, folder="notes")
    assert ctx.sources and all(s.path.startswith("notes/") for s in ctx.sources), ctx.text


@pytest.mark.model
@pytest.mark.parametrize("place", [1, 0])
def test_with_the_real_model_a_context_of_a_person_holds_the_line_naming_them(
    tmp_path: Path, place: int
) -> None:
    """The bundled model, a day log that names a vendor's Tom Rautenbach once, and two
    notes about other Toms: a 100-token context of "who is Tom Rautenbach?" held the
    two Toms and another line of the log, not his."""
    from test_search_evidence import LOG, MEMORY_NOTES

    root = tmp_path / "memory"
    for rel, text in MEMORY_NOTES.items():
        write(root, rel, text)
    (root / ".memvault").mkdir()
    with Vault.open(root, overrides={"search": {"rare_place": place}}) as vault:
        vault.sync()
        ctx = vault.context("who is Tom Rautenbach?", budget=100)
    assert ("Rautenbach" in ctx.text) == bool(place), ctx.text
    assert _cites(ctx, LOG, 7) == bool(place), ctx.sources
