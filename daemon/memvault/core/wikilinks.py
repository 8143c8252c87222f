"""Find, resolve and rewrite links the way Obsidian does.

Forms found: ``[[target]]``, ``[[target|alias]]``, ``[[target#heading]]``,
``[[target#^block]]``, ``[[#heading]]``, ``![[embed]]`` and markdown links to
notes ``[text](folder/note.md#heading)``. Nothing inside fenced code blocks or
inline code counts.

Resolution (``LinkIndex.resolve``), for a link written in note ``source``:

1. the target as a path from the vault root (``.md`` added when the target has
   none), compared case-insensitively;
2. the target relative to the source note's folder (``../other/note``);
3. by file name (or by path suffix when the target holds a ``/``),
   case-insensitively: one match resolves; several are *ambiguous* unless exactly
   one sits in the source note's own folder;
4. by a frontmatter alias: Obsidian itself does not follow these (it shows
   the link unresolved), so the verdict is ``alias``, reported separately.

Ambiguous and unresolved links are reported as such, never resolved to a guess.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["resolved", "alias", "ambiguous", "unresolved"]

# Characters Obsidian refuses in linkable file names.
LINK_UNSAFE_CHARS = frozenset("#|^[]")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]*?)\]\]")
_MD = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]+>|[^\s()<>]+(?:\([^\s()]*\))?[^\s()<>]*)(\s+\"[^\"\n]*\")?\s*\)"
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written. Offsets index the text it was found in."""

    kind: Literal["wiki", "markdown"]
    target: str  # path part, decoded ('' for [[#heading]])
    anchor: str | None  # 'Heading' or '^block' (without the '#')
    alias: str | None  # display text
    embed: bool
    line: int  # 1-based
    start: int
    end: int
    target_start: int  # the raw bytes a rewrite replaces
    target_end: int

    @property
    def is_block(self) -> bool:
        return bool(self.anchor and self.anchor.startswith("^"))


@dataclass(frozen=True, slots=True)
class Resolution:
    verdict: Verdict
    path: str | None = None
    candidates: tuple[str, ...] = ()


def mask_code(text: str) -> str:
    """The text with fenced code and inline code spans blanked out.

    Lengths and newlines are kept, so offsets found in the result index the
    original text.
    """
    out = list(text)
    pos = 0
    fence: tuple[str, int] | None = None
    fence_start = 0
    for line in text.split("\n"):
        end = pos + len(line)
        m = _FENCE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)))
                fence_start = pos
        else:
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= fence[1]
                and not m.group(2).strip()
            ):
                _blank(out, fence_start, end)
                fence = None
        pos = end + 1
    if fence is not None:
        _blank(out, fence_start, len(text))
    masked = "".join(out)
    return _mask_inline(masked)


def _mask_inline(text: str) -> str:
    out = list(text)
    i = 0
    n = len(text)
    while i < n:
        if text[i] != "`":
            i += 1
            continue
        j = i
        while j < n and text[j] == "`":
            j += 1
        run = j - i
        k = j
        close = -1
        while k < n:
            nxt = text.find("`" * run, k)
            if nxt < 0:
                break
            stop = nxt + run
            if (stop >= n or text[stop] != "`") and text[nxt - 1] != "`":
                close = nxt
                break
            while nxt < n and text[nxt] == "`":
                nxt += 1
            k = nxt
        if close < 0 or "\n\n" in text[j:close] or "\n\r\n" in text[j:close]:
            i = j
            continue
        _blank(out, i, close + run)
        i = close + run
    return "".join(out)


def _blank(out: list[str], start: int, end: int) -> None:
    for k in range(start, end):
        if out[k] not in "\r\n":
            out[k] = " "


