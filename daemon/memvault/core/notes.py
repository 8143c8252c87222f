"""Parse a note's text into what the rest of memvault reads from it.

Tolerant by design: a note whose frontmatter is not valid YAML (an unquoted
``C:\\``, ``title: *Italic*``, ``---`` used as a rule, ``- [[link]]x``), or is
YAML too costly to load (an alias bomb, absurd nesting: ``frontmatter_yaml``),
stays indexable as plain text, with a warning recorded. Dates stay exactly as written:
the YAML loader here knows no timestamps (``2024-01-01`` stays a string, never
becomes ``2024-01-01T00:00:00``) and no YAML 1.1 sexagesimals (``10:00`` stays
``"10:00"``, not ``600``).

Hints. A template tells whoever fills it in what goes where; that text is not
memory. The rule that tells a hint from a person's words: **a hint is an
Obsidian comment that stands on lines of its own** — a line that starts with
``%%`` opens it, and the first line that ends with ``%%`` (the same line when it
holds both) closes it; in a code block it is code, and an unclosed ``%%`` is
not a hint. Obsidian hides such comments in its reading view, and memvault
never takes a hint for a summary, never indexes it, and leaves hints out of
the notes it writes (``compose``). A ``%%`` comment inside a line of text is
left alone.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from memvault.core import frontmatter_yaml
from memvault.core.anchors import Outline, outline
from memvault.core.conflicts import conflict_warning, find_conflicts, unread_lines
from memvault.core.excalidraw import SCAFFOLD, drawing_words, is_drawing, plugin_lines
from memvault.core.frontmatter_yaml import FrontmatterRejected
from memvault.core.text import grapheme_cut, split_lines
from memvault.core.wikilinks import Link, find_links, mask_code

SUMMARY_MAX = 160


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based line in the file


class _Field:
    """A frontmatter field read as one text (``note.date``): None when missing, empty or
    not a scalar."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __get__(self, note: Note, owner: type | None = None) -> str | None:
        return _scalar(note.frontmatter.get(self.key))


@dataclass(frozen=True, slots=True)
class Note:
    """What memvault reads from one note. ``path`` is vault-relative, posix."""

    path: str
    title: str
    summary: str
    frontmatter: dict[str, Any]
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    headings: tuple[Heading, ...]
    links: tuple[Link, ...]
    body: str  # the text after the frontmatter block
    body_line: int  # 1-based line where the body starts
    warnings: tuple[str, ...] = field(default=())
    outline: Outline | None = None  # headings and block ids, for #anchors (anchors.outline)
    # 1-based lines no one wrote to be read, never indexed: template hints (module doc),
    # an Excalidraw drawing's banner and embedded files' ids (core/excalidraw)
    hints: frozenset[int] = frozenset()
    # the frontmatter's YAML as written (file lines 2 on; '' when there is none or it was
    # ignored): a note that is only its properties is searched by their lines (chunks)
    raw_frontmatter: str = ""

    @property
    def category(self) -> str:
        """The top folder ('' for notes at the vault root)."""
        return self.path.split("/", 1)[0] if "/" in self.path else ""

    date = _Field("date")
    updated = _Field("updated")
    status = _Field("status")
    type = _Field("type")


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, (list, dict)):
        return None
    text = str(value).strip()
    return text or None


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(raw YAML or None, body, 1-based line where the body starts)."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None, text, 1
    lines = text.split("\n")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r").rstrip() in ("---", "..."):
            raw = "\n".join(lines[1:i])
            body = "\n".join(lines[i + 1 :])
            return raw, body, i + 2
    return None, text, 1


def load_yaml(raw: str) -> Any:
    """Frontmatter YAML, bounded (``frontmatter_yaml.load``)."""
    return frontmatter_yaml.load(raw)


