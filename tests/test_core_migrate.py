"""core/migrate.py: a giant memory dump becomes planned notes, losing and duplicating nothing."""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.core.migrate import (
    FIELD_ORDER,
    MigrationPlan,
    MigrationStats,
    PlannedNote,
    Source,
    link_line,
    plan_migration,
    render_note,
)

# -- helpers ---------------------------------------------------------------------------------


def source_lines(text: str) -> list[str]:
    """Lines as the planner counts them: \\r\\n, \\n and a lone \\r end a line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def plan_one(text: str, **kw: object) -> MigrationPlan:
    return plan_migration([Source("MEMORY.md", text)], **kw)  # type: ignore[arg-type]


def by_path(plan: MigrationPlan) -> dict[str, PlannedNote]:
    return {note.path: note for note in plan.notes}


def note_at(plan: MigrationPlan, path: str) -> PlannedNote:
    notes = by_path(plan)
    assert path in notes, f"{path} not in {sorted(notes)}"
    return notes[path]


def content_lines(plan: MigrationPlan, note: PlannedNote) -> list[str]:
    """A body's non-blank lines without the link lines standing for extracted decisions."""
    lines = note.body.split("\n")
    notes = by_path(plan)
    for path in note.extracted:
        lines.remove(link_line(path, notes[path].title))
    return [line for line in lines if line.strip()]


def assert_every_line_once(sources: list[Source], plan: MigrationPlan) -> None:
    """Every non-blank source line is in exactly one body, verbatim, where segments say."""
    texts = {s.name: source_lines(s.text) for s in sources}
    seen: Counter[tuple[str, int]] = Counter()
    bodies: Counter[str] = Counter()
    for note in plan.notes:
        expected = []
        for name, first, last in note.segments:
            assert 1 <= first <= last <= len(texts[name])
            for number in range(first, last + 1):
                line = texts[name][number - 1]
                if line.strip():
                    seen[(name, number)] += 1
                    expected.append(line)
        got = content_lines(plan, note)
        assert got == expected, note.path
        bodies.update(got)
    wanted = {
        (n, i + 1) for n, lines in texts.items() for i, line in enumerate(lines) if line.strip()
    }
    assert set(seen) == wanted
    assert max(seen.values(), default=1) == 1
    assert bodies == Counter(line for lines in texts.values() for line in lines if line.strip())


def kinds(plan: MigrationPlan) -> set[str]:
    return {u.kind for u in plan.uncertainties}


# -- dated headings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "## 2024-01-02",
        "## Jan 2, 2024",
        "## January 2, 2024",
        "## January 2nd, 2024",
        "## 2 January 2024",
        "## 2nd Jan 2024",
        "### 2024-01-02 — standup",
        "### 2024-01-02 – standup",
        "### 2024-01-02 - standup",
        "### 2024-01-02: standup",
        "## 2024-01-02T10:30:00Z",
        "## 2024-01-02T10:30:00+02:00",
        "## 2024-01-02 10:30",
        "## [2024-01-02 10:30]",
        "## Tuesday, January 2, 2024",
        "## Tue 2024-01-02",
        "## Tuesday 2 January 2024",
        "###### 2024-01-02",
        "## **2024-01-02**",
        "## 2024/01/02",
        "## 2024-01-02 ##",
        # the date last, after a separator (a field test's agent dump: its 20,000
        # lines of "## Session N — date" went whole to one inbox note)
        "## Session 3 — 2024-01-02",
        "## Session 3 – 2024-01-02",
        "### standup - 2024-01-02",
        "## Standup: Jan 2, 2024",
        "## Standup | 2024-01-02",
        "## Standup (2024-01-02)",
        "## Standup [2024-01-02 10:30]",
    ],
)
def test_dated_heading_becomes_the_days_log(heading: str) -> None:
    plan = plan_one(f"{heading}\n- did a thing\n")
    note = note_at(plan, "logs/2024-01-02.md")
    assert note.kind == "log"
    assert note.date == "2024-01-02"
    assert note.body == f"{heading}\n- did a thing"
    assert note.frontmatter["date"] == "2024-01-02"
    assert note.frontmatter["source"] == "MEMORY.md#L1-L2"


@pytest.mark.parametrize(
    ("heading", "uncertain"),
    [
        ("## 2024-13-01", "invalid-date"),
        ("## 2024-02-30 — standup", "invalid-date"),
        ("## 2024 roadmap", None),
        ("## Q1 2024", None),
        ("## January 2024", None),
        ("## 2024-01", None),
        ("## Standup on 2024-01-02", None),
        ("## Monitoring 2024-01-02 outage", None),
        ("## Release due 2024-01-02", None),
        ("## Session 3 — 2024-02-30", "invalid-date"),
        ("#2024-01-02 is a tag, not a heading", None),
    ],
)
def test_heading_that_is_not_a_day_stays_in_the_inbox(heading: str, uncertain: str | None) -> None:
    plan = plan_one(f"{heading}\ntext\n")
    assert [n.path for n in plan.notes] == ["inbox/memory.md"]
    assert (uncertain in kinds(plan)) if uncertain else "invalid-date" not in kinds(plan)


