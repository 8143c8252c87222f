"""Claude's memory tool, memvault's against the SDK's reference: random command sequences.

    python bench/memory_tool_diff.py                  # seeds 0-9, 150 commands each
    python bench/memory_tool_diff.py --seeds 40 --steps 300 --show 3

Each seed draws a sequence of commands — valid and hostile: odd paths (``..``, ``.``,
doubled and trailing slashes, ``%2e``), names in NFC and NFD, case twins, no-break
spaces, huge files, view ranges of every shape, insert lines past the end, str_replace
with zero or two matches, renames onto what is there, deletes of folders, empty files,
CRLF, trailing newlines — and runs each on the SDK's ``BetaLocalFilesystemMemoryTool``
over a temp folder and on ``VaultMemoryTool`` over a vault (hash embedder), both
through their ``call()``. After each command it compares the two answers (ok or error,
and the text) and the files each side holds (paths and bytes; memvault's own files,
MEMORY.md, templates/ and hidden ones, left out), then puts the reference's folder
back to the vault's files, so one difference does not make every later one.

Each difference is classified by ``classify``: a documented choice of memvault's
(docs/AGENTS.md, the "Refused" list and the table) by its name, else ``DEFECT``. The
run prints the count of each class and examples; tests/test_memory_tool_diff.py runs
a few seeds and requires no ``DEFECT``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "daemon") not in sys.path:
    sys.path.insert(0, str(ROOT / "daemon"))

from anthropic.lib.tools import ToolError  # noqa: E402
from anthropic.lib.tools._beta_builtin_memory_tool import (  # noqa: E402
    BetaLocalFilesystemMemoryTool,
)

from memvault.api import Vault  # noqa: E402
from memvault.index.embedder import HashEmbedder  # noqa: E402
from memvault.integrations.anthropic import VaultMemoryTool  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402

DEFECT = "DEFECT"

# -- what the commands are drawn from --------------------------------------------------------

NAMES = [
    "ana.md", "Ana.md", "ANA.md", "notes.md", "Notes.md", "plan.md", "empty.md",
    "P\u00e9rez.md", "Pe\u0301rez.md",  # NFC and NFD of one name
    "Ana Lee.md", "Ana\u00a0Lee.md", "Ana\u202fLee.md", "ana-lee.md",  # no-break spaces
    "Plan .md", " Plan.md", "Zed\ufeff.md", "Pl\u200ban.md",  # spaces, invisible characters
    "Meeting #3.md", "a:b.md", "CON.md", "x.txt", "Fact.MD", "new.md.md",
    "Caf\u00e9 \u00fcber.md", "日本語.md", "\u05e9\u05dc\u05d5\u05dd.md",
]  # fmt: skip
FOLDERS = ["", "", "", "a", "b", "a/c", "people", "People", "Pe\u0301rez", "x y", "b/"]
ODD = ["", "./", "a/../", "//", "b/c/../../", "../memories/"]  # prefixes inside /memories
HOSTILE = [
    "/memories/../x.md", "/memories/a/../../x.md", "/memories/%2e%2e/x.md",
    "/memories/a/%2e%2e/x.md", "//memories/x.md", "/memoriesx/a.md", "/memories/.hidden.md",
    "/memories/.trash/x.md", "/memories/MEMORY.md", "/memories", "/memories/", "memories/x.md",
    "/memories/a/" + "n" * 252 + ".md", "/memories/a\x00b.md", "/memories/a\nb.md",
]  # fmt: skip
TEXTS = [
    "", "one\ntwo\nthree\n", "one\ntwo\nthree", "one\r\ntwo\r\nthree\r\n", "\n\n\n",
    "# Title\n\nbody line\nbody line\n", "x", "caf\u00e9\n", "cafe\u0301\n", "tab\there\n",
    "---\ntags: [a]\n---\n# Fm\n\ntext\n", "no newline at the end",
]  # fmt: skip


def huge(rng: random.Random) -> str:
    lines = rng.choice([3000, 20_000, 60_000])
    return "".join(f"line {i} {'w' * rng.randrange(0, 40)}\n" for i in range(lines))


@dataclass
class Draw:
    """Draws commands, knowing the files the vault holds (to hit them often)."""

    rng: random.Random
    files: list[str] = field(default_factory=list)  # vault-relative notes there now
    folders: list[str] = field(default_factory=list)

    def path(self) -> str:
        r = self.rng.random()
        if r < 0.05:
            return self.rng.choice(HOSTILE)
        if r < 0.55 and self.files:
            rel = self.rng.choice(self.files)
            if self.rng.random() < 0.15:  # the same file, spelt otherwise
                rel = self.rng.choice([rel.lower(), rel.upper(), _nfd(rel), rel + "/"])
        elif r < 0.62 and self.folders:
            rel = self.rng.choice(self.folders)
        else:
            folder = self.rng.choice(FOLDERS).strip("/")
            name = self.rng.choice(NAMES)
            rel = f"{folder}/{name}" if folder else name
        prefix = self.rng.choice(ODD) if self.rng.random() < 0.15 else ""
        return f"/memories/{prefix}{rel}"

    def text(self) -> str:
        if self.rng.random() < 0.03:
            return huge(self.rng)
        return self.rng.choice(TEXTS)

    def view_range(self) -> Any:
        r = self.rng.random()
        if r < 0.5:
            return None
        pick = self.rng.choice
        return pick([
            [1, 2], [2, -1], [0, 0], [5, 3], [-2, -1], [3], [], [1, 10**6], [10**6, -1],
            [pick([1, 2, 3, 50]), pick([-1, 1, 4, 100])], [2, None], [1, 2, 3],
        ])  # fmt: skip

    def command(self, contents: dict[str, str]) -> dict[str, Any]:
        kind = self.rng.choices(
            ["view", "create", "str_replace", "insert", "delete", "rename"],
            weights=[3, 4, 3, 3, 1, 2],
        )[0]
        if kind == "view":
            c: dict[str, Any] = {"command": "view", "path": self.path()}
            if (vr := self.view_range()) is not None:
                c["view_range"] = vr
            return c
        if kind == "create":
            return {"command": "create", "path": self.path(), "file_text": self.text()}
        if kind == "str_replace":
            path = self.path()
            text = contents.get(_rel(path), "") or self.rng.choice(TEXTS)
            return {"command": "str_replace", "path": path, "old_str": self.old(text),
                    "new_str": self.rng.choice(["", "X", "new\nlines", "one", "a\r\nb"])}  # fmt: skip
        if kind == "insert":
            path = self.path()
            lines = contents.get(_rel(path), "").count("\n")
            line = self.rng.choice([0, 1, lines, lines + 1, lines + 2, -1, 2])
            return {"command": "insert", "path": path, "insert_line": line,
                    "insert_text": self.rng.choice(["new", "new\n", "a\nb", "", "x\r\n", "\n"])}  # fmt: skip
        if kind == "delete":
            return {"command": "delete", "path": self.path()}
        return {"command": "rename", "old_path": self.path(), "new_path": self.path()}

    def old(self, text: str) -> str:
        r = self.rng.random()
        if len(text) > 50_000:  # a huge note: one line of it, or none (the reference lists
            # every line of every occurrence, in time quadratic in them: minutes)
            return self.rng.choice([f"line {self.rng.randrange(3000)} ", "absent"])
        if r < 0.3 and text:  # a unique-or-not piece of the file
            i = self.rng.randrange(len(text))
            return text[i : i + self.rng.randrange(1, 12)]
        if r < 0.5 and "\n" in text:  # a line, or two as a view shows them (\n between)
            lines = text.replace("\r\n", "\n").split("\n")
            i = self.rng.randrange(len(lines))
            return "\n".join(lines[i : i + self.rng.choice([1, 2])])
        return self.rng.choice(["one", "body line", "absent", "two\nthree", "", "e", "w"])


def _nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


def _rel(path: str) -> str:
    return os.path.normpath(path).removeprefix("/memories").lstrip("/")


# -- the two sides ------------------------------------------------------------------------


def answer(tool: Any, command: dict[str, Any]) -> tuple[bool, str]:
    try:
        return True, str(tool.call(command))
    except ToolError as exc:
        return False, str(exc)
    except Exception as exc:  # the reference's own crashes (TypeError, OSError...)
        return False, f"<{type(exc).__name__}: {exc}>"


OURS = {"MEMORY.md"}  # memvault's files at the root, not the agent's


def files(root: Path) -> dict[str, bytes]:
    """The agent's files under ``root``: hidden ones, templates/ and MEMORY.md left out."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != "templates"]
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if name.startswith(".") or rel in OURS:
                continue
            p = Path(dirpath) / name
            if p.is_symlink():
                continue
            out[rel] = p.read_bytes()
    return out


