"""core/compose.py: frontmatter fields an agent sets are checked, quoted and read back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