def test_same_day_entries_merge_in_source_order_each_keeping_its_heading() -> None:
    text = (
        "## 2024-01-02\nfirst\n\n## 2024-01-03\nother day\n\n"
        "### 2024-01-02 — retro\nsecond\n## Jan 2, 2024\nthird\n"
    )
    plan = plan_one(text)
    log = note_at(plan, "logs/2024-01-02.md")
    assert log.body == (
        "## 2024-01-02\nfirst\n\n### 2024-01-02 — retro\nsecond\n## Jan 2, 2024\nthird"
    )
    assert log.segments == (("MEMORY.md", 1, 2), ("MEMORY.md", 7, 10))
    assert log.frontmatter["source"] == ["MEMORY.md#L1-L2", "MEMORY.md#L7-L10"]
    assert note_at(plan, "logs/2024-01-03.md").body == "## 2024-01-03\nother day"


def test_subheadings_of_a_day_stay_in_its_log_but_another_date_starts_its_own() -> None:
    text = "## 2024-01-02\n### standup\nx\n### 2024-01-05 late entry\ny\n### notes\nz\n"
    plan = plan_one(text)
    assert (
        note_at(plan, "logs/2024-01-02.md").body == "## 2024-01-02\n### standup\nx\n\n### notes\nz"
    )
    assert note_at(plan, "logs/2024-01-05.md").body == "### 2024-01-05 late entry\ny"


def test_month_container_is_inbox_and_its_days_are_logs() -> None:
    plan = plan_one("# Journal\n## January 2024\n### 2024-01-02\na\n### 2024-01-03\nb\n")
    assert sorted(by_path(plan)) == ["inbox/memory.md", "logs/2024-01-02.md", "logs/2024-01-03.md"]
    assert note_at(plan, "inbox/memory.md").body == "# Journal\n## January 2024"


# -- decisions -------------------------------------------------------------------------------


def test_decision_entry_in_a_log_moves_to_its_note_and_leaves_a_link() -> None:
    text = (
        "## 2024-01-02\n"
        "- 09:00 standup\n"
        "- 10:00 decided to use Postgres for the user service schema\n"
        "  - JSONB for settings\n"
        "- 11:00 lunch\n"
    )
    plan = plan_one(text)
    path = "decisions/2024-01-02-use-postgres-for-the-user-service-schema.md"
    decision = note_at(plan, path)
    assert decision.title == "Use Postgres for the user service schema"
    assert decision.frontmatter["date"] == "2024-01-02"
    assert decision.frontmatter["status"] == "accepted"
    assert decision.frontmatter["type"] == "decision"
    assert decision.body == (
        "- 10:00 decided to use Postgres for the user service schema\n  - JSONB for settings"
    )
    assert decision.segments == (("MEMORY.md", 3, 4),)
    log = note_at(plan, "logs/2024-01-02.md")
    assert log.extracted == (path,)
    assert log.body == (
        "## 2024-01-02\n- 09:00 standup\n"
        f"- Decision: [[{path[:-3]}|Use Postgres for the user service schema]]\n"
        "- 11:00 lunch"
    )
    assert plan.stats.decisions_from_entries == 1
    assert_every_line_once([Source("MEMORY.md", text)], plan)


@pytest.mark.parametrize(
    ("entry", "title"),
    [
        ("- decided to use Postgres", "Use Postgres"),
        ("- We decided to use Postgres.", "Use Postgres"),
        ("- Decision: use Postgres", "Use Postgres"),
        ("- **Decision**: use Postgres", "Use Postgres"),
        ("- we chose Postgres over MySQL", "We chose Postgres over MySQL"),
        ("- [x] 10:30 decided: Postgres", "Postgres"),
        ("1. ADR-12 use Postgres", "ADR-12 use Postgres"),
        ("We decided to use Postgres. It has JSONB.", "Use Postgres"),
        (
            "Long talk about databases,\nin the end we decided on Postgres",
            "Long talk about databases, in the end we decided on Postgres",
        ),
    ],
)
def test_entries_that_read_as_decisions_are_extracted(entry: str, title: str) -> None:
    text = f"## 2024-01-02\n{entry}\n"
    plan = plan_one(text)
    decisions = [n for n in plan.notes if n.kind == "decision"]
    assert [d.title for d in decisions] == [title]
    assert decisions[0].path.startswith("decisions/2024-01-02-")
    assert decisions[0].body == entry
    assert_every_line_once([Source("MEMORY.md", text)], plan)


@pytest.mark.parametrize(
    "entry",
    [
        "- we have not decided yet",
        "- haven't decided on the database",
        "- to be decided: database",
        "- what was decided about the schema?",
        "- undecided about the schema",
        "- standup\n  - Bob decided to take the ticket",
        "- the ADRs folder is messy",
        "- adr is lowercase here",
    ],
)
def test_entries_that_do_not_read_as_decisions_stay_in_the_log(entry: str) -> None:
    plan = plan_one(f"## 2024-01-02\n{entry}\n")
    assert [n.kind for n in plan.notes] == ["log"]