def mirror(src: dict[str, bytes], dst_root: Path) -> None:
    """The reference's folder made to hold exactly the vault's files (and no folder more)."""
    for child in dst_root.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for rel, data in src.items():
        p = dst_root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


@dataclass
class Difference:
    label: str
    command: dict[str, Any]
    reference: tuple[bool, str]
    mine: tuple[bool, str]
    files: str  # what differed in the files, if anything


# -- classification ------------------------------------------------------------------------

MEMORY_UPDATED = "\n/memories/MEMORY.md was updated too: view it again before editing it"

# memvault's own refusals, each documented in docs/AGENTS.md ("Refused, with a message the
# model can act on, and nothing changed") or docs/VAULT.md: (label, pattern of its answer)
REFUSALS: list[tuple[str, str]] = [
    ("hidden path", r" is not memory: hidden files and folders"),
    ("not a note (.md only)", r"is not a note: memvault keeps memory as markdown notes"),
    ("not a note for Obsidian (.MD)", r"is not a note: Obsidian reads only \.md in lower case"),
    ("percent-encoded `..` leaving /memories", r"^Path \S*%2e\S* would escape /memories"),
    ("named as a note but for its case", r"is named as a note but for its case|is no note"),
    ("name Obsidian/Windows cannot hold", r"Obsidian's links|Windows|cannot hold|cannot link"),
    ("invisible or spaced name", r"invisible|a space|U\+[0-9A-F]{4}"),
    ("other case there", r"names differing only in case|in another case|in its exact case"),
    ("same name spelt otherwise", r"spelt otherwise|is there as|the facts about"),
    ("percent-encoded dot", r"`%2e` spells a dot"),
    ("prefix /memories exactly", r"^Path must start with /memories"),
    ("MEMORY.md kept by memvault", r"it is the vault's index, kept by memvault"),
    ("managed section", r"memvault's `[^`]+` section|section markers unpaired"),
    ("note size cap", r"vault\.max_note_bytes"),
    ("not text (NUL, lone surrogate)", r"is not text|holds a NUL character|lone surrogate"),
    ("empty old_str", r"old_str is empty"),
    ("name over 255 bytes", r"255 bytes|File name too long|too long"),
    ("a part of its path is a file", r"a part of its path is a file"),
    ("folder name memvault keeps", r"is not a folder memvault keeps as memory"),
    ("move into itself", r"into itself"),
    ("settings ignore it", r"its settings ignore it"),
    ("does not exist, naming what is there", r"does not exist.*is there"),
    ("a symlink's ..", r"symlink"),
    ("view_range not whole numbers", r"Invalid `view_range`"),
    ("a Windows drive's form (a:b.md)", r"absolute paths are not allowed: '\w:"),
    ("a folder a person reads as one there", r"a folder a person cannot tell apart"),
    ("insert_line not a whole number", r"Invalid `insert_line` parameter: .* whole number"),
]


