"""Where a note's text is markdown prose, and where it is inert: code, math, comments.

``mask_inert(text)`` blanks every region Obsidian does not read links, tags or
headings from, keeping lengths and line breaks, so an offset found in the
result indexes the original text. Blanked (see docs/LINKS.md for the sources):

- fenced code (```` ``` ```` / ``~~~``, also inside list items and quotes; an
  unclosed fence runs to the end of its container);
- indented code: a line indented 4+ columns past its container (a list item's
  content column, else the margin) that does not continue a paragraph;
- ``$$ … $$`` math, as a block (a line starting with ``$$``; unclosed, it runs
  to the end of the note) or inline; inline ``$…$`` math (the opening ``$`` not
  followed by a space, the closing one not preceded by a space nor followed by a
  digit; ``\\$`` is a dollar);
- HTML comments ``<!-- … -->``, as a block (a line starting with ``<!--``;
  unclosed, it runs to the end of the note) or inline;
- inline code spans.

Left as text: YAML frontmatter (Obsidian reads links in properties),
Obsidian comments ``%% … %%`` (its metadata cache indexes the links in them),
other raw HTML. Leftmost wins inline, as in CommonMark: a wikilink that opens
before a backtick or a dollar is a link; one inside a code span is code.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"([-+*]|\d{1,9}[.)])([ \t]+|$)")
_THEMATIC = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"(?: {0,3}>[ \t]?)+")
_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")


# What every inert region needs somewhere in the text: a backtick (code spans, fences),
# ``~~~`` (a fence), a dollar (math), ``<!--`` (a comment), a tab or four spaces (the
# indentation of indented code, in a list or a quote too). A text without any is all
# prose, and is given back as it is (most notes: their mask is then free).
_INERT_OPENERS = ("`", "$", "\t", "~~~", "<!--", "    ")


def may_be_inert(text: str) -> bool:
    """Whether any region of ``text`` can be inert (else its mask is itself)."""
    return any(opener in text for opener in _INERT_OPENERS)


def mask_inert(text: str) -> str:
    """``text`` with code, math and HTML comments blanked (see the module docstring)."""
    if not may_be_inert(text):
        return text
    return _mask_all(text)


def _mask_all(text: str) -> str:
    """The block scan, then the inline one, whatever the text holds."""
    out = list(text)
    _mask_blocks(text, out)
    return _mask_inline("".join(out))


def frontmatter_end(text: str) -> int:
    """Offset just past the closing fence of a YAML frontmatter block (0 when none)."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return 0
    pos = text.find("\n") + 1
    while pos < len(text):
        end = text.find("\n", pos)
        line = text[pos : end if end >= 0 else len(text)]
        if line.rstrip("\r").rstrip() in ("---", "..."):
            return end + 1 if end >= 0 else len(text)
        if end < 0:
            break
        pos = end + 1
    return 0


def _blank(out: list[str], start: int, end: int) -> None:
    if end - start == 1:
        if out[start] not in "\r\n":
            out[start] = " "
        return
    out[start:end] = [" " if c not in "\r\n" else c for c in out[start:end]]


def _columns(s: str) -> tuple[int, int]:
    """(width in columns of the leading whitespace, characters it spans); tabs stop every 4."""
    col = i = 0
    while i < len(s) and s[i] in " \t":
        col = col + 4 - col % 4 if s[i] == "\t" else col + 1
        i += 1
    return col, i