@pytest.mark.parametrize("after", ["afterwards", "- 11:00 lunch", "### evening"])
def test_paragraph_ending_with_colon_takes_its_list_into_the_decision(after: str) -> None:
    text = f"## 2024-01-02\nintro\n\nWe decided on these:\n- Postgres\n- Redis\n\n{after}\n"
    plan = plan_one(text)
    (decision,) = [n for n in plan.notes if n.kind == "decision"]
    assert decision.body == "We decided on these:\n- Postgres\n- Redis"
    log = note_at(plan, "logs/2024-01-02.md")
    assert log.body.split("\n")[-1] == after
    assert_every_line_once([Source("MEMORY.md", text)], plan)


@pytest.mark.parametrize(
    ("text", "path", "date"),
    [
        (
            "## Decision: Use Redis for caching\nbecause\n",
            "decisions/use-redis-for-caching.md",
            None,
        ),
        ("## ADR-12: Monorepo\nwhy\n", "decisions/adr-12-monorepo.md", None),
        (
            "## 2024-03-12 — Decided to use Postgres for user service\n",
            "decisions/2024-03-12-use-postgres-for-user-service.md",
            "2024-03-12",
        ),
        (
            "## 2024-03-12\n### Decision: Use Postgres\nwhy\n",
            "decisions/2024-03-12-use-postgres.md",
            "2024-03-12",
        ),
        ("## Decisions\n### Use Postgres\nwhy\n", "decisions/use-postgres.md", None),
        (
            "## Decisions\n### 2024-03-12 Use Postgres\n",
            "decisions/2024-03-12-use-postgres.md",
            "2024-03-12",
        ),
        ("## Key decisions\n### Monorepo\n#### Context\nlong\n", "decisions/monorepo.md", None),
    ],
)
def test_decision_headings_become_decision_notes(text: str, path: str, date: str | None) -> None:
    plan = plan_one(text)
    note = note_at(plan, path)
    assert note.kind == "decision"
    assert note.date == date
    assert note.frontmatter["status"] == "accepted"
    assert ("date" in note.frontmatter) == (date is not None)
    assert ("decision-undated" in kinds(plan)) == (date is None)
    assert_every_line_once([Source("MEMORY.md", text)], plan)


def test_decision_heading_inside_a_day_keeps_its_subsections_and_leaves_a_link() -> None:
    text = (
        "## 2024-03-12\nmorning\n### Decision: Use Postgres\n#### Options\nmysql\n"
        "### evening\nbye\n"
    )
    plan = plan_one(text)
    decision = note_at(plan, "decisions/2024-03-12-use-postgres.md")
    assert decision.body == "### Decision: Use Postgres\n#### Options\nmysql"
    log = note_at(plan, "logs/2024-03-12.md")
    assert log.body == (
        "## 2024-03-12\nmorning\n"
        "- Decision: [[decisions/2024-03-12-use-postgres|Use Postgres]]\n"
        "### evening\nbye"
    )


def test_undated_decision_entries_stay_in_the_inbox_and_are_reported() -> None:
    plan = plan_one("just notes\n\n- we decided to use tabs\n")
    assert [n.path for n in plan.notes] == ["inbox/memory.md"]
    assert "undated-decision" in kinds(plan)


# -- people and projects ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "title"),
    [
        ("## People\n### Sarah Chen\n- backend lead\n", "people/sarah-chen.md", "Sarah Chen"),
        ("## Team\n### Sarah\n- backend lead\n", "people/sarah.md", "Sarah"),
        ("## People / Sarah Chen\n- lead\n", "people/sarah-chen.md", "Sarah Chen"),
        ("## Person: Sarah Chen\n- lead\n", "people/sarah-chen.md", "Sarah Chen"),
        ("## Sarah Chen (backend lead)\n- lead\n", "people/sarah-chen.md", "Sarah Chen"),
        ("## Sarah Chen — backend lead\n- lead\n", "people/sarah-chen.md", "Sarah Chen"),
        ("## José Núñez\n- ops\n", "people/josé-núñez.md", "José Núñez"),
        (
            "## Ludwig van Beethoven\n- composer\n",
            "people/ludwig-van-beethoven.md",
            "Ludwig van Beethoven",
        ),
        ("## Sean O'Brien\n- sales\n", "people/sean-obrien.md", "Sean O'Brien"),
        ("## [[Sarah Chen]]\n- lead\n", "people/sarah-chen.md", "Sarah Chen"),
    ],
)
def test_person_headings_become_people_notes(text: str, path: str, title: str) -> None:
    plan = plan_one(text)
    note = note_at(plan, path)
    assert (note.kind, note.title) == ("person", title)
    assert "date" not in note.frontmatter


@pytest.mark.parametrize(
    "heading",
    [
        "## Action Items",
        "## Open Questions",
        "## Meeting Notes",
        "## Project Ideas",
        "## Next Steps",
        "## Database Migration",
        "## API Design",
        "## Sarah",
        "## Sarah Jane Anne Chen",
        "# Acme Corp",
        "## sarah chen",
        "## Talked To Sarah",
    ],
)
def test_headings_that_are_not_names_do_not_become_people(heading: str) -> None:
    plan = plan_one(f"{heading}\ntext\n")
    assert [n.kind for n in plan.notes] == ["inbox"]


def test_the_same_person_across_the_dump_is_one_note_in_source_order() -> None:
    text = "## People\n### Sarah Chen\n- one\n## 2024-01-02\nx\n## People / Sarah Chen\n- two\n"
    plan = plan_one(text)
    assert note_at(plan, "people/sarah-chen.md").body == (
        "### Sarah Chen\n- one\n\n## People / Sarah Chen\n- two"
    )


