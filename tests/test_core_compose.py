"""core/compose.py: frontmatter fields an agent sets are checked, quoted and read back."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core import compose
from memvault.core.compose import (
    FALLBACK_TEMPLATES,
    InvalidField,
    check_fields,
    field_line,
    fill,
    set_fields,
    yaml_value,
)
from memvault.core.notes import load_yaml, parse_note

ROOT = Path(__file__).resolve().parents[1]

NOTE = (
    "---\ntitle: Sarah Chen\nrole: CTO\ntags:\n  - people\n  - leadership\n---\n"
    "# Sarah Chen\n\nLeads the data team.\n"
)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"role\n": "x"}, "not a valid field name"),  # issue 11.6, over HTTP and MCP
        ({"status\n": "x"}, "not a valid field name"),  # CLI --field $'status\\n=x'
        ({"\nstatus": "x"}, "not a valid field name"),
        ({"role\r": "x"}, "not a valid field name"),
        ({"": "x"}, "not a valid field name"),
        ({"2fa": "x"}, "not a valid field name"),
        ({"ro le": "x"}, "not a valid field name"),
        ({"role:": "x"}, "not a valid field name"),
        ({"a.b": "x"}, "not a valid field name"),
        ({"#role": "x"}, "not a valid field name"),
        ({"rôle": "x"}, "not a valid field name"),
        ({"x" * 65: "x"}, "not a valid field name"),
        ({"true": "x"}, "reads back"),  # YAML would read the key as a boolean
        ({"null": "x"}, "reads back"),
        ({"role": "a\ud800b"}, "surrogate"),
        ({"role": "x" * 10_001}, "longer than"),
        ({"role": 3}, "must be text"),
        ({"role": None}, "must be text"),
    ],
)
def test_bad_fields_are_refused_before_anything_is_written(fields: dict, message: str) -> None:
    with pytest.raises(InvalidField, match=message):
        set_fields(NOTE, fields)
    with pytest.raises(ValueError):  # the adapters' "bad input" (400, exit 2, tool error)
        check_fields(fields)


def test_one_bad_field_leaves_the_note_as_it_was() -> None:
    with pytest.raises(InvalidField):
        set_fields(NOTE, {"status": "active", "role\n": "x"})


@pytest.mark.parametrize(
    "value",
    [
        "CTO",
        "key: value",
        "a #comment",
        "#hashtag",
        "- looks like a list",
        "-1",
        "3.14",
        "007",
        "0x1F",
        "true",
        "No",
        "null",
        "~",
        "",
        " padded ",
        "trailing ",
        "\"double\" and 'single' quotes",
        "'",
        '"',
        "back\\slash",
        "[[People/Ana López|Ana]]",
        "{not: a map}",
        "[not, a, list]",
        "*alias",
        "&anchor",
        "!tag",
        "%directive",
        "@at",
        "`tick`",
        "| block",
        "> folded",
        "? key",
        "2024-01-01",
        "10:00",
        "Zoë 😀 日本語",
        "\ufeffbom",
        "a\u200bzero-width",
        "\ufffe",
        "...",
        "---",
        "CTO\nstatus: fired",  # a value with line breaks stays one quoted line
        "a\n---\nowned: yes",
        "CTO\r",
        "a\tb",
        "a\x00b",
        "a\x1b[31mred",
        "a\u2028b",
        "a\x85b",
        "a\x7fb",
    ],
)
def test_values_read_back_as_the_same_string(value: str) -> None:
    out = set_fields(NOTE, {"role": value, "status": value})
    note = parse_note("people/sarah.md", out)
    assert note.warnings == ()
    assert note.frontmatter["role"] == value
    assert note.frontmatter["status"] == value
    assert note.frontmatter["title"] == "Sarah Chen"
    assert note.frontmatter["tags"] == ["people", "leadership"]
    assert out.endswith("# Sarah Chen\n\nLeads the data team.\n")
    assert out.count("\n") == NOTE.count("\n") + 1  # one line per field, whatever the value


def test_field_lines_quote_only_when_needed() -> None:
    assert field_line("role", "CTO") == "role: CTO"
    assert field_line("role", "key: value") == 'role: "key: value"'
    assert field_line("role", "123") == 'role: "123"'
    assert field_line("role", "Zoë") == "role: Zoë"
    assert field_line("role", "a\u200bb") == 'role: "a\u200bb"'


def test_replacing_a_block_value_stops_at_the_closing_fence() -> None:
    # the old loop kept walking past the frontmatter once lines were dropped, and
    # rewrote a body line that looked like a field
    text = "---\ntitle: x\ntags:\n  - a\n  - b\n---\nbody\nstatus: a line of prose\n"
    out = set_fields(text, {"tags": "x", "status": "active"})
    assert out == "---\ntitle: x\ntags: x\nstatus: active\n---\nbody\nstatus: a line of prose\n"


def test_crlf_notes_get_crlf_field_lines() -> None:
    out = set_fields("---\r\ntitle: x\r\n---\r\nbody\r\n", {"role": "a: b", "title": "y"})
    assert out == '---\r\ntitle: y\r\nrole: "a: b"\r\n---\r\nbody\r\n'


def test_a_note_without_frontmatter_gets_one() -> None:
    assert set_fields("body\n", {"status": "#1"}) == '---\nstatus: "#1"\n---\nbody\n'


_value = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=40)


@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,20}", fullmatch=True), value=_value)
def test_any_accepted_field_reads_back_exactly(name: str, value: str) -> None:
    try:
        line = field_line(name, value)
    except InvalidField as exc:  # only names YAML reads as something else are refused
        assert "reads back" in str(exc)
        assert load_yaml(f"{name}: x") != {name: "x"}
        return
    assert load_yaml(line) == {name: value}
    assert load_yaml(yaml_value(value)) == value or value == ""


@pytest.mark.parametrize(
    "title",
    [
        'Say "hi": it\'s #1',
        "Why: because",
        "- dash first",
        "C:\\Users\\me",
        "{{title}} inside",
        "{{date}} and {{time}}",
        "Ana's & Bo's [[plan]]",
        "trailing backslash \\",
    ],
)
def test_a_title_cannot_break_the_templates_frontmatter(title: str) -> None:
    for kind, template in FALLBACK_TEMPLATES.items():
        text = fill(template, title, "2024-03-12", "09:30")
        note = parse_note(f"{kind}.md", text)
        assert note.warnings == ()
        expected = "2024-03-12" if kind == "daily-log" else title
        assert note.frontmatter["title"] == expected
        assert note.frontmatter["date"] == "2024-03-12"
        assert note.headings[0].text == expected.strip()  # filled once, not twice


@pytest.mark.parametrize(
    ("line", "filled"),
    [
        ('title: "{{title}}"', 'title: "A \\"quoted\\" title"'),
        ("title: '{{title}}'", "title: 'A \"quoted\" title'"),
        ("title: {{title}}", 'title: "A \\"quoted\\" title"'),
        ("when: {{date}} at {{time}}", "when: 2024-03-12 at 09:30"),
    ],
)
def test_fill_quotes_in_the_templates_own_style(line: str, filled: str) -> None:
    out = fill(f"---\n{line}\n---\n# {{{{title}}}}\n", 'A "quoted" title', "2024-03-12", "09:30")
    assert out == f'---\n{filled}\n---\n# A "quoted" title\n'


# -- notes memvault writes from a template: headings, not hints; log entries -----------

DAY_TEMPLATE = (ROOT / "vault-template" / "templates" / "daily-log.md").read_text(encoding="utf-8")


def day(template: str = DAY_TEMPLATE) -> str:
    return compose.fill(template, "2026-11-30", "2026-11-30", "10:00")


def test_a_note_memvault_writes_keeps_the_headings_and_drops_the_hints() -> None:
    decision = (ROOT / "vault-template" / "templates" / "decision.md").read_text(encoding="utf-8")
    text = compose.strip_hints(compose.fill(decision, "Use Kafka", "2026-11-30", "10:00"))
    assert "%%" not in text and "constraints" not in text
    body = text.split("---\n", 2)[2]
    assert body == "# Use Kafka\n\n## Context\n\n## Decision\n\n## Consequences\n\n## Status\n"


def test_strip_hints_leaves_a_person_s_inline_comment_and_code() -> None:
    text = "# T\n\nmine %% keep %% here\n\n```\n%% code %%\n```\n"
    assert compose.strip_hints(text) == text


def test_the_first_entry_of_a_new_day_goes_under_the_date_not_under_follow_ups() -> None:
    text = compose.insert_log_entry(compose.strip_hints(day()), "- 10:00 Deployed")
    body = text.split("---\n", 2)[2]
    assert body == "# 2026-11-30\n\n- 10:00 Deployed\n\n## Follow-ups\n"


def test_entries_follow_the_last_entry_of_the_day() -> None:
    text = (
        "# D\n\n- 09:00 one\n  more about one\n- 09:30 two\n\n## Follow-ups\n\n- [ ] 11:00 call\n"
    )
    assert compose.insert_log_entry(text, "- 10:00 three") == (
        "# D\n\n- 09:00 one\n  more about one\n- 09:30 two\n- 10:00 three\n\n"
        "## Follow-ups\n\n- [ ] 11:00 call\n"
    )  # a task with a time in it is no entry


def test_an_entry_after_a_continuation_line_and_at_the_end_of_a_file() -> None:
    assert compose.insert_log_entry("- 09:00 one\n  more", "- 10:00 two") == (
        "- 09:00 one\n  more\n- 10:00 two\n"
    )
    assert compose.insert_log_entry("", "- 10:00 x") == "- 10:00 x\n"
    assert compose.insert_log_entry("# D\n", "- 10:00 x") == "# D\n\n- 10:00 x\n"


def test_a_day_a_person_made_from_the_template_loses_only_the_entries_hint() -> None:
    hints = compose.hint_texts(day())
    text = compose.insert_log_entry(day(), "- 10:00 Deployed", hints)
    body = text.split("---\n", 2)[2]
    assert body == (
        "# 2026-11-30\n\n- 10:00 Deployed\n\n## Follow-ups\n\n"
        "%% Open tasks as checkboxes: `- [ ] send the summary`. %%\n"
    )
    own = "# D\n\n%% my own reminder %%\n\n## Follow-ups\n"
    assert "%% my own reminder %%" in compose.insert_log_entry(own, "- 10:00 x", hints)


def test_log_entries_keep_crlf() -> None:
    text = "# D\r\n\r\n## Follow-ups\r\n"
    assert (
        compose.insert_log_entry(text, "- 10:00 x")
        == "# D\r\n\r\n- 10:00 x\r\n\r\n## Follow-ups\r\n"
    )


@pytest.mark.parametrize(
    ("title", "day"),
    [
        ("2024-03-10", "2024-03-10"),  # that day's log, past
        ("2031-01-02", "2031-01-02"),  # or future
        ("Standup notes", "2026-12-06"),  # a title naming no day: today's
        ("Sprint 2024-03", "2026-12-06"),  # a month is no day
        ("v1.2.3 release", "2026-12-06"),
        ("last tuesday", "2026-12-06"),
        ("2024-13-45", None),  # no real day
        ("2024-02-30", None),
        ("2024-3-10", None),  # a day in another form
        ("2024/03/10", None),
        ("10.03.2024", None),
        ("3/10/24", None),
        ("2024-03-10 standup", None),  # another day among words: that day's, or today's?
        ("Follow-up on 2024-03-10 incident", None),
        ("Standup on 2026-12-06", "2026-12-06"),  # today among words: today's either way
        (" 2024-03-10 ", "2024-03-10"),
        ("v2.3.10 release", "2026-12-06"),  # a version is no day
        ("Build 1.2.2024.5", "2026-12-06"),
        ("2024-03-10 to 2024-03-11", None),  # two days: which?
        ("2024-03-10 (10.03.2024)", None),
        # joined to a word by a hyphen, as a file name is (decisions/2024-03-10-x.md):
        # refused as "no day written YYYY-MM-DD", while 2024-03-10_standup was that day
        ("standup-2024-03-10", None),
        ("standup-2026-12-06", "2026-12-06"),
        ("2024-03-10-standup", None),
        ("2024-03-10_standup", None),
        ("2024-03-10-11", None),  # the 10th and 11th, or a number after the day?
        ("12-2024-03-10", None),
        ("2024-03-10-2024-03-11", None),
    ],
)
def test_log_day_is_the_day_the_title_is_or_today(title: str, day: str | None) -> None:
    if day is None:
        with pytest.raises(ValueError, match=r"YYYY-MM-DD \(e\.g\. 2026-12-06\)"):
            compose.log_day(title, "2026-12-06")
    else:
        assert compose.log_day(title, "2026-12-06") == day


# -- key_may_be: add's cheap test before spelling a folder's names ------------------------

_NAMES = st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=90) | st.text(max_size=90)


@given(name=_NAMES, other=_NAMES)
def test_key_may_be_is_false_only_for_names_of_another_key(name: str, other: str) -> None:
    key = compose.name_key(name, sharp_s=False)
    assert compose.key_may_be(key)(name)  # its own key: always may
    if not compose.key_may_be(key)(other):
        assert compose.name_key(other, sharp_s=False) != key


@pytest.mark.parametrize(
    ("name", "key", "may"),
    [
        ("Sarah Chen", "sarah-chen", True),
        ("Con", "con-note", True),  # a device's name: its key is longer
        ("Con O'Neill", "con-oneill", True),
        ("n000017", "pamigu-kine", False),  # a letter or digit the key has not
        ("Pamigu Kine Lisikata", "pamigu-kine", False),
        ("Ana López", "ana-lopez", True),  # not ASCII: spelt
        ("x" * 81, "y", True),  # past 80: slug cuts it, spelt
    ],
)
def test_key_may_be_rules_out_ascii_names_by_their_letters(name: str, key: str, may: bool) -> None:
    assert compose.key_may_be(key)(name) is may