def parse_note(path: str, text: str) -> Note:
    """Parse a note (text already decoded, BOM removed). Never raises on content."""
    warnings: list[str] = []
    raw, body, body_line = split_frontmatter(text)
    summary_body, summary_line = body, body_line
    fm: dict[str, Any] = {}
    conflicts = find_conflicts(text)
    unread = unread_lines(conflicts)  # never a summary's or a title's (core/conflicts)
    if raw is not None:
        fm, ignored = _frontmatter(raw, in_conflict=any(n < body_line for n in unread))
        if ignored is not None:
            warnings.append(f"frontmatter ignored: {ignored}")
            summary_body = body  # the prose after the block, not the broken YAML
            body, body_line = text, 1
    if (conflicted := conflict_warning(conflicts)) is not None:
        warnings.append(conflicted)
    masked = mask_code(text)
    hints = hint_lines(text, masked, first=body_line)
    headings = _headings(text, masked)
    links = find_links(text, masked)
    body_headings = [h for h in headings if h.line >= body_line and h.line not in hints]
    unsaid = hints | unread
    own = [h for h in body_headings if h.line not in unread]
    if is_drawing(fm):  # an Excalidraw drawing: the plugin's own lines and headings
        # its words are read inside the plugin's %% too; its banner, file ids never
        hints = (hints - drawing_words(text, body_line)) | plugin_lines(text, body_line)
        unsaid = hints | unread
        own = [h for h in own if h.text not in SCAFFOLD]
    title = _title(path, fm, own)
    return Note(
        path=path,
        title=title,
        summary=_summary(fm, blank_lines(summary_body, unsaid, summary_line))
        or _summary(fm, blank_lines(body, unsaid, body_line)),
        frontmatter=fm,
        tags=_tags(fm, masked, body_line, text),
        aliases=_aliases(fm),
        headings=tuple(body_headings),
        links=tuple(links),
        body=body,
        body_line=body_line,
        warnings=tuple(warnings),
        outline=outline(text, masked),
        hints=hints,
        raw_frontmatter=raw if raw is not None and body_line > 1 else "",
    )


def _frontmatter(raw: str, in_conflict: bool) -> tuple[dict[str, Any], str | None]:
    """(the fields, None) or ({}, why the block is ignored). A block holding an
    unresolved merge conflict is ignored whatever YAML makes of it: a side's value
    with the markers inside (a quoted scalar over several lines) is no one's."""
    if in_conflict:
        return {}, "it holds an unresolved merge conflict"
    try:
        loaded = load_yaml(raw)
    except yaml.YAMLError as exc:
        return {}, _yaml_error(exc)
    except FrontmatterRejected as exc:
        return {}, str(exc)
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, "not a mapping of fields"
    return {str(k): _jsonable(v) for k, v in loaded.items()}, None


def hint_lines(text: str, masked: str | None = None, first: int = 1) -> frozenset[int]:
    """The 1-based numbers of the lines of ``text`` (from line ``first`` on) that are
    hints: Obsidian comments on lines of their own (the module docstring's rule)."""
    if "%%" not in text:
        return frozenset()
    lines = split_lines(text)
    code = split_lines(masked if masked is not None else mask_code(text))
    out: set[int] = set()
    i = first - 1
    while i < len(lines):
        line = lines[i].strip()
        if not line.startswith("%%") or not code[i].strip():
            i += 1
            continue
        end = i if len(line) >= 4 and line.endswith("%%") else None
        j = i + 1
        while end is None and j < len(lines):
            if lines[j].rstrip().endswith("%%") and code[j].strip():
                end = j
            j += 1
        if end is None:
            break  # unclosed: Obsidian hides the rest, memvault keeps it as text
        out.update(range(i + 1, end + 2))
        i = end + 1
    return frozenset(out)


def blank_lines(text: str, lines: frozenset[int], first: int) -> str:
    """``text`` (whose first line is line ``first`` of its file) with the given 1-based
    lines emptied: line numbers and line endings stay where they were."""
    if not lines:
        return text
    out = text.split("\n")
    for n in lines:
        i = n - first
        if 0 <= i < len(out):
            out[i] = "\r" if out[i].endswith("\r") else ""
    return "\n".join(out)


