"""Claude's memory tool against the SDK's reference, on the same inputs: the SDK's own
``BetaLocalFilesystemMemoryTool`` on a folder, ``VaultMemoryTool`` on a vault, both on
the real filesystem, the same commands through each one's ``call()``; the answers are
compared word for word. Where memvault differs on purpose, the test says how."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from helpers import as_the_reference_answers, open_vault
from memvault.api import Vault
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.vault.template import init_vault


@dataclass
class Pair:
    reference: BetaLocalFilesystemMemoryTool
    reference_root: Path  # what /memories is for the reference
    vault: Vault
    tool: VaultMemoryTool

    def both(self, command: dict[str, Any]) -> tuple[tuple[bool, str], tuple[bool, str]]:
        return answer(self.reference, command), answer(self.tool, command)


def answer(tool: Any, command: dict[str, Any]) -> tuple[bool, str]:
    try:
        return True, str(tool.call(command))
    except ToolError as exc:
        return False, str(exc)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "reference"))
    root = tmp_path / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        vault.sync()
        yield Pair(reference, tmp_path / "reference" / "memories", vault, VaultMemoryTool(vault))


FILES = {
    "four.md": "one\ntwo\nthree\nfour",  # 4 lines, no newline at the end
    "five.md": "one\ntwo\nthree\nfour\n",  # the same, ended: a 5th, empty line
    "empty.md": "",
}
RANGES: list[list[Any]] = [
    [1, 2], [2, 4], [4, 4],  # in range
    [10, 20], [4, 10], [5, -1], [6, -1], [5, 5],  # past the end
    [1, -1], [3, -1],  # to the end
    [1], [3], [], [1, 2, 3], ["x"],  # not two elements: the whole file
    [3, 2], [2, 1],  # reversed
    [0, 2], [0, 0], [1, 0], [0, -1],  # zero
    [-3, 2], [-1, -1], [2, -2], [-5, -3],  # negative
    [2**70, 3], [1, 2**70],  # past any file
    ["1", "2"], [True, 3], [1.0, 3],  # what the SDK's call() turns into integers
    [2, None],  # null for the end
]  # fmt: skip


def test_view_range_is_read_as_the_reference_reads_it_on_the_same_files(pair: Pair) -> None:
    """Field test: on a 4-line file [10, 20] was an error (the reference: no lines) and
    [1] was an error (the reference: the whole file)."""
    for name, text in FILES.items():
        command = {"command": "create", "path": f"/memories/{name}", "file_text": text}
        assert (
            pair.both(command) == ((True, f"File created successfully at: /memories/{name}"),) * 2
        )
    for name in FILES:
        for view_range in RANGES:
            command = {"command": "view", "path": f"/memories/{name}", "view_range": view_range}
            reference, mine = pair.both(command)
            assert reference[0], command  # each a shape the reference accepts
            assert mine == reference, command
    # the field test's own two, spelt out
    out = pair.tool.call({"command": "view", "path": "/memories/four.md", "view_range": [10, 20]})
    assert out == "Here's the content of /memories/four.md with line numbers:\n"
    out = pair.tool.call({"command": "view", "path": "/memories/four.md", "view_range": [1]})
    assert str(out).endswith("     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour")


@pytest.mark.parametrize("view_range", [[1.5, 3], [None, 2], [2, "x"], [2, 2.5]])
def test_a_view_range_that_is_not_whole_numbers_is_a_clear_error(
    pair: Pair, view_range: list[Any]
) -> None:
    """The reference fails on these with a Python TypeError (no answer of its own);
    memvault answers what a range is."""
    pair.both({"command": "create", "path": "/memories/four.md", "file_text": FILES["four.md"]})
    command = {"command": "view", "path": "/memories/four.md", "view_range": view_range}
    with pytest.raises(TypeError):
        pair.reference.call(command)
    ok, why = answer(pair.tool, command)
    assert not ok
    assert why.startswith(f"Invalid `view_range`: {view_range}. It should be two whole numbers")


def test_a_folders_view_range_reads_its_shapes_as_a_files_does(pair: Pair) -> None:
    for i in range(3):
        pair.vault.memory_tool({"command": "create", "path": f"/memories/p/n{i}.md",
                                "file_text": f"# N{i}\n"})  # fmt: skip
    first = pair.tool.call({"command": "view", "path": "/memories/p"})
    for view_range in ([1], [], [0, 40], [-3, 40], [1, 2, 3]):
        assert pair.tool.call({"command": "view", "path": "/memories/p",
                               "view_range": view_range}) == first, view_range  # fmt: skip


# -- paths: `.`, `..`, doubled and trailing slashes --------------------------------------------


SESSION: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/a/../notes.md", "file_text": "hi\nthere\n"},
    {"command": "create", "path": "/memories/./dot.md", "file_text": "dot\n"},
    {"command": "create", "path": "/memories//double.md", "file_text": "double\n"},
    {"command": "create", "path": "/memories/trailing.md/", "file_text": "trailing\n"},
    {"command": "create", "path": "/memories/b/c/../../up.md", "file_text": "up\n"},
    {"command": "create", "path": "/memories/../memories/round.md", "file_text": "round\n"},
    {"command": "create", "path": "/memories/x/../notes.md", "file_text": "again\n"},
    {"command": "view", "path": "/memories/./notes.md"},
    {"command": "view", "path": "/memories//notes.md", "view_range": [2, 2]},
    {"command": "view", "path": "/memories/notes.md/"},
    {"command": "view", "path": "/memories/q/../notes.md"},
    {"command": "str_replace", "path": "/memories/q/../notes.md", "old_str": "there",
     "new_str": "you"},
    {"command": "insert", "path": "/memories/./notes.md", "insert_line": 1, "insert_text": "mid"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "rename", "old_path": "/memories/./notes.md", "new_path": "/memories/q/../moved.md"},
    {"command": "view", "path": "/memories/moved.md"},
    {"command": "delete", "path": "/memories/x/../moved.md"},
    {"command": "view", "path": "/memories/moved.md"},
    # refused by both, in the reference's words
    {"command": "create", "path": "/memories/a/../../x.md", "file_text": "x"},
    {"command": "view", "path": "/memories/a/b/../../../x.md"},
    {"command": "create", "path": "/memories/..", "file_text": "x"},
    {"command": "view", "path": "//memories/dot.md"},
    {"command": "delete", "path": "/memories/."},
    {"command": "delete", "path": "/memories/q/.."},
    {"command": "rename", "old_path": "/memories/a/..", "new_path": "/memories/z"},
]  # fmt: skip


def test_dotted_and_doubled_paths_inside_memories_are_resolved_as_the_reference_does(
    pair: Pair,
) -> None:
    """Field test: /memories/a/../notes.md stays inside, and was refused as "would
    escape /memories directory"."""
    for command in SESSION:
        reference, mine = pair.both(command)
        assert as_the_reference_answers(command, mine) == reference, command
    for name in ("dot.md", "double.md", "trailing.md", "up.md", "round.md"):
        assert (pair.vault.root / name).read_bytes() == (pair.reference_root / name).read_bytes()
    assert not (pair.vault.root / "moved.md").exists()
    assert (pair.vault.root / ".trash" / "moved.md").read_text(encoding="utf-8") == (
        "hi\nmid\nyou\n"
    )
    assert not any((pair.vault.root / d).exists() for d in ("a", "b", "q", "x"))
    assert not (pair.vault.root.parent / "x.md").exists()