def classify(command: dict[str, Any], ref: tuple[bool, str], mine: tuple[bool, str],
             ref_files: dict[str, bytes], my_files: dict[str, bytes],
             before: dict[str, bytes] | None = None) -> str | None:  # fmt: skip
    """None when the two agree; else the documented choice the difference is, or DEFECT.
    ``before``: the vault's files before the command; a refusal that changed them is a
    DEFECT, whatever it says ("Refused ... and nothing changed")."""
    name = command["command"]
    same_files = ref_files == my_files
    if ref == mine and same_files:
        return None
    if not mine[0] and before is not None and my_files != before:
        return DEFECT
    if name == "view" and mine[0] and ref[0] and _is_dir_view(ref[1]):
        return "a folder's view is memvault's bounded listing"
    if (not mine[0] and ref[0]) or (not mine[0] and not ref[0] and mine[1] != ref[1]):
        for label, pattern in REFUSALS:
            if re.search(pattern, mine[1]):
                return f"refused: {label}"
        if not ref[0] and ref[1].startswith("<"):
            return "the reference crashes (no answer of its own)"
        if (
            mine[1].startswith("File ")
            and " already exists" in mine[1]
            and _nfc_there(my_files, command)
        ):
            return "a name in NFD is the note there in NFC"
        return DEFECT
    if mine[0] and not ref[0]:
        if ref[1].startswith("<"):
            return "the reference crashes (no answer of its own)"
        if "does not exist" in ref[1] and _nfc_there(my_files, command):
            return "a name in NFD is the note there in NFC"
        if (
            name == "str_replace"
            and "did not appear verbatim" in ref[1]
            and "\r\n" in _file(my_files, command)
        ):
            return "CRLF: old_str found as the view shows it"
        return DEFECT
    # both ok
    text = mine[1]
    if name == "rename":
        text = text.removesuffix(MEMORY_UPDATED)
        text = re.sub(r"\nLinks to it were updated in \d+ notes: .*$", "", text, flags=re.S)
    if name == "delete":
        text = re.sub(r"\nLinks to it now lead .*$", "", text, flags=re.S)
    if name in ("create", "str_replace", "insert"):
        text = re.sub(r"\nNote: .*$", "", text, flags=re.S)
    if name == "view" and "view_range [" in text and "a view shows 40,000 characters" in text:
        return "a long note's view stops at 40,000 characters"
    if name == "view" and "(… cut at" in text:
        return "a note past max_note_bytes viewed in part"
    if text != ref[1]:
        return DEFECT
    if not same_files and _nfc(ref_files) == _nfc(my_files):
        return "a name in NFD written in the NFC spelling the vault has"
    if not same_files:
        if name == "delete":
            return "delete moves to .trash/" if _only_gone(ref_files, my_files) else DEFECT
        if name in ("str_replace", "insert") and _crlf_kept(ref_files, my_files):
            return "CRLF: a CRLF note's new lines ended CRLF"
        return DEFECT
    return "answer adds a documented line (links, MEMORY.md, size)"