def test_container_heading_line_goes_to_the_inbox_and_children_are_classified() -> None:
    text = (
        "## People\nfolks I work with\n### Sarah Chen\n- a\n### Misc\n- b\n"
        "## Projects\n### Billing v2\n- c\n"
    )
    plan = plan_one(text)
    assert sorted(by_path(plan)) == [
        "inbox/memory.md",
        "people/sarah-chen.md",
        "projects/billing-v2.md",
    ]
    assert note_at(plan, "inbox/memory.md").body == (
        "## People\nfolks I work with\n\n### Misc\n- b\n## Projects"
    )


def test_person_section_keeps_its_dated_history_but_not_its_decisions() -> None:
    text = "## Sarah Chen\n### 2024-03-01 1:1\ntalked\n#### Decided: Sarah owns billing\nok\n"
    plan = plan_one(text)
    person = note_at(plan, "people/sarah-chen.md")
    assert person.body.startswith("## Sarah Chen\n### 2024-03-01 1:1\ntalked\n- Decision: [[")
    decision = note_at(plan, "decisions/2024-03-01-sarah-owns-billing.md")
    assert decision.date == "2024-03-01"


def test_person_heading_inside_a_day_stays_in_the_log_and_is_reported() -> None:
    plan = plan_one("## 2024-01-02\n### Sarah Chen\n1:1 notes\n")
    assert [n.path for n in plan.notes] == ["logs/2024-01-02.md"]
    assert "kept-in-log" in kinds(plan)


def test_names_mentioned_in_text_are_reported_but_get_no_note() -> None:
    text = "## 2024-01-02\n" + "- met Priya Raman about billing\n" * 4
    plan = plan_one(text)
    assert not any(n.kind == "person" for n in plan.notes)
    mentions = [u for u in plan.uncertainties if u.kind == "name-mentions"]
    assert [u.message.split("'")[1] for u in mentions] == ["Priya Raman"]
    assert mentions[0].line == 2


@pytest.mark.parametrize(
    ("heading", "path", "title", "status"),
    [
        ("## Project: Billing v2", "projects/billing-v2.md", "Billing v2", "active"),
        ("## Projects / Billing v2", "projects/billing-v2.md", "Billing v2", "active"),
        ("## Billing v2 (project)", "projects/billing-v2.md", "Billing v2", "active"),
        ("## Project - Atlas (paused)", "projects/atlas.md", "Atlas", "paused"),
        ("## Project: Atlas (Done)", "projects/atlas.md", "Atlas", "done"),
    ],
)
def test_project_headings_become_project_notes(
    heading: str, path: str, title: str, status: str
) -> None:
    plan = plan_one(f"{heading}\n- status: green\n### Notes\nmore\n")
    note = note_at(plan, path)
    assert (note.kind, note.title) == ("project", title)
    assert note.frontmatter["status"] == status  # Active Projects lists the active ones
    assert note.body == f"{heading}\n- status: green\n### Notes\nmore"


@pytest.mark.parametrize(
    ("line", "status"),
    [
        ("- Status: paused.", "paused"),
        ("- Status: done.", "done"),
        ("**Status:** on hold since March", "paused"),
        ("Status - Completed", "done"),
        ("- status: shipped 2024-05-01", "done"),
        ("- Status: in progress", "active"),
        ("- Status: green", "active"),
    ],
)
def test_a_status_line_of_the_project_sets_its_status(line: str, status: str) -> None:
    # "- Status: paused." / "- Status: done." ended up status: active,
    # and Active Projects listed a paused and a done project
    plan = plan_one(f"## Project: Atlas\n- Owner: Ana\n{line}\n### Notes\n- Status: done.\n")
    assert note_at(plan, "projects/atlas.md").frontmatter["status"] == status


def test_a_status_line_under_a_subheading_is_not_the_projects() -> None:
    plan = plan_one("## Project: Atlas\n- goal: ship\n### Task A\n- Status: done.\n")
    assert note_at(plan, "projects/atlas.md").frontmatter["status"] == "active"


# -- structure, fences, timestamps -----------------------------------------------------------


def test_headings_inside_code_fences_are_not_headings() -> None:
    text = (
        "## 2024-01-02\n```markdown\n## 2024-01-01\n## Sarah Chen\n```\n"
        "~~~~\n# Project: Fake\n~~~\n~~~~\nafter\n"
    )
    plan = plan_one(text)
    assert [n.path for n in plan.notes] == ["logs/2024-01-02.md"]
    assert plan.stats.headings == 1


def test_unclosed_fence_runs_to_the_end_and_is_reported() -> None:
    plan = plan_one("## 2024-01-02\n```\n## 2024-01-03\n")
    assert [n.path for n in plan.notes] == ["logs/2024-01-02.md"]
    assert "unclosed-fence" in kinds(plan)