def test_dot_dot_after_a_symlinked_folder_is_refused_in_plain_words(pair: Pair) -> None:
    """The reference resolves the link before `..`: /memories/link/../x.md is
    deep/x.md when link leads to deep/inner; read as written, it would be x.md.
    memvault does not guess between them."""
    root = pair.vault.root
    (root / "deep" / "inner").mkdir(parents=True)
    (root / "link").symlink_to(root / "deep" / "inner")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    for command in (
        {"command": "create", "path": "/memories/link/../x.md", "file_text": "x"},
        {"command": "view", "path": "/memories/link/../x.md"},
    ):
        ok, why = answer(pair.tool, command)
        assert not ok
        assert why == (
            "Invalid path /memories/link/../x.md: its `..` steps back out of /memories/link, "
            "which is (or is inside) a symlink, so where it leads is not plain; give the path "
            "without `..`"
        )
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_a_percent_encoded_dot_is_refused_in_accurate_words(pair: Pair) -> None:
    """The reference takes %2e%2e as a folder's name; memvault refuses it (a layer
    decoding it would read `..`): as leaving the vault only when, decoded, it would."""
    inside = "/memories/a/%2e%2e/notes.md"
    ok, why = answer(pair.tool, {"command": "create", "path": inside, "file_text": "x"})
    assert not ok and "would escape" not in why
    assert why.startswith(f"Invalid path {inside}: `%2e` spells a dot")
    out = "/memories/%2e%2e/x.md"
    assert answer(pair.tool, {"command": "create", "path": out, "file_text": "x"}) == (
        False,
        f"Path {out} would escape /memories directory",
    )
    assert not (pair.vault.root / "notes.md").exists() and not (pair.vault.root / "a").exists()


