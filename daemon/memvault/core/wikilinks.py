"""Find, resolve and rewrite links the way Obsidian does.

Forms found: ``[[target]]``, ``[[target|alias]]``, ``[[target#heading]]``,
``[[target#^block]]``, ``[[#heading]]``, ``![[embed]]`` and markdown links
``[text](folder/note.md#heading)`` / ``![alt](<Attachments/a b.png>)`` to any
file (a target with a URL scheme or only ``#anchor`` is not an internal link).
Nothing inside code, math or HTML comments counts (``core/markup.py``; what
Obsidian reads where, with sources: docs/LINKS.md).

Resolution (``LinkIndex.resolve``), for a link written in note ``source``:

1. the target as a path from the vault root (``.md`` added when the target has
   none), compared case-insensitively (NFC, then lower case as JavaScript's
   ``toLowerCase``: ``key``);
2. the target relative to the source note's folder (``../other/note``);
3. by file name (or by path suffix when the target holds a ``/``),
   case-insensitively: one match resolves; several are *ambiguous* unless exactly
   one sits in the source note's own folder;
4. by a frontmatter alias: Obsidian itself does not follow these (it shows
   the link unresolved), so the verdict is ``alias``, reported separately.

Ambiguous and unresolved links are reported as such, never resolved to a guess.

Rewriting links after a rename: ``core/relink.py``.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from memvault.core.anchors import heading_key as heading_key
from memvault.core.markup import mask_inert
from memvault.core.text import js_trim, trim_proof

Verdict = Literal["resolved", "alias", "ambiguous", "unresolved"]
LinkFormat = Literal["shortest", "relative", "absolute"]
LINK_FORMATS: tuple[LinkFormat, ...] = ("shortest", "relative", "absolute")

# Characters Obsidian refuses in linkable file names.
LINK_UNSAFE_CHARS = frozenset("#|^[]")

_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]*?)\]\]")
_MD = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]+>|[^\s()<>]+(?:\([^\s()]*\))?[^\s()<>]*)(\s+\"[^\"\n]*\")?\s*\)"
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# _WIKI without its optional "!": a pattern that opens with a literal is searched for
# as one (unfiled_links runs on every text a model embeds)
_WIKI_INNER = re.compile(r"\[\[([^\[\]\n]*)\]\]")


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
    angle: bool = False  # a markdown link written <with literal spaces>


@dataclass(frozen=True, slots=True)
class Resolution:
    verdict: Verdict
    path: str | None = None
    candidates: tuple[str, ...] = ()


def mask_code(text: str) -> str:
    """The text with code, math and HTML comments blanked, offsets kept
    (``markup.mask_inert``; kept under this name for its callers)."""
    return mask_inert(text)


def find_links(text: str, masked: str | None = None) -> list[Link]:
    """Every link in the text, in order; none from inside code, math or comments.

    ``masked`` is ``mask_inert(text)`` when the caller has it already."""
    if masked is None:
        masked = mask_inert(text)
    found: list[Link] = []
    line_starts = line_start_offsets(text)
    for m in _WIKI.finditer(masked):
        found.append(_wiki_link(text, m, line_starts))
    starts = [link.start for link in found]  # wikilinks are found in order and never overlap
    for m in _MD.finditer(masked):
        k = bisect.bisect_right(starts, m.start()) - 1
        if k >= 0 and m.start() < found[k].end:
            continue  # a markdown link inside a wikilink
        link = _md_link(text, m, line_starts)
        if link is not None:
            found.append(link)
    found.sort(key=lambda link: link.start)
    return found


def unfiled_links(text: str) -> str:
    """The text with each link's folders below its first dropped, for the embedding
    model; the link is kept as written otherwise: ``[[projects/alpha/plan#Risks|the
    risks]]`` -> ``[[projects/plan#Risks|the risks]]``, ``[x](../projects/alpha/y.md)``
    -> ``[x](../projects/y.md)``; ``[[people/ana]]``, ``![[Attachments/d.png]]``,
    ``[[ana#Role]]`` as written. A folder inside a category (a project's, a year's) is
    where a note is filed, and renaming it rewrites every link into it: with those
    folders dropped, no embedded text changes and the linking chunks keep their
    vectors. The first folder stays: it names what a note is (``people/``,
    ``Obsidian Sync/``), and dropping it cost recall (bench/RESULTS.md: LoCoMo's
    ``[[people/...]]``), as did showing a link by its name alone. URLs stay as
    written; code is not told apart (this is the text a model reads, not a link
    that is followed). Never longer than the text as written."""
    if "/" not in text or ("](" not in text and "[[" not in text):
        return text
    if "[[" in text:
        text = _WIKI_INNER.sub(_wiki_unfiled, text)
    if "](" in text:
        text = _MD.sub(_md_unfiled, text)
    return text


def _below_first(path: str) -> str:
    """``a/b/c/name`` -> ``a/name``; leading ``./`` and ``../`` kept, with the first
    folder after them; a path of one folder or none as it is."""
    start = 0
    while path.startswith(("./", "../"), start):
        start = path.index("/", start) + 1
    first = path.find("/", start)
    last = path.rfind("/")
    if first < 0 or first == last:
        return path
    return path[: first + 1] + path[last + 1 :]


def _wiki_unfiled(m: re.Match[str]) -> str:
    inner = m.group(1)
    cut = len(inner)
    for mark in ("|", "#"):
        at = inner.find(mark, 0, cut)
        if at >= 0:
            cut = at
    if inner.count("/", 0, cut) < 2:
        return m.group(0)
    return f"[[{_below_first(inner[:cut])}{inner[cut:]}]]"


def _md_unfiled(m: re.Match[str]) -> str:
    raw = m.group(3)
    if raw.count("/") < 2 or _SCHEME.match(raw.removeprefix("<")):
        return m.group(0)  # a URL, or at most one folder: as written
    angle = raw.startswith("<")
    body = raw[1:] if angle else raw
    cut = body.find("#")
    cut = len(body) if cut < 0 else cut
    dest = ("<" if angle else "") + _below_first(body[:cut]) + body[cut:]
    whole = m.group(0)
    base = m.start(0)
    return whole[: m.start(3) - base] + dest + whole[m.end(3) - base :]


def address_parts(address: str) -> tuple[str, str | None] | None:
    """A note's address as an agent pastes it from a context or MEMORY.md —
    ``[[people/ana#Role|Ana]]``, ``![[...]]``, ``people/ana#Role`` — as (target, anchor),
    read by the same parser as links in notes; None when it is not one link."""
    text = js_trim(address).removeprefix("!")
    if not (text.startswith("[[") and text.endswith("]]")):
        text = f"[[{text}]]"
    links = find_links(text)
    if len(links) != 1 or (links[0].start, links[0].end) != (0, len(text)):
        return None
    return links[0].target, links[0].anchor or None


def line_start_offsets(text: str) -> list[int]:
    """Where each line of ``text`` starts (offsets; the first is 0)."""
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
        target=js_trim(path_part),
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
    angle = raw.startswith("<")
    if angle:
        raw_start, raw_end = raw_start + 1, raw_end - 1
        raw = raw[1:-1]
    if _SCHEME.match(raw) or not raw or raw.startswith("#"):
        return None  # a URL, or an anchor in this note
    path_raw, _, anchor_raw = raw.partition("#")
    path = unicodedata.normalize("NFC", decode_uri(path_raw))
    anchor = decode_uri(anchor_raw) if anchor_raw else None
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
        angle=angle,
    )


_URI_RESERVED = frozenset(";/?:@&=+$,#")


def decode_uri(raw: str) -> str:
    """JavaScript's ``decodeURI``, which Obsidian applies to markdown link targets:
    ``%XX`` sequences of UTF-8 are decoded, except those of ``;/?:@&=+$,#``; a
    malformed sequence leaves the text as written."""
    if "%" not in raw:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        if raw[i] != "%":
            out.append(raw[i])
            i += 1
            continue
        first = _hex_byte(raw, i)
        if first is None:
            return raw
        size = 1 if first < 0x80 else 2 if first >> 5 == 6 else 3 if first >> 4 == 14 else 4
        data = bytearray([first])
        for k in range(1, size):
            nxt = _hex_byte(raw, i + 3 * k)
            if nxt is None:
                return raw
            data.append(nxt)
        try:
            ch = data.decode("utf-8")
        except UnicodeDecodeError:
            return raw
        out.append(raw[i : i + 3] if ch in _URI_RESERVED else ch)
        i += 3 * size
    return "".join(out)


def _hex_byte(raw: str, i: int) -> int | None:
    if i + 3 > len(raw) or raw[i] != "%" or not _HEX2.fullmatch(raw, i + 1, i + 3):
        return None
    return int(raw[i + 1 : i + 3], 16)


_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")


def key(path: str) -> str:
    """How Obsidian compares link paths: Unicode NFC, lower case as JavaScript's
    ``toLowerCase`` gives it (Python's ``lower``: the same Unicode mappings, İ as i and a
    dot), not case folding: ``[[STRASSE]]`` is no link to ``Straße.md`` there, and
    ``Masse.md`` and ``Maße.md`` are two names. Final sigma is the one fold kept (ς as
    σ): lower case gives Σ as ς only at a word's end, and ``ΟΔΟΣ.md`` ends no word where
    ``[[ΟΔΟΣ]]`` does. A path that is its own key is returned as it is: the link index
    keys every file by it, and a copy of each path is ~7 MB of a 100,000-note daemon.
    (ASCII is its own NFC form and has no sigma: its lower case, no more asked; a link
    index of 100,000 paths is built in each write with no daemon.)"""
    if path.isascii():
        k = path.lower()
        return path if k == path else k
    k = unicodedata.normalize("NFC", path).lower()
    if "ς" in k:
        k = k.replace("ς", "σ")
    return path if k == path else k


def folds_apart(text: str) -> bool:
    """Whether case folding and ``key`` differ on ``text`` (ß, ẞ, a ligature...):
    memvault compared link paths folded before schema 10 (SQLite; 9 on PostgreSQL), so
    a link or a file of such a name may hold a stale verdict."""
    if text.isascii():
        return False
    nfc = unicodedata.normalize("NFC", text)
    return nfc.casefold() != key(nfc)


def link_name(target: str) -> str:
    """The last name of a link's target or of a file's path as Obsidian compares it
    (``key``), ``.md`` dropped: a link can lead to a file only when their names are
    the same (``LinkIndex.resolve``), so a file coming or going changes where the links
    of its name lead, and no other (the links table's ``name`` column)."""
    name = posixpath.basename(js_trim(unicodedata.normalize("NFC", target)).rstrip("/"))
    k = key(name)
    return k[:-3] if k.endswith(".md") else k


def file_link_name(path: str) -> str:
    """``link_name`` of the file at ``path``: its last name as it is, not trimmed (a link's
    target is read trimmed, a file's name is not). `` Lead.md`` at the vault root is
    `` lead``, the name of ``[[/ Lead.md]]`` (``trim_proof``), the one link leading there;
    taken as a target, its path trimmed, it was ``lead``, so its rename or its going
    never followed that link (``moved_names``, ``link_verdicts``)."""
    k = key(posixpath.basename(unicodedata.normalize("NFC", path)))
    return k[:-3] if k.endswith(".md") else k


def link_safe(path: str) -> bool:
    """Whether Obsidian can link to a note at this path."""
    return not (LINK_UNSAFE_CHARS & set(path))


OVERLAY_FOLD = 1024  # files ``LinkIndex.with_files`` keeps apart before folding them in


class LinkIndex:
    """All files of a vault, for resolving links (built from paths, pure)."""

    def __init__(self, files: Iterable[str], aliases: Mapping[str, Sequence[str]] | None = None):
        self._by_path: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        # what ``with_files`` added, over the two above (shared with the index it grew
        # from, never changed): a new note costs the overlay's copy, not the vault's
        self._more_path: dict[str, str] = {}
        self._more_name: dict[str, list[str]] = {}
        # keys several files share (``People/Ana.md`` and ``People/ANA.md``: ext4 holds
        # both, a git pull brings both): each spelling of theirs, sorted (rare, so small)
        self._twins: dict[str, tuple[str, ...]] = {}
        by_path, by_name = self._by_path, self._by_name
        for path in sorted(set(files)):  # a path given twice is one file, not its own twin
            k = key(path)
            if (had := by_path.get(k)) is not None:
                self._twins[k] = (*self._twins.get(k, (had,)), path)
            by_path[k] = path
            by_name[key(path.rpartition("/")[2])].append(path)  # (posixpath.basename)
        self._by_alias: dict[str, list[str]] = defaultdict(list)
        self._aliases: dict[str, tuple[str, ...]] = {}  # path -> its aliases, as given
        for path, names in (aliases or {}).items():
            if names:
                self._aliases[path] = tuple(names)
            for name in names:
                self._by_alias[key(js_trim(name))].append(path)

    def aliases_of(self, path: str) -> tuple[str, ...]:
        """The aliases this index was built with for ``path`` (none: ``()``)."""
        return self._aliases.get(path, ())

    def __contains__(self, path: str) -> bool:
        """Whether ``path``, spelt so (its Unicode form aside), is one of the files: the
        bookkeeping's question (did a file come, is it still there), never resolution's.
        ``People/ana.md`` beside ``People/Ana.md`` is another file, though a link may
        lead to either: taken for the one there, a twin that came was never added."""
        k = key(path)
        hit = self._path(k)
        if hit is None or hit == path:
            return hit is not None
        nfc = unicodedata.normalize("NFC", path)
        return any(unicodedata.normalize("NFC", p) == nfc for p in self._twins.get(k, (hit,)))

    def _path(self, k: str) -> str | None:
        hit = self._more_path.get(k)
        return hit if hit is not None else self._by_path.get(k)

    def _spelt(self, written: str) -> Resolution | None:
        """Where a path written from the root (or joined to a folder) leads: its file, or
        of files whose paths differ only by case the one spelt so (Obsidian looks the path
        up as written first), else none of them: ambiguous, never the last in order."""
        k = key(written)
        hit = self._path(k)
        if hit is None:
            return None
        twins = self._twins.get(k)
        if twins is None:
            return Resolution("resolved", hit)
        exact = unicodedata.normalize("NFC", written)
        for path in twins:
            if unicodedata.normalize("NFC", path) == exact:
                return Resolution("resolved", path)
        return Resolution("ambiguous", None, twins)

    def _names(self, k: str) -> list[str] | None:
        got = self._more_name.get(k)
        return got if got is not None else self._by_name.get(k)

    def with_files(self, files: Iterable[str]) -> LinkIndex:
        """This index with ``files`` (having no aliases) among those it was built from: the
        same answers as building it afresh, at the cost of the files added (a save of a
        new note in a vault of 100,000 no longer copies its 100,000 paths: the additions
        sit in an overlay, folded in once it holds ``OVERLAY_FOLD`` files). ``self`` is
        unchanged."""
        added = list(files)
        out = LinkIndex(())
        out._by_alias = self._by_alias
        out._aliases = self._aliases
        out._twins = self._twins
        if len(self._more_path) + len(added) > OVERLAY_FOLD:
            out._by_path = {**self._by_path, **self._more_path}
            out._by_name = defaultdict(list, {**self._by_name, **self._more_name})
        else:
            out._by_path, out._by_name = self._by_path, self._by_name
            out._more_path, out._more_name = dict(self._more_path), dict(self._more_name)
        for path in added:
            k = key(path)
            had = out._path(k)  # the same key twice: both kept, as twins (``_spelt``)
            out._more_path[k] = max(had, path) if had is not None else path
            if had is not None and had != path:
                if out._twins is self._twins:
                    out._twins = dict(self._twins)  # not shared: ``self`` is unchanged
                out._twins[k] = tuple(sorted({*out._twins.get(k, (had,)), path}))
            name = key(posixpath.basename(path))
            names = out._more_name[name] = list(out._names(name) or ())  # lists not shared
            if path not in names:
                bisect.insort(names, path)
        return out

    def resolve(self, target: str, source: str) -> Resolution:
        """Where a link written in ``source`` leads (see the module docstring)."""
        t = js_trim(unicodedata.normalize("NFC", target))
        if not t:
            return Resolution("resolved", source)
        t = t.lstrip("/")
        variants = [t] if t.lower().endswith(".md") else [t + ".md", t]
        for v in variants:
            if found := self._spelt(v):
                return found
        folder = posixpath.dirname(source)
        for v in variants:
            joined = posixpath.normpath(posixpath.join(folder, v))
            if not joined.startswith("..") and (found := self._spelt(joined)):
                return found
        for v in variants:
            name = v.rsplit("/", 1)[-1]
            matches = self._names(key(name)) or []
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

    def name_matches(self, name: str) -> list[str]:
        """Files a bare name leads to (Obsidian's ``getLinkpathDest`` for a link with
        no folder): files named exactly ``name``, else ``name.md``; case-insensitive."""
        return list(self._names(key(name)) or self._names(key(name + ".md")) or [])

    def link_text(
        self, path: str, source: str, link_format: LinkFormat = "shortest", *, omit_md: bool = True
    ) -> str:
        """The link Obsidian writes from ``source`` to ``path`` (``fileToLinktext``).

        ``shortest``: the file name when no other file in the vault has it
        (case-insensitively), else the full vault path — never a partial path,
        and never a name that only resolves by a same-folder tie-break;
        ``relative``: ``../`` steps up from the source's folder, then down;
        ``absolute``: the full vault path. ``omit_md`` drops a note's ``.md``
        (wikilinks); markdown links keep it.
        """
        full = path[:-3] if omit_md and path.endswith(".md") else path  # a NOTE.MD's kept
        if link_format == "absolute":
            return trim_proof(full, path)
        if link_format == "relative":
            prefix, folder = "", posixpath.dirname(source)
            while folder and not full.startswith(folder + "/"):
                prefix, folder = "../" + prefix, posixpath.dirname(folder)
            return trim_proof(prefix + (full[len(folder) + 1 :] if folder else full), path)
        name = posixpath.basename(full)
        return trim_proof(name if self.name_matches(name) == [path] else full, path)