def test_dump_without_headings_is_split_by_paragraph_timestamps_and_says_so() -> None:
    text = (
        "notes from before\n\n"
        "2024-01-02: shipped v1\nmore about it\n\n"
        "[2024-01-03 10:30] call with vendor\n"
        "- 2024-01-02T18:00Z back to the second\n"
        "2024-01-04 10:15 we decided to rename the service\n"
    )
    plan = plan_one(text)
    assert sorted(by_path(plan)) == [
        "decisions/2024-01-04-rename-the-service.md",
        "inbox/memory.md",
        "logs/2024-01-02.md",
        "logs/2024-01-03.md",
        "logs/2024-01-04.md",
    ]
    assert note_at(plan, "logs/2024-01-02.md").body == (
        "2024-01-02: shipped v1\nmore about it\n\n- 2024-01-02T18:00Z back to the second"
    )
    (msg,) = [u for u in plan.uncertainties if u.kind == "no-headings"]
    assert "4 paragraph timestamps" in msg.message
    assert_every_line_once([Source("MEMORY.md", text)], plan)


def test_dump_without_headings_or_timestamps_is_one_inbox_note_and_says_so() -> None:
    plan = plan_one("just\nsome\n\nnotes\n")
    (note,) = plan.notes
    assert (note.path, note.body) == ("inbox/memory.md", "just\nsome\n\nnotes")
    (msg,) = [u for u in plan.uncertainties if u.kind == "no-structure"]
    assert (msg.path, msg.line) == ("inbox/memory.md", 0)


def test_timestamps_split_inbox_text_under_a_generic_heading_too() -> None:
    plan = plan_one("# Memory\n2024-01-02: a\n2024-01-03: b\n## Misc\nc\n")
    assert note_at(plan, "inbox/memory.md").body == "# Memory\n\n## Misc\nc"
    assert note_at(plan, "logs/2024-01-03.md").body == "2024-01-03: b"


def test_preamble_goes_to_the_inbox_or_to_the_log_of_a_dated_source() -> None:
    plan = plan_migration(
        [
            Source("MEMORY.md", "about me\n## 2024-01-02\nfrom the dump\n"),
            Source(
                "memory/2024-01-02.md",
                "from the daily file\n## Standup\n- we decided to ship\n",
                "2024-01-02",
            ),
        ]
    )
    assert note_at(plan, "inbox/memory.md").body == "about me"
    log = note_at(plan, "logs/2024-01-02.md")
    assert log.body == (
        "## 2024-01-02\nfrom the dump\n\nfrom the daily file\n## Standup\n"
        "- Decision: [[decisions/2024-01-02-ship|Ship]]"
    )
    assert log.segments == (("MEMORY.md", 2, 3), ("memory/2024-01-02.md", 1, 2))


def test_mixed_line_endings_are_line_ends_and_never_reach_bodies() -> None:
    text = "## 2024-01-02\r\n- a\n- b\r\n\r\n- c\rend"
    plan = plan_one(text)
    (note,) = plan.notes
    assert note.body == "## 2024-01-02\n- a\n- b\n\n- c\nend"
    assert note.segments == (("MEMORY.md", 1, 6),)


def test_stats_and_the_inbox_report_count_what_happened() -> None:
    text = "# Memory\nloose\n\n## 2024-01-02\n- decided to ship\n- lunch\n\n## Sarah Chen\nx\n"
    plan = plan_one(text)
    assert plan.stats == MigrationStats(
        sources=1,
        lines=9,
        non_blank_lines=7,
        headings=3,
        notes=4,
        notes_by_kind={"log": 1, "decision": 1, "person": 1, "project": 0, "inbox": 1},
        decisions_from_entries=1,
        inbox_lines=2,
    )
    assert [(u.kind, u.line, u.path) for u in plan.uncertainties] == [
        ("inbox", 1, "inbox/memory.md"),
        ("person-heuristic", 8, "people/sarah-chen.md"),
    ]


def test_empty_source_plans_nothing_and_says_so() -> None:
    plan = plan_one("")
    assert plan.notes == ()
    assert kinds(plan) == {"empty-source"}


# -- paths, frontmatter, rendering -----------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "path"),
    [
        ("## People / José Núñez", "people/josé-núñez.md"),
        ("## Project: Billing v2.0 — (beta)!", "projects/billing-v2-0-beta.md"),
        ("## Project: " + "Word " * 30, "projects/" + "-".join(["word"] * 12) + ".md"),
        ("## Project: 💸 Payments", "projects/payments.md"),
        ("## Project: !!!", "projects/untitled.md"),
        ("## Project: CON", "projects/con-note.md"),
    ],
)
def test_slugs_are_lowercase_readable_and_short(heading: str, path: str) -> None:
    plan = plan_one(f"{heading}\nx\n")
    (note,) = [n for n in plan.notes if n.kind != "inbox"]
    assert note.path == path
    slug = path.rsplit("/", 1)[1][:-3]
    assert len(slug) <= 60
    assert not slug.endswith("-")


def test_paths_taken_in_the_vault_get_a_number_and_are_reported() -> None:
    plan = plan_one(
        "## People / Sarah Chen\nx\n", existing_paths=frozenset({"People/Sarah-Chen.md"})
    )
    assert [n.path for n in plan.notes] == ["people/sarah-chen-2.md"]
    assert "renamed" in kinds(plan)


def test_different_notes_with_one_slug_get_numbered_in_order_of_appearance() -> None:
    long = "Billing " * 10
    text = f"## Project: {long}alpha\nx\n## Project: {long}beta\ny\n"
    plan = plan_one(text)
    first, second = sorted(plan.notes, key=lambda n: n.segments)
    assert first.path == "projects/" + "-".join(["billing"] * 7) + ".md"
    assert second.path == first.path[:-3] + "-2.md"
    assert second.body.endswith("y")


