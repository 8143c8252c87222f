"""Composing notes from templates (pure): slugs, placeholders, frontmatter fields.

Used by ``memvault add`` / ``memvault log`` and the MCP/HTTP writes. The
template is the vault's own ``templates/<kind>.md`` (Obsidian's Templates
plugin reads the same files), with ``{{title}}``, ``{{date}}`` and ``{{time}}``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping

from memvault.core.notes import split_frontmatter
from memvault.core.text import newline_of

CATEGORIES = {
    "people": "person",
    "projects": "project",
    "decisions": "decision",
    "logs": "daily-log",
}

# Characters that cannot stand in a note name (Obsidian's list plus path separators).
_UNSAFE = re.compile(r'[\\/#|^\[\]:*?"<>\x00-\x1f\x7f]+')
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_SIMPLE = re.compile(r"^[\w][\w .,/@+-]*$", re.UNICODE)

FALLBACK_TEMPLATES = {
    "person": '---\ntitle: "{{title}}"\ntype: person\ndate: "{{date}}"\nsummary: ""\ntags: []\n---\n# {{title}}\n',
    "project": '---\ntitle: "{{title}}"\ntype: project\nstatus: active\ndate: "{{date}}"\nsummary: ""\n'
    "tags: []\n---\n# {{title}}\n",
    "decision": '---\ntitle: "{{title}}"\ntype: decision\nstatus: proposed\ndate: "{{date}}"\nsummary: ""\n'
    "tags: []\n---\n# {{title}}\n\n## Context\n\n## Decision\n\n## Consequences\n",
    "daily-log": '---\ntitle: "{{date}}"\ntype: log\ndate: "{{date}}"\nsummary: ""\ntags: []\n---\n# {{date}}\n',
}


def slug(title: str, max_len: int = 80) -> str:
    """A readable, safe file name: unicode letters kept, unsafe characters and
    spaces become '-', lower case, no leading dot, at most ``max_len`` chars."""
    text = unicodedata.normalize("NFC", title).strip().lower()
    text = _UNSAFE.sub("-", text)
    text = re.sub(r"\s+", "-", text)
    text = re.sub(r"-{2,}", "-", text).strip("-. ")
    if len(text) > max_len:
        text = text[:max_len].rsplit("-", 1)[0] or text[:max_len]
    return text


def note_path(category: str, title: str, day: str) -> str:
    """Where a new note goes: logs by day, decisions prefixed with the day."""
    if category == "logs":
        return f"logs/{day}.md"
    name = slug(title)
    if not name:
        raise ValueError("the title has no characters usable in a file name")
    if category == "decisions" and not re.match(r"^\d{4}-\d{2}-\d{2}", name):
        name = f"{day}-{name}"
    return f"{category}/{name}.md"


def yaml_value(value: str) -> str:
    """A YAML scalar that reads back as exactly ``value`` (a string)."""
    if (
        value
        and _SIMPLE.match(value)
        and not re.match(r"^(?:true|false|null|~|yes|no|on|off|[-+\d.])", value, re.I)
    ):
        return value
    return json.dumps(value, ensure_ascii=False)  # JSON strings are valid YAML


def fill(template: str, title: str, day: str, time: str) -> str:
    return template.replace("{{title}}", title).replace("{{date}}", day).replace("{{time}}", time)


def set_fields(text: str, fields: Mapping[str, str]) -> str:
    """Set frontmatter fields, editing lines in place (other lines untouched);
    adds a frontmatter block when the note has none."""
    for name in fields:
        if not _FIELD.match(name):
            raise ValueError(f"{name!r} is not a valid field name (letters, digits, - and _)")
    if not fields:
        return text
    nl = newline_of(text)
    raw, _, body_line = split_frontmatter(text)
    lines = text.split("\n")
    if raw is None:
        block = [f"{k}: {yaml_value(v)}" for k, v in fields.items()]
        return nl.join(["---", *block, "---"]) + nl + text
    end = body_line - 2  # index of the closing fence
    todo = dict(fields)
    for i in range(1, end):
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:", lines[i])
        if m and m.group(1) in todo:
            cr = "\r" if lines[i].endswith("\r") else ""
            lines[i] = f"{m.group(1)}: {yaml_value(todo.pop(m.group(1)))}{cr}"
            # drop a block value that belonged to the old field (indented lines / list items)
            j = i + 1
            while j < end and (lines[j].startswith((" ", "\t")) or lines[j].startswith("- ")):
                del lines[j]
                end -= 1
    cr = "\r" if nl == "\r\n" else ""
    extra = [f"{k}: {yaml_value(v)}{cr}" for k, v in todo.items()]
    lines[end:end] = extra
    return "\n".join(lines)


def replace_body(text: str, title: str, body: str) -> str:
    """Keep the frontmatter, put ``# title`` and ``body`` under it."""
    nl = newline_of(text)
    raw, _, body_line = split_frontmatter(text)
    head = nl.join(text.split("\n")[: body_line - 1]) + nl if raw is not None else ""
    body = body.replace("\r\n", "\n").strip("\n").replace("\n", nl)
    heading = "" if body.lstrip().startswith("# ") else f"# {title}{nl}{nl}"
    return f"{head}{heading}{body}{nl}"


def append_line(text: str, line: str) -> str:
    """Append a line at the end of a note, with the note's line endings."""
    nl = newline_of(text) if text else "\n"
    if text and not text.endswith("\n"):
        text += nl
    return f"{text}{line}{nl}"