# -- str_replace with an empty old_str -----------------------------------------------------------


def test_an_empty_old_str_changes_nothing_and_says_why(pair: Pair) -> None:
    """The reference has no words of its own for it: "" occurs at every character, so
    it lists a line number per character ("in lines: 1, 1, 1, 2, ...") — and on an
    empty file it replaces "" and writes new_str. memvault says what is wrong, and
    changes nothing in either case."""
    pair.both({"command": "create", "path": "/memories/n.md", "file_text": "ab\ncd\n"})
    pair.both({"command": "create", "path": "/memories/e.md", "file_text": ""})
    command = {"command": "str_replace", "path": "/memories/n.md", "old_str": "", "new_str": "x"}
    reference, mine = pair.both(command)
    assert reference == (
        False,
        "No replacement was performed. Multiple occurrences of old_str `` in lines: "
        "1, 1, 1, 2, 2, 2, 3. Please ensure it is unique",
    )
    assert mine == (
        False,
        "No replacement was performed, old_str is empty: give the text to replace in "
        "/memories/n.md.",
    )
    command = {"command": "str_replace", "path": "/memories/e.md", "old_str": "", "new_str": "x"}
    reference, mine = pair.both(command)
    assert reference[0] and (pair.reference_root / "e.md").read_text(encoding="utf-8") == "x"
    assert not mine[0] and mine[1].startswith("No replacement was performed, old_str is empty")
    assert (pair.vault.root / "n.md").read_text(encoding="utf-8") == "ab\ncd\n"
    assert (pair.vault.root / "e.md").read_text(encoding="utf-8") == ""


# -- str_replace with many occurrences -----------------------------------------------------------


def test_many_occurrences_are_listed_as_the_reference_lists_them_up_to_a_hundred(
    pair: Pair,
) -> None:
    """Up to 100 occurrences, the reference's words exactly (overlapping ones counted as
    it counts them); past that, the first 100 line numbers and how many there are. The
    reference (and memvault before) counted the lines before each occurrence from the
    start again: a common word in a 2 MB note held the vault's writer minutes, and the
    answer listed every one of 450,000 line numbers."""
    text = "".join(f"aaa {i}\n" for i in range(40))  # "aa" twice a line, overlapping
    pair.both({"command": "create", "path": "/memories/few.md", "file_text": text})
    command = {"command": "str_replace", "path": "/memories/few.md", "old_str": "aa",
               "new_str": "b"}  # fmt: skip
    reference, mine = pair.both(command)
    assert not reference[0] and mine == reference
    assert reference[1].count(", ") == 79  # 80 occurrences: 1, 1, 2, 2, ...
    big = "".join(f"line {i} www\n" for i in range(20_000))
    pair.vault.memory_tool({"command": "create", "path": "/memories/big.md", "file_text": big})
    ok, why = answer(pair.tool, {"command": "str_replace", "path": "/memories/big.md",
                                 "old_str": "w", "new_str": "x"})  # fmt: skip
    assert not ok
    assert why.startswith("No replacement was performed. Multiple occurrences of old_str `w` in "
                          "lines: 1, 1, 1, 2, 2, 2, 3,")  # fmt: skip
    assert why.endswith(", 34 (the first 100 of 60000 occurrences). Please ensure it is unique")
    assert len(why) < 1_000
    assert (pair.vault.root / "big.md").read_text(encoding="utf-8") == big