def test_frontmatter_has_the_promised_fields() -> None:
    plan = plan_one("## 2024-01-02\n- 09:00 Shipped the invoice export. It works.\n")
    note = note_at(plan, "logs/2024-01-02.md")
    assert note.frontmatter == {
        "title": "2024-01-02",
        "type": "log",
        "date": "2024-01-02",
        "summary": "Shipped the invoice export.",
        "tags": ["migrated"],
        "source": "MEMORY.md#L1-L2",
    }
    assert note.content_hash == hashlib.sha256(note.body.encode()).hexdigest()


def test_summary_is_one_sentence_of_at_most_160_characters() -> None:
    plan = plan_one("## Project: Atlas\n" + "word " * 100 + "\n")
    summary = note_at(plan, "projects/atlas.md").frontmatter["summary"]
    assert isinstance(summary, str)
    assert len(summary) <= 160
    assert summary.endswith("…")


def test_render_note_writes_frontmatter_body_and_a_back_link() -> None:
    plan = plan_one("## 2024-01-02\nfirst\n## Decision: yes: no # maybe\nx\n## 2024-01-02\nlast\n")
    text = render_note(note_at(plan, "logs/2024-01-02.md"), "archive/MEMORY-2024-05-01")
    assert text == (
        "---\n"
        "title: '2024-01-02'\n"
        "type: log\n"
        "date: 2024-01-02\n"
        "summary: first\n"
        "tags: [migrated]\n"
        "source: [MEMORY.md#L1-L2, MEMORY.md#L5-L6]\n"
        "archive: '[[archive/MEMORY-2024-05-01|MEMORY.md]]'\n"
        "---\n\n"
        "## 2024-01-02\nfirst\n\n## 2024-01-02\nlast\n"
    )
    # provenance once, in the frontmatter: the body (what search and context read) holds
    # no "*Migrated from ...*" line, which cost every block of a context ~15 tokens
    assert "Migrated from" not in text
    old = render_note(note_at(plan, "logs/2024-01-02.md"), "archive/MEMORY-2024-05-01", footer=True)
    assert old.endswith(
        "last\n\n---\n*Migrated from [[archive/MEMORY-2024-05-01|MEMORY.md]] lines 1–2, 5–6.*\n"
    )
    decision = render_note(
        note_at(plan, "decisions/yes-no-maybe.md"), "archive/MEMORY-2024-05-01.md"
    )
    front = yaml.safe_load(decision.split("---\n")[1])
    assert front["title"] == "Yes: no # maybe"
    assert front["status"] == "accepted"
    assert front["source"] == "MEMORY.md#L3-L4"
    assert front["archive"] == "[[archive/MEMORY-2024-05-01|MEMORY.md]]"


def test_render_note_links_each_source_to_its_own_archive() -> None:
    sources = [
        Source("MEMORY.md", "## 2024-01-02\na\n"),
        Source("memory/2024-01-02.md", "b\n", "2024-01-02"),
    ]
    (note,) = plan_migration(sources).notes
    text = render_note(
        note, {"MEMORY.md": "archive/MEMORY-x", "memory/2024-01-02.md": "archive/day-x"}
    )
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["archive"] == [
        "[[archive/MEMORY-x|MEMORY.md]]",
        "[[archive/day-x|memory/2024-01-02.md]]",
    ]
    assert front["source"] == ["MEMORY.md#L1-L2", "memory/2024-01-02.md#L1"]
    with pytest.raises(ValueError, match="archive link"):
        render_note(note, {"MEMORY.md": "archive/MEMORY-x"})


@pytest.mark.parametrize(
    "sources",
    [
        [Source("a.md", "x"), Source("a.md", "y")],
        [Source("", "x")],
        [Source("d.md", "x", "2024-1-2")],
        [Source("d.md", "x", "yesterday")],
    ],
)
def test_bad_sources_are_refused(sources: list[Source]) -> None:
    with pytest.raises(ValueError):
        plan_migration(sources)


# -- generated dumps -------------------------------------------------------------------------

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WORDS = ("the", "a", "queue", "cache", "deploy", "index", "retry", "budget", "schema", "token")
PEOPLE = {
    "Sarah Chen": "sarah-chen",
    "Tom Baker": "tom-baker",
    "José Núñez": "josé-núñez",
    "Amara Okafor": "amara-okafor",
    "Li Wei": "li-wei",
}
PROJECTS = {"Billing v2": "billing-v2", "Atlas": "atlas", "Search revamp": "search-revamp"}
TECH = ["Postgres", "Redis", "Kafka", "SQLite", "gRPC", "Rust"]


def fmt_heading(rng: random.Random, day: dt.date) -> str:
    iso, month = day.isoformat(), MONTHS[day.month - 1]
    return rng.choice(
        [
            f"## {iso}",
            f"## {month[:3]} {day.day}, {day.year}",
            f"## {month} {day.day}, {day.year}",
            f"## {day.day} {month} {day.year}",
            f"## {iso} — standup",
            f"## {iso} – retro",
            f"## {iso} - planning",
            f"## {iso}T10:30:00Z",
            f"## {iso} 10:30",
        ]
    )