class _Blocks:
    """The line-by-line state of the block scan."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.items: list[int] = []  # content columns of the open list items, innermost last
        self.quote = 0  # blockquote depth of the previous line
        self.paragraph = False  # the previous line was paragraph text
        self.fence: tuple[str, int, int] | None = None  # (char, length, container column)
        self.math = False  # inside a $$ block
        self.comment = False  # inside a <!-- block

    def line(self, text: str, start: int, end: int) -> None:
        if (
            text[start : start + 1].isalpha()
            and self.fence is None
            and not (self.math or self.comment)
        ):
            # most lines of prose: a letter opens no block (no quote, list item, fence,
            # heading, rule, math, comment); the general path below comes to this
            if not self.paragraph:  # not a lazy continuation: the open list items end
                self.items = []
            self.quote = 0
            self.paragraph = True
            return
        body = text[start:end].rstrip("\r")
        quote = _QUOTE.match(body)
        depth = quote.group(0).count(">") if quote else 0
        offset = quote.end() if quote else 0
        if depth != self.quote:
            if not (self.paragraph and depth < self.quote):  # not a lazy quote continuation
                self.items = []
            self.quote = depth
        rest = body[offset:]
        col, skip = _columns(rest)
        blank = skip == len(rest)
        if self.math or self.comment:
            self._continue_span(text, start + offset, start + len(body))
            return
        if self.fence is not None and self._fence_line(rest, col, blank, start, start + len(body)):
            return
        if blank:
            self.paragraph = False
            return
        container = self._container(rest[skip:], col)
        self._content(text, start + offset + skip, start + len(body), col - container)

    def _continue_span(self, text: str, start: int, end: int) -> None:
        closer = "$$" if self.math else "-->"
        at = (
            _find_unescaped(text, closer, start, end)
            if self.math
            else text.find(closer, start, end)
        )
        if at < 0:
            _blank(self.out, start, end)
            return
        _blank(self.out, start, at + len(closer))
        self.math = self.comment = False
        self.paragraph = True  # what follows the closer on the line is text

    def _fence_line(self, rest: str, col: int, blank: bool, start: int, end: int) -> bool:
        """Handle a line while a fence is open; False when the fence ended before it."""
        assert self.fence is not None
        char, length, container = self.fence
        if not blank and container and col < container:
            self.fence = None  # the list item holding the fence ended
            return False
        _blank(self.out, start, end)
        m = _FENCE.match(rest.lstrip(" \t"))
        if (
            m
            and col - container <= 3
            and m.group(1)[0] == char
            and len(m.group(1)) >= length
            and not m.group(2).strip()
        ):
            self.fence = None
        return True

    def _container(self, content: str, col: int) -> int:
        """Close the list items this line is not inside; the content column it is relative to."""
        lazy = self.paragraph and not _starts_block(content)
        while self.items and col < self.items[-1] and not lazy:
            self.items.pop()
        return self.items[-1] if self.items else 0

    def _content(self, text: str, start: int, end: int, rel: int) -> None:
        """Classify the content that starts at ``start`` (``rel`` columns past its container)."""
        content = text[start:end]
        if rel >= 4 and not self.paragraph:
            _blank(self.out, start, end)  # indented code
            return
        if rel <= 3:
            item = _LIST_ITEM.match(content)
            if item and not _THEMATIC.match(content):
                marker_end = (self.items[-1] if self.items else 0) + rel + len(item.group(1))
                col = marker_end
                for ch in item.group(2):  # the gap, in columns (a tab runs to the next stop)
                    col = col + 4 - col % 4 if ch == "\t" else col + 1
                gap = col - marker_end
                self.items.append(marker_end + (gap if 1 <= gap <= 4 else 1))
                self.paragraph = False
                inner = start + item.end()
                if inner < end:
                    self._content(text, inner, end, 0)
                return
            fence = _FENCE.match(content)
            if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
                self.fence = (
                    fence.group(1)[0],
                    len(fence.group(1)),
                    self.items[-1] if self.items else 0,
                )
                _blank(self.out, start, end)
                self.paragraph = False
                return
            if content.startswith("$$"):
                self.math = True
                self._continue_span(text, start + 2, end)
                _blank(self.out, start, start + 2)
                return
            if content.startswith("<!--"):
                self.comment = True
                self._continue_span(text, start + 4, end)
                _blank(self.out, start, start + 4)
                return
            if _ATX.match(content) or _THEMATIC.match(content):
                self.paragraph = False
                return
        self.paragraph = True


def _starts_block(content: str) -> bool:
    """Whether a line's content opens a block instead of continuing a paragraph."""
    return bool(
        _LIST_ITEM.match(content)
        or _FENCE.match(content)
        or _ATX.match(content)
        or _THEMATIC.match(content)
        or content.startswith(("$$", "<!--", ">"))
    )


def _mask_blocks(text: str, out: list[str]) -> None:
    state = _Blocks(out)
    pos = frontmatter_end(text)
    n = len(text)
    while pos < n:
        end = text.find("\n", pos)
        if end < 0:
            end = n
        state.line(text, pos, end)
        pos = end + 1