class _Searched(str):
    """A note's text that counts the characters its searches go through: a ``find``'s
    needle and the text it passes over, a ``startswith``'s prefix."""

    work = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        pos = super().find(sub, start, end)
        _Searched.work += len(sub) + ((pos if pos != -1 else len(self)) - (start or 0))
        return pos

    def startswith(self, prefix: Any, start: Any = None, end: Any = None) -> bool:
        _Searched.work += len(prefix)
        return super().startswith(prefix, start, end)


def test_overlapping_occurrences_of_a_long_old_str_are_counted_in_one_pass() -> None:
    """``occurrence_lines`` searched for ``old_str`` again one character past each
    occurrence: where occurrences overlap (``old_str`` repeats itself) each search went
    through all of ``old_str`` again, an ``old_str`` of 10,000 ``a`` in a note of a
    million took 76 s holding the writer's lock. The searches' work is now the text's
    length; the lines and count are the reference's loop's (every overlapping one)."""
    from memvault.core.memory_tool import MATCHES_SAID, occurrence_lines

    text = _Searched("a" * 20_000 + "\nb" + "a" * 3_000)
    _Searched.work = 0
    assert occurrence_lines(text, "a" * 2_000) == ([1] * MATCHES_SAID, 18_001 + 1_001)
    assert _Searched.work < 4 * len(text)  # (before: 38 million)

    def theirs(text: str, old: str) -> tuple[list[int], int]:
        lines, start = [], 0
        while (pos := text.find(old, start)) != -1:
            lines.append(text[:pos].count("\n") + 1)
            start = pos + 1
        return lines[:MATCHES_SAID], len(lines)

    for i in range(3_000):  # periodic runs broken off, borders (aabaa), line ends in old
        unit = ("ab", "aab", "aabaa", "a", "a\na")[i % 5]
        text = ("ab\n" * (i % 7)) + unit * (i % 130) + "b" + unit * (i % 11) + "\n"
        for old in ("a", "aa", "aba", "aabaa", "abab", "a\na", unit * 3, unit * 2 + "a"):
            assert occurrence_lines(text, old) == theirs(text, old), (text, old)


# -- which error first -------------------------------------------------------------------------


ORDER: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/a/x.md", "file_text": "x\n"},
    {"command": "create", "path": "/memories/b.md", "file_text": "b\n"},
    # the source missing and the destination there: the reference names the destination
    {"command": "rename", "old_path": "/memories/gone.md", "new_path": "/memories/b.md"},
    {"command": "rename", "old_path": "/memories/gone.md", "new_path": "/memories/a"},
    {"command": "rename", "old_path": "/memories/gone/", "new_path": "/memories/a/x.md"},
    # a create onto a folder: the reference's O_EXCL open fails, "already exists"
    {"command": "create", "path": "/memories/a", "file_text": "x"},
    {"command": "create", "path": "/memories/a/", "file_text": "x"},
    {"command": "create", "path": "/memories/", "file_text": "x"},
    {"command": "create", "path": "/memories", "file_text": "x"},
    # an edit of a folder: "is not a file"
    {"command": "str_replace", "path": "/memories/", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "/memories/a", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/a/", "insert_line": 0, "insert_text": "b"},
    {"command": "insert", "path": "/memories", "insert_line": 0, "insert_text": "b"},
]  # fmt: skip


def test_of_two_errors_the_reference_says_the_one_it_says(pair: Pair) -> None:
    """A fuzzer's finds (bench/memory_tool_diff.py): a rename from a path not there onto
    one there was "The path ... does not exist" (the reference: "The destination ...
    already exists"), a create onto a folder "is a directory, not a file" or "is not a
    note" (the reference: "File ... already exists"), and so was an edit of a folder (the
    reference: "The path ... is not a file.")."""
    for command in ORDER:
        reference, mine = pair.both(command)
        assert mine == reference, command
    assert (pair.vault.root / "b.md").read_text(encoding="utf-8") == "b\n"
    assert (pair.vault.root / "a" / "x.md").read_text(encoding="utf-8") == "x\n"