@dataclass
class Dump:
    lines: list[str] = field(default_factory=list)
    days: dict[str, list[str]] = field(default_factory=dict)  # date -> its heading lines
    decisions: list[tuple[str, str]] = field(default_factory=list)  # (date, entry line)
    people: set[str] = field(default_factory=set)
    projects: set[str] = field(default_factory=set)
    n: int = 0

    def text(self, rng: random.Random) -> str:
        return "".join(line + rng.choice(["\n", "\n", "\r\n"]) for line in self.lines)


def noise(rng: random.Random, width: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, width)))


def generate(rng: random.Random, min_lines: int, width: int = 8) -> Dump:
    """A dump mixing every kind of section, in the shapes people write them."""
    dump = Dump(lines=["# Memory", "notes kept by the agent", ""])
    start = dt.date(2023, 1, 1)
    while len(dump.lines) < min_lines:
        kind = rng.choice(
            ["day", "day", "day", "decision", "people", "person", "project", "noise", "fence"]
        )
        out = dump.lines
        if kind in ("day", "fence"):
            day = (start + dt.timedelta(days=rng.randrange(400))).isoformat()
            heading = fmt_heading(rng, dt.date.fromisoformat(day))
            dump.days.setdefault(day, []).append(heading)
            out += [heading, ""]
            for _ in range(rng.randint(1, 4)):
                out.append(f"- {rng.randint(8, 18):02d}:00 {noise(rng, width)}")
            if rng.random() < 0.3:
                dump.n += 1
                entry = f"- 10:00 decided to use {rng.choice(TECH)} for {noise(rng)} {dump.n}"
                out += [entry, f"  - because {noise(rng)}"]
                dump.decisions.append((day, entry))
            if kind == "fence":
                out += ["```markdown", "## 1999-01-01", "## Sarah Chen", "# Project: Fake", "```"]
            out += [noise(rng, width), ""]
        elif kind == "decision":
            dump.n += 1
            out += [f"## Decision: adopt {rng.choice(TECH)} {dump.n}", noise(rng, width), ""]
        elif kind == "people":
            out += ["## People", ""]
            for name in rng.sample(sorted(PEOPLE), rng.randint(1, 3)):
                dump.people.add(name)
                out += [f"### {name}", f"- {noise(rng, width)}", ""]
        elif kind == "person":
            name = rng.choice(sorted(PEOPLE))
            dump.people.add(name)
            out += [rng.choice([f"## People / {name}", f"## {name} (teammate)"]), noise(rng, width)]
        elif kind == "project":
            name = rng.choice(sorted(PROJECTS))
            dump.projects.add(name)
            out += [
                rng.choice([f"## Project: {name}", f"## Projects / {name}", f"## {name} (project)"])
            ]
            out += [f"- {noise(rng, width)}", "", noise(rng, width)]
        else:
            out += ["## Misc thoughts", noise(rng, width), "", noise(rng, width), ""]
    return dump


def check_generated(dump: Dump, text: str, plan: MigrationPlan) -> None:
    assert_every_line_once([Source("MEMORY.md", text)], plan)
    notes = by_path(plan)
    assert {p for p in notes if p.startswith("logs/")} == {f"logs/{d}.md" for d in dump.days}
    for day, headings in dump.days.items():
        body = notes[f"logs/{day}.md"].body.split("\n")
        assert [line for line in body if line in headings] == headings  # merged in source order
    for day, entry in dump.decisions:
        (decision,) = [n for n in plan.notes if n.kind == "decision" and n.body.startswith(entry)]
        assert decision.path.startswith(f"decisions/{day}-")
        assert (decision.frontmatter["date"], decision.frontmatter["status"]) == (day, "accepted")
        assert decision.path in notes[f"logs/{day}.md"].extracted
    people = {n.path for n in plan.notes if n.kind == "person"}
    assert people == {f"people/{PEOPLE[name]}.md" for name in dump.people}
    projects = {n.path for n in plan.notes if n.kind == "project"}
    assert projects == {f"projects/{PROJECTS[name]}.md" for name in dump.projects}
    assert "logs/1999-01-01.md" not in notes
    assert not any("fake" in p for p in notes)


@pytest.mark.parametrize("seed", range(8))
def test_generated_dumps_split_without_loss_or_duplication(seed: int) -> None:
    rng = random.Random(seed)
    dump = generate(rng, 400)
    text = dump.text(rng)
    plan = plan_one(text)
    check_generated(dump, text, plan)
    assert plan == plan_one(text)  # deterministic


def test_a_50000_line_dump_plans_correctly() -> None:
    rng = random.Random(50_000)
    dump = generate(rng, 50_000, width=70)
    text = dump.text(rng)
    assert len(source_lines(text)) >= 50_000
    assert len(text.encode()) > 4_000_000
    plan = plan_one(text)
    check_generated(dump, text, plan)
    assert plan.stats.lines == len(source_lines(text))
    assert plan.stats.notes == len(plan.notes)


def test_replanning_is_identical_down_to_the_rendered_bytes() -> None:
    rng = random.Random(7)
    text = generate(rng, 300).text(rng)
    first, second = plan_one(text), plan_one(text)
    assert first == second
    assert [render_note(n, "archive/M") for n in first.notes] == [
        render_note(n, "archive/M") for n in second.notes
    ]


