"""Chinese, Japanese and Korean notes found by the words inside them: codes side by side.

    python bench/cjk_bench.py --code main=/tmp/main --code branch=. [--langs zh,ja,ko]

The vaults: the ``zh/``, ``ja/`` and ``ko/`` folders of Obsidian's help
(github.com/obsidianmd/obsidian-help, the snapshot ``fetch`` brings to
/work/.mirror/obsidianmd+obsidian-help; 173 notes each, translated by people), each
written to a folder of its own, made a vault (``memvault init`` over it) and indexed
with the vault's own model (the bundled int8 one) by each code in turn, on a fresh
copy.

The questions (the same for every code), of three kinds. ``inside``: from each note's
body lines (not its headings, frontmatter or links), up to two runs of 4+ CJK
characters, seeded; from each run a window of 2-4 characters, never the whole run (no
segmenter here: a window may cross a word's edge, so it is a substring, not always a
word); a window found in more than 5 notes is skipped (too common to name one); a
question's notes are all the notes holding it, a hit is one of them. ``title``: a
note's file name of 2+ CJK characters only (a person looking for the note ``书签`` types
书签); a hit is that note. ``line``: one body line of 10-40 characters, most of them
CJK, found in that note only (a sentence pasted whole); a hit is that note. Reported
per language, code and kind: the keyword side alone (``store.keywords`` top 10) and
the whole search (``search`` top 10): the share of questions with a hit in the first 1
/ 10, MRR@10; the search's median wall time by kind; the first sync's CPU seconds and
``.memvault/`` bytes.

A known-item test built from the notes' own text, not questions people asked: it
measures whether a word inside a run can be found at all, which main's keyword side
cannot (a run is one token there).

``--langs th,km,bn,ar,fa,he``: the help's Thai, Khmer, Bengali, Arabic, Persian and
Hebrew folders (``SCRIPTS``), where FTS5's tokenizer made every combining mark a
separator (index schema 8 and before): ``inside`` is a window of 2-4 letters with their
marks inside a Thai or Khmer run, a whole word of 3+ letters in the others; in
Arabic, Persian and Hebrew a note holds the word with or without its optional points
(``POINTS``: the word a person types is rarely pointed; ``--exact``: as written).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

MIRROR = Path("/work/.mirror/obsidianmd+obsidian-help/repo")
CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
CJK = re.compile(f"[{CJK_RANGES}]{{4,}}")
CJK_ANY = re.compile(f"[{CJK_RANGES}]")
MAX_NOTES_A_WORD = 5
# the other languages of the help (``--langs th,km,bn,ar,fa,he``): the letters of their
# script (marks included); Thai and Khmer are written without spaces between words
SCRIPTS = {
    "th": "\u0e00-\u0e7f",
    "km": "\u1780-\u17ff",
    "bn": "\u0980-\u09ff",
    "ar": "\u0600-\u06ff\u0750-\u077f",
    "fa": "\u0600-\u06ff\u0750-\u077f\u200c",
    "he": "\u0590-\u05ff",
}
UNSPACED = {"th", "km"}
# Arabic's and Hebrew's optional points and the tatweel: a note holds a word with or
# without them (the word a person types is rarely pointed; ``--exact``: as written)
POINTS = re.compile(
    "[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8"
    "\u06ea-\u06ed\u0640\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]"
)
EXACT = False


def clusters(run: str) -> list[str]:
    """A run's letters, each with the marks after it (a Thai or Khmer unit)."""
    out: list[str] = []
    for ch in run:
        if out and unicodedata.category(ch)[0] == "M":
            out[-1] += ch
        else:
            out.append(ch)
    return out


