"""Composing notes from templates (pure): slugs, placeholders, frontmatter fields.

Used by ``memvault add`` / ``memvault log`` and the MCP/HTTP writes. The
template is the vault's own ``templates/<kind>.md`` (Obsidian's Templates
plugin reads the same files), with ``{{title}}``, ``{{date}}`` and ``{{time}}``.
A note memvault writes gets the template's frontmatter and headings, never its
hints (``%% … %%`` on lines of their own: the rule is in ``notes``), which are
there for a person filling the template in Obsidian.

Where a log entry goes: after the day's last timestamped entry
(``- HH:MM …``); in a day without one, at the end of the part above its first
``##`` heading (under ``# <date>``, before ``## Follow-ups``), where the
template's hint for entries — if a person's copy still holds it — gives way.

Frontmatter is written line by line, never by re-serialising a person's YAML.
So that an agent's field can never break the block: a field name must be
letters, digits, ``-`` and ``_`` (a letter or ``_`` first), matched in full (no
trailing line break); a value is written plain only when YAML reads it back
unchanged, else double-quoted with every line break and control character
escaped, so it stays one line; and every line written is read back and must
give exactly the name and value asked for. Anything else raises
``InvalidField`` (a ``ValueError``: the adapters answer 400 / exit 2 / a tool
error) before the note is touched.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Callable, Mapping

import yaml

from memvault.core.cjk import fold
from memvault.core.frontmatter_yaml import FrontmatterRejected
from memvault.core.memory_names import ignorable, joins
from memvault.core.notes import hint_lines, load_yaml, split_frontmatter
from memvault.core.text import bidi_control, grapheme_cut, newline_of, split_lines
from memvault.core.wikilinks import mask_code

CATEGORIES = {
    "people": "person",
    "projects": "project",
    "decisions": "decision",
    "logs": "daily-log",
}

# Characters that cannot stand in a note name (Obsidian's list plus path separators).
_UNSAFE = re.compile(r'[\\/#|^\[\]:*?"<>\x00-\x1f\x7f]+')
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # matched in full
_SIMPLE = re.compile(r"[\w][\w .,/@+-]*", re.UNICODE)  # matched in full
_RESERVED_START = re.compile(r"(?:true|false|null|~|yes|no|on|off|[-+\d.])", re.I)
# characters YAML would not keep as they are inside double quotes (JSON escapes C0): escaped
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
MAX_FIELD_NAME = 64
MAX_FIELD_VALUE = 10_000


class InvalidField(ValueError):
    """A frontmatter field name or value memvault refuses to write."""


FALLBACK_TEMPLATES = {
    "person": '---\ntitle: "{{title}}"\ntype: person\ndate: "{{date}}"\nsummary: ""\ntags: []\n---\n# {{title}}\n',
    "project": '---\ntitle: "{{title}}"\ntype: project\nstatus: active\ndate: "{{date}}"\nsummary: ""\n'
    "tags: []\n---\n# {{title}}\n",
    "decision": '---\ntitle: "{{title}}"\ntype: decision\nstatus: proposed\ndate: "{{date}}"\nsummary: ""\n'
    "tags: []\n---\n# {{title}}\n\n## Context\n\n## Decision\n\n## Consequences\n",
    "daily-log": '---\ntitle: "{{date}}"\ntype: log\ndate: "{{date}}"\nsummary: ""\ntags: []\n---\n# {{date}}\n',
}


def slug(title: str, max_len: int = 80, max_bytes: int = 200) -> str:
    """A readable, safe file name: unicode letters kept, unsafe characters and
    spaces become '-', lower case, no leading dot, at most ``max_len`` chars and
    ``max_bytes`` bytes of UTF-8 (80 emoji are 320: past the 255 a name may take).
    A name Windows reserves for a device (``con``, ``nul``, ``com1``...; with any
    extension) gets ``-note``, as ``memvault migrate`` names it: such a note could not
    be checked out or synced there.
    Invisible format characters (a zero-width space pasted from the web, bidi marks
    and overrides) are left out — kept, they made names that look empty, or like
    another note's, or read backwards; the joiners words need (U+200C, U+200D) stay where
    Unicode says they join (``memory_names.joins``: UAX #31's contexts, Persian's ZWNJ, a
    half form after a virama, an emoji ZWJ sequence), the names the memory tool takes, and
    go elsewhere, where no word needs them (``Lo\u200dpez`` made a ``lo?pez`` file beside
    ``lopez``); so are the default-ignorable characters drawn as nothing where they stand
    (``memory_names.ignorable``: a Hangul filler, CGJ, a variation selector after a
    Latin letter: ``Ana<U+3164>`` made a second ``ana``).
    A name with no letter, digit or symbol left is ``""`` (the caller refuses it)."""
    text = unicodedata.normalize("NFC", title)
    text = "".join(
        c
        for i, c in enumerate(text)
        if (unicodedata.category(c) != "Cf" or (c in _JOINERS and joins(text, i)))
        and not ignorable(text, i)
    )
    text = text.strip().lower()
    text = _UNSAFE.sub("-", text)
    text = re.sub(r"\s+", "-", text)
    text = re.sub(r"-{2,}", "-", text).strip("-. ")
    # each cut where a reader sees characters part (``grapheme_cut``): never inside an
    # emoji joined by ZWJ, nor before a Thai or Hindi vowel sign (another word)
    if len(text) > max_len:
        cut = text[: grapheme_cut(text, max_len)]
        text = cut.rsplit("-", 1)[0] or cut
    if len(text.encode("utf-8")) > max_bytes:
        cut = text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")
        cut = text[: grapheme_cut(text, len(cut))]
        text = (cut.rsplit("-", 1)[0] or cut).strip("-. ")
    if not any(unicodedata.category(c)[0] in "LNS" for c in text):
        return ""
    return _WINDOWS_DEVICE.sub(r"\1-note", text)


def name_key(name: str, sharp_s: bool = True, *, whole: bool = False) -> str:
    """What two spellings of one note's name share: the slug's runs of letters, digits
    and symbols, apostrophes dropped — so ``Con O'Neill`` (``con-o'neill``) and the
    ``con-oneill`` that ``memvault migrate`` makes, or ``Dr. Smith`` and ``dr-smith``,
    are one name, while ``C++`` and ``C`` stay two. Accents are folded as Obsidian's
    quick switcher folds them (the combining marks U+0300-U+036F of the decomposed
    name left out): ``Ana López`` and ``Ana Lopez`` are one name; marks that spell a
    letter in other scripts (Devanagari's vowel signs...) are kept. A joiner changes
    how a word is drawn, not the word: left out (``می‌خواهم`` and ``میخواهم`` are one
    name). The spellings a keyboard gives are one name too, as search reads them
    (``cjk.fold``, ß as ss): ``Strasse`` is ``Straße``, ``Fullwidth`` is ``Ｆｕｌｌｗｉｄｔｈ``.
    ``sharp_s=False`` keeps ß apart from ss (``add``: ``Masse`` and ``Maße`` are two
    words, and an update must not go into the other's note). ``whole``: of all of the
    name (a slug is cut past 80 characters: two long names alike in those are one)."""
    words, word = [], ""
    cut = slug(name, len(name) + 1, 4 * len(name) + 4) if whole else slug(name)
    folded = _DIACRITICS.sub("", unicodedata.normalize("NFD", fold(cut)))
    text = unicodedata.normalize("NFC", folded)
    text = text.replace("ß", "ss") if sharp_s else text
    for ch in text.replace("'", "").replace("\u2019", ""):
        if ch in _JOINERS:
            continue
        if unicodedata.category(ch)[0] in "LNMS":
            word += ch
        elif word:
            words.append(word)
            word = ""
    return "-".join([*words, word] if word else words)


def key_may_be(key: str) -> Callable[[str], bool]:
    """A cheap test of a name against ``key``, false only when ``name_key(name)`` cannot
    be ``key``: a name of ASCII up to 80 characters (``slug`` cuts none of it) keeps
    each of its letters and digits, lower-cased, in its key. A folder's thousands of
    titles are then spelt only when they may match (``add``'s lookup by name)."""
    allowed = frozenset(key) | _ASCII_OTHER

    def may(name: str) -> bool:
        return len(name) > 80 or not name.isascii() or set(name.lower()) <= allowed

    return may


_ASCII_OTHER = frozenset(chr(c) for c in range(128) if not chr(c).isalnum())
_DIACRITICS = re.compile("[\u0300-\u036f]")  # what Obsidian's removeDiacritics drops
_JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner: part of how words are spelt


# names Windows keeps for devices, alone or before an extension (git for Windows refuses them)
_WINDOWS_DEVICE = re.compile(
    r"^(con|prn|aux|nul|conin\$|conout\$|clock\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(?=\.|$)"
)


# A day written YYYY-MM-DD in a title; one written otherwise, which a log's title may
# mean (2024/03/10, 2024-3-10, 10.03.2024, 3/10/24) but not as one reads it everywhere
# (10.03 is March or October); a version (v2.3.10) is neither. A hyphen joins it to a
# word as in a file name (standup-2024-03-10, 2024-03-10-standup), not to a number
# (2024-03-10-11: the 10th and the 11th?)
_ISO_DAY = re.compile(r"(?<!\d)(?<!\d-)\d{4}-\d{2}-\d{2}(?!-?\d)")
_DAY_LIKE = re.compile(
    r"(?<![\d.])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4}"
    r"|\d{1,2}/\d{1,2}/\d{2})(?![\d.])"
)


def log_day(title: str, today: str) -> str:
    """The day whose log an ``add`` of category ``logs`` titled ``title`` is: the day the
    title is, written ``YYYY-MM-DD`` (that day's log, past or future); ``today`` for a
    title naming no day, or naming today among its words (the log is titled with its
    date whatever the title). A title naming another day among words (``Follow-up on
    2024-03-10 incident``: that day's log, or today's about it?), a day written
    otherwise, two days, or no real day (``2024-13-45``) is refused (``ValueError``)
    naming the form: it was today's log, the title's day lost."""
    named = set(_ISO_DAY.findall(title))
    if named == {title.strip()}:
        try:
            return dt.date.fromisoformat(title.strip()).isoformat()
        except ValueError:
            pass
    elif not named and not _DAY_LIKE.search(title):
        return today
    elif named == {today} and not _DAY_LIKE.search(_ISO_DAY.sub(" ", title)):
        return today  # "Standup 2026-12-06" on that day: today's, however it is read
    raise ValueError(
        f"a day's log is titled with its date alone, as YYYY-MM-DD (e.g. {today}), and "
        f"{title!r} is not that: give the day alone as YYYY-MM-DD for that day's log, or a "
        "title naming no day for today's"
    )


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
    if _SIMPLE.fullmatch(value) and value == value.rstrip() and not _RESERVED_START.match(value):
        return value
    return _double_quoted(value)


def _double_quoted(value: str) -> str:
    quoted = json.dumps(value, ensure_ascii=False)  # a JSON string is YAML's double-quoted form
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", quoted)


def field_line(name: object, value: object) -> str:
    """The frontmatter line ``name: value``, or ``InvalidField`` saying why not."""
    if not isinstance(name, str) or not _FIELD.fullmatch(name) or len(name) > MAX_FIELD_NAME:
        raise InvalidField(
            f"{name!r} is not a valid field name: use letters, digits, - and _, "
            f"starting with a letter or _ (at most {MAX_FIELD_NAME} characters)"
        )
    if not isinstance(value, str):
        raise InvalidField(f"the value of {name!r} must be text, not {type(value).__name__}")
    if len(value) > MAX_FIELD_VALUE:
        raise InvalidField(f"the value of {name!r} is longer than {MAX_FIELD_VALUE} characters")
    for ch in value:
        if unicodedata.category(ch) == "Cs":
            raise InvalidField(
                f"the value of {name!r} holds a lone surrogate (U+{ord(ch):04X}), not text"
            )
    line = f"{name}: {yaml_value(value)}"
    try:
        back = load_yaml(line)
    except (yaml.YAMLError, FrontmatterRejected):
        back = None
    if back != {name: value}:
        raise InvalidField(f"{name!r} cannot be written so that it reads back as the same field")
    return line


def check_fields(fields: Mapping[str, str]) -> dict[str, str]:
    """Every field's line, or ``InvalidField`` for the first bad one (nothing is written)."""
    return {name: field_line(name, value) for name, value in fields.items()}


def not_text(value: str) -> int | None:
    """Where ``value``'s first NUL or lone surrogate is (what no note can hold), if any."""
    nul = value.find("\x00")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start if nul < 0 else min(nul, exc.start)
    return nul if nul >= 0 else None


def check_text(what: str, value: str, *, controls: bool = False) -> None:
    """``ValueError`` when ``value`` cannot go into a note as it is: a NUL character (a
    file holding one is binary to memvault and to editors, so the note, the day's log or
    MEMORY.md would be lost to the index and to every later write), a lone surrogate
    (not text: it cannot be written as UTF-8), or — ``controls``, for a title, which
    becomes a heading and a file name — any other control character, or a bidi control
    (``text.BIDI_CONTROLS``: the name would read as another in every listing)."""
    if not controls:  # a note's body: looked at in C (21 MB: 5 s a character at a time)
        if (i := not_text(value)) is None:
            return
        value = value[i]
    for ch in value:
        kind = unicodedata.category(ch)
        if ch == "\x00":
            raise ValueError(f"the {what} holds a NUL character (U+0000): it is not text")
        if kind == "Cs":
            raise ValueError(f"the {what} holds a lone surrogate (U+{ord(ch):04X}): not text")
        if controls and kind == "Cc":
            raise ValueError(f"the {what} holds a control character (U+{ord(ch):04X})")
        if controls and bidi_control(ch):
            raise ValueError(
                f"the {what} holds a bidi control character (U+{ord(ch):04X}): it shows "
                "the name after it in another order than it is written; write it without"
            )


def clean_title(title: str) -> str:
    """``title`` as a note is named by: its runs of spaces made one, refused (``ValueError``)
    when it is empty, too long, or holds a control character. A line break or a tab is
    refused before spaces are folded: folding turned ``"Evil\\nName"`` into ``"Evil Name"``
    and the README promises a title with a control character is refused."""
    check_text("title", title or "", controls=True)
    title = " ".join((title or "").split())
    if not title:
        raise ValueError("a note needs a title")
    if len(title) > 200:
        raise ValueError("the title is longer than 200 characters")
    return title


def fill(template: str, title: str, day: str, time: str) -> str:
    """The template with ``{{title}}``, ``{{date}}`` and ``{{time}}`` filled in.

    One pass: text put in is never read again for placeholders (a title may say
    ``{{date}}``). In the frontmatter, a value that is one placeholder
    (``title: "{{title}}"``) is filled so that YAML reads back exactly the text
    put in, in the template's own quoting: a title with quotes, ``: `` or ``#``
    cannot break the block.
    """
    values = {"title": title, "date": day, "time": time}
    raw, _, body_line = split_frontmatter(template)
    lines = template.split("\n")
    for i, line in enumerate(lines):
        m = _PLACEHOLDER_LINE.match(line) if raw is not None and 0 < i < body_line - 2 else None
        if m is None:
            lines[i] = _PLACEHOLDER.sub(lambda p: values[p.group(1)], line)
            continue
        value = values[m.group("ph")]
        if m.group("q") == '"':
            scalar = _double_quoted(value)
        elif m.group("q") == "'":
            scalar = "'" + value.replace("'", "''") + "'"
        else:
            scalar = yaml_value(value)
        lines[i] = f"{m.group('key')}{scalar}{m.group('cr')}"
    return "\n".join(lines)


_PLACEHOLDER = re.compile(r"\{\{(title|date|time)\}\}")
_PLACEHOLDER_LINE = re.compile(
    r"""^(?P<key>[^\s#:][^:]*:[ \t]+)(?P<q>["']?)\{\{(?P<ph>title|date|time)\}\}(?P=q)[ \t]*(?P<cr>\r?)$"""
)


def set_fields(text: str, fields: Mapping[str, str]) -> str:
    """Set frontmatter fields, editing lines in place (other lines untouched);
    adds a frontmatter block when the note has none. Every field is checked
    first (``field_line``): one bad field and nothing changes."""
    written = check_fields(fields)
    if not written:
        return text
    nl = newline_of(text)
    raw, _, body_line = split_frontmatter(text)
    lines = text.split("\n")
    if raw is None:
        return nl.join(["---", *written.values(), "---"]) + nl + text
    end = body_line - 2  # index of the closing fence
    todo = dict(written)
    i = 1
    while i < end:  # ``end`` moves up as old block values are dropped
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:", lines[i])
        if m and m.group(1) in todo:
            cr = "\r" if lines[i].endswith("\r") else ""
            lines[i] = todo.pop(m.group(1)) + cr
            # drop a block value that belonged to the old field (indented lines / list items)
            while i + 1 < end and lines[i + 1].startswith((" ", "\t", "- ")):
                del lines[i + 1]
                end -= 1
        i += 1
    cr = "\r" if nl == "\r\n" else ""
    lines[end:end] = [line + cr for line in todo.values()]
    return "\n".join(lines)


def replace_body(text: str, title: str, body: str) -> str:
    """Keep the frontmatter, put ``# title`` and ``body`` under it."""
    nl = newline_of(text)
    raw, _, body_line = split_frontmatter(text)
    head = nl.join(text.split("\n")[: body_line - 1]) + nl if raw is not None else ""
    body = body.replace("\r\n", "\n").strip("\n").replace("\n", nl)
    heading = "" if body.lstrip().startswith("# ") else f"# {title}{nl}{nl}"
    return f"{head}{heading}{body}{nl}"


def strip_hints(text: str) -> str:
    """``text`` without its hints (and without the blank line each leaves behind)."""
    _, _, body_line = split_frontmatter(text)
    hints = hint_lines(text, first=body_line)
    if not hints:
        return text
    lines = text.split("\n")
    out: list[str] = []
    for n, line in enumerate(lines, 1):
        if n in hints:
            continue
        if not line.strip() and out and not out[-1].strip() and n - 1 in hints:
            continue  # the blank lines that framed a hint collapse into one
        out.append(line)
    while len(out) > 1 and not out[-1].strip() and not out[-2].strip():
        out.pop()  # no blank tail where a last hint stood
    return "\n".join(out)


_ENTRY = re.compile(r"^[ \t]{0,3}[-*+][ \t]+\d{1,2}:\d{2}\b")  # - 09:30 ...; not a task
_SUBHEADING = re.compile(r"^ {0,3}#{2,6}(?:[ \t]|$)")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


# A log entry is one line of a day's log (its line breaks are joined): a tool's output
# logged whole was one line of 0.9 MB in the day a person opens in Obsidian, a context
# budget's worth many times over. Such a text goes in a note; the log names it.
MAX_LOG_ENTRY = 4_000


def insert_log_entry(text: str, entry: str, template_hints: frozenset[str] = frozenset()) -> str:
    """Put ``entry`` (one line) where a day's entries go (the module docstring's rule).

    An entry the day holds already, the same words at the same minute (an agent's
    retried call, a loop logging one line), is not written again: ``text`` is
    returned as it is, and nothing is written.

    ``template_hints``: the hint lines of the vault's daily-log template; such a
    line in the part the first entry goes into is removed with it (a hint a
    person wrote themselves is not in the template, and stays).
    """
    nl = newline_of(text) if text else "\n"
    cr = nl[:-1]  # lines keep their "\r" when the file uses CRLF
    _, _, body_line = split_frontmatter(text)
    lines = text.split("\n")
    plain = split_lines(text)
    code = split_lines(mask_code(text))
    hints = hint_lines(text, first=body_line)
    start = body_line - 1

    def text_at(i: int) -> bool:  # a line of prose: not blank, not code, not a hint
        return bool(plain[i].strip()) and bool(code[i].strip()) and i + 1 not in hints

    entries = [i for i in range(start, len(lines)) if text_at(i) and _ENTRY.match(plain[i])]
    if any(plain[i].strip() == entry.strip() for i in entries):
        return text  # the same line at the same minute: the day says it already
    if entries:
        at = entries[-1] + 1
        while at < len(lines) and plain[at].strip() and plain[at][:1] in " \t":
            at += 1  # past the last entry's continuation lines
        lines.insert(at, entry + cr)
        return _ending("\n".join(lines), nl)
    end = next(
        (i for i in range(start, len(lines)) if text_at(i) and _SUBHEADING.match(plain[i])),
        len(lines),
    )
    for i in range(end - 1, start - 1, -1):  # the template's own hint gives way
        if i + 1 in hints and plain[i].strip() in template_hints:
            del lines[i], plain[i]
            end -= 1
            if 0 < i < end and not plain[i].strip() and not plain[i - 1].strip():
                del lines[i], plain[i]  # with one of the blank lines around it
                end -= 1
    at = end
    while at > start and not plain[at - 1].strip():
        at -= 1  # right after the last line of text above the heading
    new = [entry + cr]
    if at > start and _HEADING.match(plain[at - 1]):
        new.insert(0, cr)  # a blank line between a heading and the first entry
    if at < len(lines) and plain[at].strip():
        new.append(cr)  # and one before what follows
    lines[at:at] = new
    return _ending("\n".join(lines), nl)


def _ending(text: str, nl: str) -> str:
    return text if text.endswith("\n") else text + nl


def hint_texts(template: str) -> frozenset[str]:
    """The hint lines of a template, stripped (for ``insert_log_entry``)."""
    _, _, body_line = split_frontmatter(template)
    lines = split_lines(template)
    return frozenset(lines[n - 1].strip() for n in hint_lines(template, first=body_line))