# -- properties ------------------------------------------------------------------------------

_text = st.text(alphabet=st.sampled_from("abcXYZ 019:-—#`~*[]()/.!?é"), min_size=0, max_size=20)
_date = st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2020, 12, 31)).map(
    lambda d: d.isoformat()
)
_line = st.one_of(
    _text,
    st.builds(lambda h, t: f"{'#' * h} {t}", st.integers(1, 6), _text),
    st.builds(lambda h, d, t: f"{'#' * h} {d} — {t}", st.integers(1, 6), _date, _text),
    st.builds(lambda d, t: f"{d}: {t}", _date, _text),
    st.builds(lambda t: f"- decided {t}", _text),
    st.builds(lambda t: f"  - {t}", _text),
    st.sampled_from(
        [
            "",
            "   ",
            "```",
            "~~~",
            "## People",
            "## Decisions",
            "## Projects",
            "### Sarah Chen",
            "## People / Tom Baker",
            "## Project: Atlas",
            "## Decision: use it",
            "We decided:",
            "- a",
            "1. b",
            "> quote",
            "\t",
            "## Jan 2, 2020",
            "- [2020-01-02 10:30] note",
        ]
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_line, min_size=1, max_size=8), max_size=10),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=5),
    st.one_of(st.none(), _date),
)
def test_property_every_line_lands_in_exactly_one_note(
    blocks: list[list[str]], endings: list[str], hint: str | None
) -> None:
    lines = [line for block in blocks for line in block]
    text = "".join(line + endings[i % len(endings)] for i, line in enumerate(lines))
    sources = [Source("MEMORY.md", text), Source("memory/x.md", text[::-1], hint)]
    plan = plan_migration(sources)
    assert_every_line_once(sources, plan)
    assert plan == plan_migration(sources)
    assert len({n.path.casefold() for n in plan.notes}) == len(plan.notes)
    for note in plan.notes:
        assert note.body == note.body.strip("\n") and "\r" not in note.body
        render_note(note, "archive/MEMORY-2020-01-01")


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=300))
def test_property_any_text_at_all_keeps_every_line(text: str) -> None:
    sources = [Source("MEMORY.md", text)]
    assert_every_line_once(sources, plan_migration(sources))


_any_line = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"))


@settings(max_examples=300, deadline=None)
@given(_any_line, _any_line, st.lists(_any_line, max_size=4), st.one_of(st.none(), _date))
def test_property_rendered_frontmatter_reads_back_as_written(
    title: str, summary: str, sources: list[str], day: str | None
) -> None:
    fm: dict[str, object] = {"title": title, "type": "person", "summary": summary}
    fm |= {"date": day} if day else {}
    fm |= {"tags": ["migrated"], "source": sources}
    note = PlannedNote("people/x.md", "person", title, day, fm, "body", (("M.md", 1, 2),), (), "")
    text = render_note(note, "archive/M")
    head, _, rest = text.removeprefix("---\n").partition("\n---\n")
    assert rest == "\nbody\n"
    loaded = yaml.safe_load(head)
    assert loaded.pop("archive") == "[[archive/M|M.md]]"  # last: the provenance property
    assert list(loaded) == [k for k in FIELD_ORDER if k in fm]
    if day:
        assert loaded.pop("date") == dt.date.fromisoformat(day)
        fm.pop("date")
    assert loaded == fm


# -- the user's own facts and preferences ---------------------------------


def test_about_me_and_preferences_go_to_the_users_person_note() -> None:
    text = (
        "# Memory\n## About me\n- I prefer short answers\n### Work\n- data team\n"
        "## 2024-01-02\n- shipped\n## Preferences\n- Never email Lena on Fridays\n"
        "## 2024-03-05\n- more\n"
    )
    plan = plan_one(text)
    me = note_at(plan, "people/me.md")
    assert (me.kind, me.title) == ("person", "Me")
    assert me.body.split("\n") == [
        "## About me",
        "- I prefer short answers",
        "### Work",
        "- data team",
        "",
        "## Preferences",
        "- Never email Lena on Fridays",
    ]
    assert me.frontmatter["updated"] == "2024-03-05"  # Key People lists it first
    assert not any("prefer" in n.body for n in plan.notes if n.kind == "inbox")
    assert [u.kind for u in plan.uncertainties if u.path == "people/me.md"] == [
        "user-note",
        "user-note",
    ]


def test_preferences_inside_a_persons_section_stay_in_it() -> None:
    plan = plan_one("## People\n### Sarah Chen\n#### Preferences\n- async\n")
    assert "#### Preferences" in note_at(plan, "people/sarah-chen.md").body
    assert "people/me.md" not in by_path(plan)


def test_a_capitalised_verb_starting_lines_is_not_a_name() -> None:
    # "Prefers Slack" was reported as a name "mentioned 4 times"
    text = "## 2024-01-02\n" + "- Prefers Slack over email\n" * 4
    text += "## 2024-01-03\n" + "- Pings Infra when down\n" * 3 + "- Lena pings infra\n"
    plan = plan_one(text)
    assert [u.message for u in plan.uncertainties if u.kind == "name-mentions"] == []