def script_questions(notes: dict[str, str], lang: str, rng: random.Random) -> list[Any]:
    """``make_questions`` for a script of ``SCRIPTS``: ``inside`` is a window of 2-4
    letters (with their marks) inside a run of Thai or Khmer, a whole word of 3+ letters
    elsewhere; ``title`` and ``line`` as for CJK."""
    letters = "".join(  # the script's letters, marks, digits (and ZWNJ): no punctuation
        chr(c)
        for a, b in re.findall(r"(.)-(.)", SCRIPTS[lang])
        for c in range(ord(a), ord(b) + 1)
        if unicodedata.category(chr(c))[0] in "LMN" or c == 0x200C
    )
    letters = re.escape(letters)
    run_re = re.compile(f"[{letters}]{{4,}}")
    any_re = re.compile(f"[{letters}]")
    asked: set[str] = set()
    out: list[Any] = []
    for text in notes.values():
        runs = [m.group() for line in body_lines(text) for m in run_re.finditer(line)]
        runs = [r for r in runs if len(clusters(r)) >= (4 if lang in UNSPACED else 3)]
        for run in rng.sample(runs, min(2, len(runs))):
            if lang in UNSPACED:
                units = clusters(run)
                size = rng.randint(2, min(4, len(units) - 1))
                start = rng.randint(0, len(units) - size)
                word = "".join(units[start : start + size])
            else:
                word = run
            if EXACT or lang in UNSPACED:
                holders = sorted(r for r, t in notes.items() if word in t)
            else:
                bare = POINTS.sub("", word)
                holders = sorted(r for r, t in notes.items() if bare in POINTS.sub("", t))
            if word in asked or len(holders) > MAX_NOTES_A_WORD:
                continue
            asked.add(word)
            out.append(("inside", word, holders))
    for rel, text in notes.items():
        lines = [
            line
            for line in body_lines(text)
            if 10 <= len(line) <= 40 and len(any_re.findall(line)) * 2 > len(line)
        ]
        for line in rng.sample(lines, min(1, len(lines))):
            if sum(line in t for t in notes.values()) == 1:
                out.append(("line", line, [rel]))
    for rel in notes:
        stem = Path(rel).stem
        if re.fullmatch(f"[{letters} ]+", stem) and len(clusters(stem.replace(" ", ""))) >= 2:
            out.append(("title", stem, [rel]))
    return out


def export(lang: str, dest: Path) -> Path:
    """The help's ``lang/`` folder as a plain folder of notes (other files as empty
    stand-ins, so attachment links resolve)."""
    names = subprocess.run(
        ["git", f"--git-dir={MIRROR}", "ls-tree", "-r", "-z", "HEAD", "--name-only", "--", lang],
        check=True, capture_output=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, names):
        out = dest / Path(name).relative_to(lang)
        out.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".md"):
            blob = subprocess.run(
                ["git", f"--git-dir={MIRROR}", "show", f"HEAD:{name}"],
                check=True, capture_output=True,
            ).stdout  # fmt: skip
            out.write_bytes(blob)
        else:
            out.touch()
    return dest


def body_lines(text: str) -> list[str]:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        text = text[end + 4 :] if end > 0 else text
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        out.append(re.sub(r"!?\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)", " ", s))
    return out


def make_questions(vault: Path, seed: int = 7, lang: str = "zh") -> list[Any]:
    rng = random.Random(seed)
    notes = {
        p.relative_to(vault).as_posix(): p.read_text("utf-8")
        for p in sorted(vault.rglob("*.md"))
        if ".memvault" not in p.parts
    }
    if lang in SCRIPTS:
        return script_questions(notes, lang, rng)
    asked: set[str] = set()
    out = []
    for text in notes.values():
        runs = [m.group() for line in body_lines(text) for m in CJK.finditer(line)]
        for run in rng.sample(runs, min(2, len(runs))):
            size = rng.randint(2, min(4, len(run) - 1))
            start = rng.randint(0, len(run) - size)
            word = run[start : start + size]
            holders = sorted(r for r, t in notes.items() if word in t)
            if word in asked or len(holders) > MAX_NOTES_A_WORD:
                continue
            asked.add(word)
            out.append(("inside", word, holders))
    for rel, text in notes.items():  # a sentence pasted whole (10-40 characters)
        lines = [
            line
            for line in body_lines(text)
            if 10 <= len(line) <= 40 and len(CJK_ANY.findall(line)) * 2 > len(line)
        ]
        for line in rng.sample(lines, min(1, len(lines))):
            if sum(line in t for t in notes.values()) == 1:
                out.append(("line", line, [rel]))
    for rel in notes:  # a note's name, as a person looking for it types it
        stem = Path(rel).stem
        if CJK.fullmatch(stem) or re.fullmatch(
            r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,3}", stem
        ):
            out.append(("title", stem, [rel]))
    return out


