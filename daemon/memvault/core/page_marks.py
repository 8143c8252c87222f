"""The marks that let a page of a directory's listing see that its numbers shifted.

A ``view_range`` on a directory (memvault's paging, ``core.memory_views``) is stateless:
``[41, 80]`` names the 41st entry, and a note written, moved or deleted between two pages
shifts every number past it, so the next page repeats an entry or skips one (a note read
on page one, moved out: the 41st is what was the 42nd; an unread note edited: it is the
newest, on page one, never listed). The command for a next page carries, as its second
number (which a directory's page does not otherwise read), the mark of the entries
numbered before it: a 7-digit checksum of their paths, whatever their order among
themselves. The page checks it against the entries before it now and says at its top
when they differ (a command now past the last entry says it in its refusal); it names
both causes, as a mark kept with another first number differs too. Detected, not
prevented: a range of two numbers can name no note to start from, and the SDK's command
has no other field. A range an agent writes itself (``[41, 80]``: no mark) is not checked.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

MARKS = range(1_000_000, 10_000_000)  # 7 digits: past any page's last entry a range names


@dataclass(frozen=True, slots=True)
class Marks:
    """The marks of a directory's numbering (its notes, then its folders, then its files
    not notes, as a ``view_range`` numbers them): ``marks(at)`` is the mark of the entries
    before ``at``, the same whatever their order among themselves (a note read on an
    earlier page and edited since moves to the top: no entry shifts past the reader)."""

    sums: tuple[int, ...]  # sums[i]: of the checksums of the first i paths

    @classmethod
    def of(cls, rels: Iterable[str]) -> Marks:
        sums, total = [0], 0
        for rel in rels:
            total += zlib.crc32(rel.encode("utf-8", "surrogatepass"))
            sums.append(total)
        return cls(tuple(sums))

    def __call__(self, at: int) -> int:
        n = max(0, min(at - 1, len(self.sums) - 1))
        return MARKS.start + (self.sums[n] * 1_000_003 + n) % len(MARKS)

    def shifted(self, path: str, first: int, mark: int | None, page: int) -> str:
        """What a page from ``first`` says at its top, or its refusal past the last entry
        at its end, when ``mark``, its command's, is not the mark of the entries before it
        now; "" when it is, or no mark was given (``page``: the entries a page lists, for
        the command that lists them again). It names both causes: the entries changed
        since the page that gave the command, or the mark is another page's (an agent
        that kept ``5598068`` and changed the first number: no entry moved)."""
        if mark is None or mark not in MARKS or first <= 1 or self(first) == mark:
            return ""
        return (
            f"(The entries numbered before {first} are not those this command's mark "
            f"({mark}, its second number) was given for: a note was written, moved or "
            "deleted since, or the mark is another page's. The numbers may have shifted, "
            f"repeating or skipping an entry: view {path} with view_range [1, {page}] "
            "lists them from the first again.)"
        )


__all__ = ["MARKS", "Marks"]