def find_links(text: str) -> list[Link]:
    """Every link in the text, in order; none from inside code."""
    masked = mask_code(text)
    found: list[Link] = []
    line_starts = _line_starts(text)
    for m in _WIKI.finditer(masked):
        found.append(_wiki_link(text, m, line_starts))
    wiki_spans = [(link.start, link.end) for link in found]
    for m in _MD.finditer(masked):
        if any(s <= m.start() < e for s, e in wiki_spans):
            continue
        link = _md_link(text, m, line_starts)
        if link is not None:
            found.append(link)
    found.sort(key=lambda link: link.start)
    return found


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _line_of(line_starts: list[int], offset: int) -> int:
    lo, hi = 0, len(line_starts)
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if line_starts[mid] <= offset:
            lo = mid
        else:
            hi = mid
    return lo + 1


def _wiki_link(text: str, m: re.Match[str], line_starts: list[int]) -> Link:
    inner_start = m.start(2)
    inner = text[m.start(2) : m.end(2)]
    alias: str | None = None
    pipe = inner.find("|")
    target_part = inner
    if pipe >= 0:
        target_part, alias = inner[:pipe], inner[pipe + 1 :]
        if target_part.endswith("\\"):  # [[note\|alias]] inside a table
            target_part = target_part[:-1]
    anchor: str | None = None
    hash_at = target_part.find("#")
    path_part = target_part
    if hash_at >= 0:
        path_part, anchor = target_part[:hash_at], target_part[hash_at + 1 :].strip()
    return Link(
        kind="wiki",
        target=path_part.strip(),
        anchor=anchor,
        alias=alias,
        embed=m.group(1) == "!",
        line=_line_of(line_starts, m.start()),
        start=m.start(),
        end=m.end(),
        target_start=inner_start,
        target_end=inner_start + len(path_part),
    )


def _md_link(text: str, m: re.Match[str], line_starts: list[int]) -> Link | None:
    raw_start, raw_end = m.start(3), m.end(3)
    raw = text[raw_start:raw_end]
    if raw.startswith("<"):
        raw_start, raw_end = raw_start + 1, raw_end - 1
        raw = raw[1:-1]
    if _SCHEME.match(raw) or raw.startswith("#"):
        return None
    path_raw, _, anchor_raw = raw.partition("#")
    path = urllib.parse.unquote(path_raw)
    if not path.lower().endswith(".md"):
        return None
    anchor = urllib.parse.unquote(anchor_raw) if anchor_raw else None
    return Link(
        kind="markdown",
        target=path,
        anchor=anchor,
        alias=text[m.start(2) : m.end(2)],
        embed=m.group(1) == "!",
        line=_line_of(line_starts, m.start()),
        start=m.start(),
        end=m.end(),
        target_start=raw_start,
        target_end=raw_start + len(path_raw),
    )


def key(path: str) -> str:
    """How Obsidian compares link paths: Unicode NFC, case-insensitive."""
    return unicodedata.normalize("NFC", path).casefold()


def link_safe(path: str) -> bool:
    """Whether Obsidian can link to a note at this path."""
    return not (LINK_UNSAFE_CHARS & set(path))