def _find_unescaped(text: str, needle: str, start: int, end: int) -> int:
    at = text.find(needle, start, end)
    while at >= 0 and _escaped(text, at):
        at = text.find(needle, at + 1, end)
    return at


def _escaped(text: str, at: int) -> bool:
    slashes = 0
    while at - slashes - 1 >= 0 and text[at - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_INLINE_SPECIAL = re.compile(r"[\\`\[\]<$]")
_DESTINATION = re.compile(r"\]\(\s*(?:<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)")


def _mask_inline(text: str) -> str:
    return _Inline(text).run()


class _Inline:
    """Left-to-right scan for code spans, comments, math and wikilinks (leftmost wins).

    Searches for a closer remember where they found one (or that there was
    none), so a paragraph of a thousand unmatched openers costs one pass, not
    a thousand.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.out = list(text)
        self.found: dict[str, tuple[int, int]] = {}  # what -> (searched from, found at or len)

    def next(self, what: str, pos: int) -> int:
        """Where the next ``what`` at or after ``pos`` starts (``len(text)`` when none)."""
        cached = self.found.get(what)
        if cached and cached[0] <= pos <= cached[1]:
            return cached[1]
        text, n = self.text, len(self.text)
        if what.startswith("`"):  # a run of exactly that many backticks
            at = text.find(what, pos)
            while at >= 0:
                stop = at + len(what)
                if (stop >= n or text[stop] != "`") and (at == 0 or text[at - 1] != "`"):
                    break
                while stop < n and text[stop] == "`":
                    stop += 1
                at = text.find(what, stop)
        elif what == "$":  # a dollar that can close inline math
            at = _find_unescaped(text, "$", pos, n)
            while at >= 0 and (text[at - 1] in " \t\r\n" or text[at + 1 : at + 2].isdigit()):
                at = _find_unescaped(text, "$", at + 1, n)
        elif what == "$$":
            at = _find_unescaped(text, "$$", pos, n)
        else:
            at = text.find(what, pos)
        found = n if at < 0 else at
        self.found[what] = (pos, found)
        return found

    def run(self) -> str:
        text, n = self.text, len(self.text)
        i, limit = 0, -1  # limit: where the current paragraph ends, found lazily
        special = _INLINE_SPECIAL.search
        while i < n:
            m = special(text, i)  # the next character that can open or end anything
            if m is None:
                break
            i = m.start()
            ch = text[i]
            if i >= limit:
                m = _BLANK_LINE.search(text, i)
                limit = m.start() if m else n
            if ch == "\\":
                i += 2
            elif ch == "`":
                j = i
                while j < n and text[j] == "`":
                    j += 1
                i = self.span(i, j, "`" * (j - i), limit) if j - i else j
            elif ch == "[":
                i = self.wikilink(i)
            elif ch == "]":
                m = _DESTINATION.match(text, i)  # [a](x$y.md): a path is not math
                i = m.end() if m else i + 1
            elif text.startswith("<!--", i):
                i = self.span(i, i + 4, "-->", limit)
            elif text.startswith("$$", i):
                i = self.span(i, i + 2, "$$", limit)
            elif ch == "$" and i + 1 < n and text[i + 1] not in " \t\r\n$":
                i = self.span(i, i + 1, "$", limit)
            else:
                i += 1
        return "".join(self.out)

    def span(self, start: int, inner: int, closer: str, limit: int) -> int:
        """Blank from ``start`` through ``closer`` when it comes before ``limit``; else skip the opener."""
        at = self.next(closer, inner)
        if at >= limit:
            return inner
        stop = at + len(closer)
        _blank(self.out, start, stop)
        return stop

    def wikilink(self, i: int) -> int:
        """Past a wikilink that opens at ``i`` (it is a link, not code or math); else past ``[``."""
        text = self.text
        if not text.startswith("[[", i):
            return i + 1
        end = self.next("]]", i + 2)
        if end >= min(self.next("\n", i), self.next("[[", i + 2)):
            return i + 1  # not closed on its line, or holds another [[: not a link
        return end + 2