def _yaml_error(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
    where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
    return f"invalid YAML: {problem}{where}"


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def _headings(text: str, masked: str) -> list[Heading]:
    out: list[Heading] = []
    for i, (line, mline) in enumerate(zip(split_lines(text), split_lines(masked), strict=True)):
        if not mline.lstrip().startswith("#"):
            continue
        m = _ATX.match(line)
        if m and m.group(2) is not None and m.group(2).strip():
            out.append(Heading(len(m.group(1)), m.group(2).strip(), i + 1))
    return out


def _title(path: str, fm: dict[str, Any], headings: list[Heading]) -> str:
    value = fm.get("title")
    if isinstance(value, (str, int, float)) and str(value).strip():
        return str(value).strip()
    for h in headings:
        if h.level == 1:
            return h.text
    name = posixpath.basename(path)
    return name[:-3] if name.lower().endswith(".md") else name


_WIKI_DISPLAY = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
# the destination: parentheses only balanced, one level (CommonMark's), so a try stops at
# the next "(" — "[a](" a 100,000 times on one line was quadratic: 124 s to parse
_MD_DISPLAY = re.compile(r"!?\[([^\[\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)")
# emphasis as CommonMark reads it: `_` and `__` never inside a word (snake_case names
# are not emphasis), `*` anywhere; a code span's text is taken as written
_EMPHASIS = re.compile(
    r"(\*\*|\*|~~|==)(?=\S)(.+?)(?<=\S)\1|(?<![^\W_])(__|_)(?=\S)(.+?)(?<=\S)\3(?![^\W_])"
)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_KEPT = re.compile("\ue000(\\d+)\ue001")  # a code span's place while emphasis goes
# a sentence's end: . ! ? and a space, or a CJK full stop (not one inside a quote: a
# closing 」 after it, the sentence goes on: 「はい。」と言った。)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s+(\S))|[。！？]+(?![」』）)〉》”’])(?!\s*$)")
_OPENS = "\"'([“‘«„¿¡"  # what a sentence may open with besides a letter or a digit
# a word that a period ends without ending its sentence, read in the few characters
# before the period (never the text from its start: a paragraph of "1. 1. 1." would be
# quadratic): an ordinal of a day before a month (German: am 3. März; Nordic and
# Slavic months are lowercase), a one-letter word in a run of them (z. B., d. h.,
# J. R. R. Tolkien). "version 2. The", "Team B. Agreed", "59.5 s. The" end there.
_ORDINAL = re.compile(r"(?:^|[\s(])\d{1,2}$")
_LETTER = re.compile(r"(?:^|[\s(])[^\W\d_]$")
_INITIALS = re.compile(r"(?:^|[\s(])[^\W\d_]\.\s*[^\W\d_]$")
_MONTHS = frozenset(
    ("januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august",
     "september", "oktober", "november", "dezember",
     "jan", "feb", "mär", "apr", "jun", "jul", "aug", "sep", "sept", "okt", "nov", "dez")
)  # fmt: skip
_NEXT_WORD = re.compile(r"[^\W\d_]+")
_BLOCK_ID = re.compile(r"\s\^[A-Za-z0-9-]+$")
# a line that is a Dataview field (``role:: Staff engineer``, ``- [ ] due:: 2026-12-05``,
# ``**Role**:: Lead``, ``🎯 Goal:: v2``): data about the note, not its prose. Its key is
# at most three words of 30 characters, ``::`` and a space or the line's end after it
# (``std::vector`` is prose), a bracketed ``[due:: x]`` inside a sentence prose too.
_FIELD_LINE = re.compile(
    r"(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[.\]\s+)?"  # a quote, a list item, a task
    r"(?:\*\*|__|[*_`~])?([^\s:*_`~\[\]][^:*_`~\[\]]{0,29}?)(?:\*\*|__|[*_`~])?::(?:\s|$)"
)


def plain_text(markdown: str) -> str:
    """Inline markdown reduced to what a reader sees (links -> their text)."""

    def wiki(m: re.Match[str]) -> str:
        return m.group(2) or posixpath.basename(m.group(1).strip())

    code: list[str] = []

    def keep(m: re.Match[str]) -> str:
        code.append(m.group(2).strip() or m.group(2))
        return f"\ue000{len(code) - 1}\ue001"

    text = _CODE_SPAN.sub(keep, markdown.replace("\ue000", "").replace("\ue001", ""))
    text = _WIKI_DISPLAY.sub(wiki, text)
    text = _MD_DISPLAY.sub(lambda m: m.group(1), text)
    for _ in range(2):
        text = _EMPHASIS.sub(lambda m: m.group(2) if m.group(1) else m.group(4), text)
    text = _KEPT.sub(lambda m: code[int(m.group(1))], text)
    return " ".join(text.split())


def _summary(fm: dict[str, Any], body: str) -> str:
    for name in ("summary", "description"):
        value = fm.get(name)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return _clip(" ".join(str(value).split()))
    paragraph = first_paragraph(body)
    if not paragraph:
        return ""
    return _clip(first_sentence(plain_text(paragraph)))


def first_sentence(text: str) -> str:
    """``text`` to the end of its first sentence: a period (! ?) and a space before a
    capital of any script, a digit, a letter of a script without case (Arabic, Hebrew,
    CJK) or an opening quote — not after a day's ordinal or an initial; or a CJK full
    stop (。！？) with more text after it."""
    for m in _SENTENCE_END.finditer(text):
        nxt = m.group(1)
        if nxt is None:  # a CJK full stop
            if m.end() < len(text):
                return text[: m.end()]
            continue
        if nxt.islower() or not (nxt.isalnum() or nxt in _OPENS):
            continue
        if m.group().startswith(".") and _held(text, m.start(), m.start(1)):
            continue
        return text[: m.end()]
    return text


def _held(text: str, period: int, after: int) -> bool:
    """Whether the period at ``period`` ends a word that does not end its sentence
    (``_ORDINAL`` before a month, a ``_LETTER`` after or before another); the word
    after it begins at ``after``. Reads a few characters either side: linear in all."""
    before = text[max(0, period - 8) : period]
    if period > 8:  # the window's start is no start of the text: a character no word has
        before = "\x00" + before[1:]
    word = _NEXT_WORD.match(text, after, after + 12)
    if _ORDINAL.search(before):
        return bool(word and word.group().lower() in _MONTHS)
    if not _LETTER.search(before):
        return False
    return bool(_INITIALS.search(before)) or bool(
        word and len(word.group()) == 1 and text.startswith(".", word.end())
    )


def cut_otherwise(summary: str) -> bool:
    """Whether a summary stored before schema 12 (SQLite; 11 on PostgreSQL) may be cut
    otherwise now: it holds a sentence end ``first_sentence`` finds (before Ü, Ж, a CJK
    full stop), or ends where it no longer ends (am 3.)."""
    if not summary or (summary.isascii() and "." not in summary):
        return False
    if first_sentence(summary) != summary:
        return True
    # ended where it may not end now: the next word is not stored, so read again
    tail = summary[-8:-1]
    return summary.endswith(".") and bool(_ORDINAL.search(tail) or _LETTER.search(tail))


def first_paragraph(body: str) -> str:
    """The first paragraph of prose: no headings, code, comments, tables, rules."""
    masked = mask_code(body)
    para: list[str] = []
    in_comment = False
    for line, mline in zip(split_lines(body), split_lines(masked), strict=True):
        stripped = line.strip()
        if in_comment:
            in_comment = "-->" not in stripped
            continue
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            if para:
                break
            continue
        skip = (
            not stripped
            or not mline.strip()  # code
            or stripped.startswith(("#", "|", "![[", "%%"))
            or set(stripped) <= set("-*_= ")
            or _is_field(stripped)
        )
        if skip:
            if para:
                break
            continue
        stripped = re.sub(r"^(?:[-*+]|\d+[.)])\s+(?:\[.\]\s+)?", "", stripped)
        stripped = re.sub(r"^>\s*(?:\[![^\]]*\]\s*)?", "", stripped)
        para.append(_BLOCK_ID.sub("", stripped))
        if line.lstrip().startswith(("-", "*", "+")) or re.match(r"\s*\d+[.)]\s", line):
            break  # a list item is a paragraph of its own
    return " ".join(para)


def _is_field(line: str) -> bool:
    """Whether ``line`` is a Dataview field line (``_FIELD_LINE``)."""
    m = _FIELD_LINE.match(line)
    return m is not None and len(m.group(1).split()) <= 3


def _clip(text: str) -> str:
    if len(text) <= SUMMARY_MAX:
        return text
    cut = text[: grapheme_cut(text, SUMMARY_MAX - 1)]
    space = cut.rfind(" ")
    if space > SUMMARY_MAX // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


# what an inline tag needs, at least: a '#' before neither space nor '#' (a heading's)
_TAG_START = re.compile(r"#[^\s#]")
_INLINE_TAG = re.compile(
    r"(?<![\w/&#\]\[])#([^\s#!-/:-@\[-^`{-~][^\s!-,./:-@\[-^`{-~]*(?:/[^\s!-,./:-@\[-^`{-~]+)*)"
)


def _tags(fm: dict[str, Any], masked: str, body_line: int, text: str) -> tuple[str, ...]:
    found: list[str] = []
    for name in ("tags", "tag"):
        value = fm.get(name)
        if isinstance(value, str):
            found += [t for t in re.split(r"[,\s]+", value) if t]
        elif isinstance(value, list):
            found += [str(t).strip() for t in value if t is not None and str(t).strip()]
    if not _TAG_START.search(masked):
        return _distinct_tags(found)  # no '#' before a character a tag can start with
    body_masked = "\n".join(split_lines(masked)[body_line - 1 :])
    # links are not tags: [[note#heading]] and [text](#anchor)
    body_masked = _WIKI_DISPLAY.sub(lambda m: " " * len(m.group(0)), body_masked)
    body_masked = _MD_DISPLAY.sub(lambda m: " " * len(m.group(0)), body_masked)
    for m in _INLINE_TAG.finditer(body_masked):
        tag = m.group(1)
        if not tag.replace("/", "").isdigit():
            found.append(tag)
    return _distinct_tags(found)


def _distinct_tags(found: list[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for tag in found:
        tag = tag.lstrip("#").strip()
        if tag and tag.casefold() not in seen:
            seen[tag.casefold()] = tag
    return tuple(seen.values())


def _aliases(fm: dict[str, Any]) -> tuple[str, ...]:
    out: list[str] = []
    for name in ("aliases", "alias"):
        value = fm.get(name)
        if isinstance(value, str):
            out += [a.strip() for a in value.split(",") if a.strip()]
        elif isinstance(value, list):
            out += [str(a).strip() for a in value if a is not None and str(a).strip()]
    return tuple(dict.fromkeys(out))