class LinkIndex:
    """All files of a vault, for resolving links (built from paths, pure)."""

    def __init__(self, files: Iterable[str], aliases: Mapping[str, Sequence[str]] | None = None):
        self._by_path: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in sorted(files):
            self._by_path[key(path)] = path
            self._by_name[key(posixpath.basename(path))].append(path)
        self._by_alias: dict[str, list[str]] = defaultdict(list)
        for path, names in (aliases or {}).items():
            for name in names:
                self._by_alias[key(name.strip())].append(path)

    def __contains__(self, path: str) -> bool:
        return key(path) in self._by_path

    def resolve(self, target: str, source: str) -> Resolution:
        """Where a link written in ``source`` leads (see the module docstring)."""
        t = unicodedata.normalize("NFC", target).strip()
        if not t:
            return Resolution("resolved", source)
        t = t.lstrip("/")
        variants = [t] if t.lower().endswith(".md") else [t + ".md", t]
        for v in variants:
            hit = self._by_path.get(key(v))
            if hit:
                return Resolution("resolved", hit)
        folder = posixpath.dirname(source)
        for v in variants:
            joined = posixpath.normpath(posixpath.join(folder, v))
            if not joined.startswith(".."):
                hit = self._by_path.get(key(joined))
                if hit:
                    return Resolution("resolved", hit)
        for v in variants:
            name = v.rsplit("/", 1)[-1]
            matches = self._by_name.get(key(name), [])
            if "/" in v:
                suffix = key("/" + v)
                matches = [p for p in matches if key("/" + p).endswith(suffix)]
            if len(matches) == 1:
                return Resolution("resolved", matches[0])
            if len(matches) > 1:
                local = [p for p in matches if posixpath.dirname(p) == folder]
                if len(local) == 1:
                    return Resolution("resolved", local[0])
                return Resolution("ambiguous", None, tuple(matches))
        if "/" not in t:
            owners = sorted(set(self._by_alias.get(key(t), [])))
            if len(owners) == 1:
                return Resolution("alias", owners[0])
            if owners:
                return Resolution("ambiguous", None, tuple(owners))
        return Resolution("unresolved")

    def shortest_link(self, path: str, source: str) -> str:
        """The shortest wikilink target that leads from ``source`` to ``path``.

        The file name alone when it is unique in the vault (Obsidian's
        "shortest path when possible"), else the full vault path.
        """
        stem = path[:-3] if path.lower().endswith(".md") else path
        name = stem.rsplit("/", 1)[-1]
        if self.resolve(name, source) == Resolution("resolved", path):
            return name
        return stem


def rewrite_links(text: str, replace: Callable[[Link], str | None]) -> str:
    """Replace link targets; every byte outside the replaced targets is kept.

    ``replace`` returns the new raw target (for markdown links: already
    URL-encoded) or None to leave the link alone.
    """
    pieces: list[str] = []
    pos = 0
    for link in find_links(text):
        new = replace(link)
        if new is None or new == text[link.target_start : link.target_end]:
            continue
        pieces.append(text[pos : link.target_start])
        pieces.append(new)
        pos = link.target_end
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


def markdown_target(path: str, source: str, relative: bool) -> str:
    """The raw (URL-encoded) target of a markdown link to ``path``."""
    target = posixpath.relpath(path, posixpath.dirname(source) or ".") if relative else path
    return urllib.parse.quote(target, safe="/")


def heading_key(text: str) -> str:
    """How heading anchors compare: case- and space-insensitive, link-unsafe
    characters dropped (Obsidian strips them when it writes a heading link)."""
    cleaned = "".join(" " if ch in "#|^:%[]" else ch for ch in unicodedata.normalize("NFC", text))
    return " ".join(cleaned.split()).casefold()


def relink(
    text: str,
    source_old: str,
    source_new: str,
    before: LinkIndex,
    after: LinkIndex,
    moves: Mapping[str, str],
) -> str:
    """Re-target the links of one note after files moved.

    A link is rewritten only when it led somewhere before the move and no
    longer leads to the same file (or to where that file went) after it; the
    new target is the shortest one that resolves uniquely, like Obsidian's
    "automatically update internal links". Anchors, aliases and every other
    byte stay as they are.
    """

    def replace(link: Link) -> str | None:
        if not link.target:
            return None  # [[#heading]] points into the note itself
        old = before.resolve(link.target, source_old)
        if old.verdict != "resolved" or old.path is None:
            return None
        expected = moves.get(old.path, old.path)
        new = after.resolve(link.target, source_new)
        if (new.verdict == "resolved" and new.path == expected) or expected not in after:
            return None
        if link.kind == "wiki":
            target = after.shortest_link(expected, source_new)
            if link.target.lower().endswith(".md") and not target.lower().endswith(".md"):
                target += ".md"
            return target
        absolute = key(posixpath.normpath(link.target.lstrip("/"))) == key(old.path)
        return markdown_target(expected, source_new, relative=not absolute)

    return rewrite_links(text, replace)