def _nfc(files: dict[str, bytes]) -> dict[str, bytes]:
    return {unicodedata.normalize("NFC", k): v for k, v in files.items()}


def _nfc_there(my_files: dict[str, bytes], command: dict[str, Any]) -> bool:
    """Whether the command's path, given in another Unicode form, is a note there in NFC."""
    rel = _rel(command.get("path", ""))
    return rel not in my_files and unicodedata.normalize("NFC", rel) in _nfc(my_files)


def _is_dir_view(text: str) -> bool:
    return text.startswith("Here're the files and directories")


def _file(my_files: dict[str, bytes], command: dict[str, Any]) -> str:
    return my_files.get(_rel(command.get("path", "")), b"").decode("utf-8", "replace")


def _only_gone(ref_files: dict[str, bytes], my_files: dict[str, bytes]) -> bool:
    return ref_files == my_files  # (trash is hidden: both lose the same files)


def _crlf_kept(ref_files: dict[str, bytes], my_files: dict[str, bytes]) -> bool:
    diff = [k for k in set(ref_files) | set(my_files) if ref_files.get(k) != my_files.get(k)]
    return all(
        k in ref_files and k in my_files and b"\r\n" in my_files[k]
        and my_files[k].replace(b"\r\n", b"\n") == ref_files[k].replace(b"\r\n", b"\n")
        for k in diff
    )  # fmt: skip


def files_said(ref_files: dict[str, bytes], my_files: dict[str, bytes]) -> str:
    out = []
    for k in sorted(set(ref_files) | set(my_files)):
        a, b = ref_files.get(k), my_files.get(k)
        if a != b:
            out.append(f"{k!r}: reference {_short(a)} / memvault {_short(b)}")
    return "; ".join(out[:6])


def _short(b: bytes | None) -> str:
    if b is None:
        return "absent"
    return repr(b[:60]) + (f"…({len(b)} bytes)" if len(b) > 60 else "")


# -- a run ------------------------------------------------------------------------------------


@contextmanager
def pair(tmp: Path) -> Iterator[tuple[BetaLocalFilesystemMemoryTool, Path, Vault, Path]]:
    reference = BetaLocalFilesystemMemoryTool(str(tmp / "reference"))
    root = tmp / "vault"
    init_vault(root)
    with Vault.open(root, embedder=HashEmbedder()) as vault:
        vault.sync()
        yield reference, tmp / "reference" / "memories", vault, root


def run_seed(seed: int, steps: int, tmp: Path,
             on: Callable[[Difference], None] | None = None) -> list[Difference]:  # fmt: skip
    rng = random.Random(seed)
    found: list[Difference] = []
    with pair(tmp) as (reference, ref_root, vault, root):
        tool = VaultMemoryTool(vault)
        draw = Draw(rng)
        for _ in range(steps):
            mine_now = files(root)
            contents = {k: v.decode("utf-8", "replace") for k, v in mine_now.items()}
            command = draw.command(contents)
            ref = answer(reference, command)
            mine = answer(tool, command)
            ref_files, my_files = files(ref_root), files(root)
            label = classify(command, ref, mine, ref_files, my_files, mine_now)
            if label is not None:
                d = Difference(label, command, ref, mine, files_said(ref_files, my_files))
                found.append(d)
                if on is not None:
                    on(d)
            if ref_files != my_files:
                mirror(my_files, ref_root)
            draw.files = sorted(my_files)
            draw.folders = sorted({k.rsplit("/", 1)[0] for k in my_files if "/" in k})
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--show", type=int, default=2, help="examples shown per class")
    args = ap.parse_args()
    by: dict[str, list[tuple[int, Difference]]] = defaultdict(list)
    count: Counter[str] = Counter()
    for seed in range(args.first, args.first + args.seeds):
        with tempfile.TemporaryDirectory(prefix="mt58-diff-") as tmp:
            for d in run_seed(seed, args.steps, Path(tmp)):
                count[d.label] += 1
                by[d.label].append((seed, d))
    total = args.seeds * args.steps
    print(f"{total} commands, {sum(count.values())} differences")
    for label, n in count.most_common():
        print(f"{n:6}  {label}")
        for seed, d in by[label][: args.show]:
            print(f"          seed {seed}: {d.command!r:.300}")
            print(f"            reference: {d.reference!r:.300}")
            print(f"            memvault:  {d.mine!r:.300}")
            if d.files:
                print(f"            files: {d.files:.400}")
    sys.exit(1 if count[DEFECT] else 0)


if __name__ == "__main__":
    main()