def worker(vault: Path, questions: Path, out: Path) -> None:
    from memvault.api import Vault
    from memvault.core.ranking import query_terms

    items = json.loads(questions.read_text("utf-8"))
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    with Vault.open(vault) as v:
        v.sync()  # the vectors too (vectors=True): the search is hybrid
        assert v.engine.store.pending_state()[0] == 0
        after = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - started
        store = v.engine.store
        ranks: dict[str, list[tuple[str, int | None]]] = {"keywords": [], "search": []}
        search_ms: dict[str, list[float]] = {}
        for kind, word, holders in items:
            found = store.keywords(query_terms(word), 10)
            order = {lab: i for i, (lab, _) in enumerate(found)}
            rows = store.chunk_rows([lab for lab, _ in found])
            paths = list(
                dict.fromkeys(rows[lab].path for lab in sorted(rows, key=order.__getitem__))
            )
            ranks["keywords"].append(
                (kind, next((i for i, p in enumerate(paths) if p in holders), None))
            )
            t0 = time.perf_counter()
            hits = list(dict.fromkeys(h.path for h in v.search(word, k=10)))
            search_ms.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
            ranks["search"].append(
                (kind, next((i for i, p in enumerate(hits) if p in holders), None))
            )
    size = sum(f.stat().st_size for f in (vault / ".memvault").rglob("*") if f.is_file())
    out.write_text(
        json.dumps(
            {
                "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                "wall_s": wall,
                "memvault_bytes": size,
                "ranks": ranks,
                "search_ms_p50": {k: statistics.median(ms) for k, ms in search_ms.items()},
            }
        ),
        "utf-8",
    )


def summary(pairs: list[list[Any]], kind: str) -> dict[str, float]:
    ranks = [r for k, r in pairs if k == kind]
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "hit@1": round(sum(r == 0 for r in ranks) / n, 3),
        "hit@10": round(sum(r is not None for r in ranks) / n, 3),
        "mrr@10": round(sum(1 / (r + 1) for r in ranks if r is not None) / n, 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--langs", default="zh,ja,ko")
    ap.add_argument("--worker", nargs=3, type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--exact", action="store_true", help="ar/fa/he: holders as written")
    args = ap.parse_args()
    global EXACT
    EXACT = args.exact
    if args.worker:
        worker(*args.worker)
        return 0
    codes = dict(c.split("=", 1) for c in args.code) or {"branch": "."}
    work = Path(tempfile.mkdtemp(prefix="cjk-bench-"))
    rows = []
    try:
        for lang in args.langs.split(","):
            source = export(lang, work / f"src-{lang}")
            qfile = work / f"q-{lang}.json"
            questions = make_questions(source, lang=lang)
            qfile.write_text(json.dumps(questions, ensure_ascii=False), "utf-8")
            notes_bytes = sum(p.stat().st_size for p in source.rglob("*.md"))
            for name, checkout in codes.items():
                vault = work / f"{lang}-{name}"
                shutil.copytree(source, vault)
                env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve() / "daemon")}
                subprocess.run(
                    [sys.executable, "-m", "memvault", "init", str(vault)],
                    check=True, env=env, capture_output=True,
                )  # fmt: skip
                result = work / f"r-{lang}-{name}.json"
                subprocess.run(
                    [sys.executable, __file__, "--worker", str(vault), str(qfile), str(result)],
                    check=True, env=env,
                )  # fmt: skip
                got = json.loads(result.read_text("utf-8"))
                row = {
                    "lang": lang,
                    "code": name,
                    **{
                        f"{side} {kind}": summary(got["ranks"][side], kind)
                        for side in ("keywords", "search")
                        for kind in ("inside", "title", "line")
                    },
                    "search_ms_p50": {k: round(v, 1) for k, v in got["search_ms_p50"].items()},
                    "first_sync_cpu_s": round(got["cpu_s"], 1),
                    "memvault_x_notes": round(got["memvault_bytes"] / notes_bytes, 2),
                }
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
