"""Finding the note a question is about, on real vaults, per cross-validation fold.

    python bench/note_recall.py                                  # both vaults, shipped defaults
    python bench/note_recall.py --grid grid.json                 # [{"name", "set": [...]}, ...]
    python bench/note_recall.py --set search.note_weight=0.5 --only help
    python bench/note_recall.py --work /tmp/note-recall          # keep the indexed copies
    python bench/note_recall.py --grid g.json --fresh-graph      # each config builds vectors.bin anew

Two vaults, each with its questions:

- ``help``: Obsidian's help vault (the ``en/`` folder of obsidianmd/obsidian-help,
  written out as ``../shared/bench/obsidian-help/README.md`` says; ``--help-vault``)
  and its 60 questions (``qa.json`` there). Scored as that folder's ``eval.py``
  scores it (its own functions): ``Vault.search(q, k=10)``, hits deduped by note,
  hit@1/3/5 and MRR@10.
- ``other``: any vault and questions in the help set's ``qa.json`` shape
  (``--other-vault``, ``--other-qa``), e.g. a real public vault one fetched and wrote
  questions for (bench/RESULTS.md names the one used and how to write its questions
  out: ``bench/garden_questions.py``).
- ``topic``: the project's topic-note vault (``init --example`` plus
  bench/realvault/, as bench/real_vault_eval.py builds it) and its 42 questions,
  scored the same way; also whether ``Vault.context`` at 1,000 tokens opens with
  the right note (``ctx@1``: its first cited note).

Folds: A = the even-numbered questions, B = the odd (both sets list questions by
topic, so halves would split topics). Settings are chosen on one fold and checked
on the other (bench/RESULTS.md). Each vault is indexed once into ``--work`` (its
cache.db keeps the vectors, so an index setting re-embeds only what it changes);
a ranking setting re-runs only the questions.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
sys.path.insert(0, str(ROOT / "bench"))

from locomo_eval import parse_sets  # noqa: E402
from memvault.api import Vault  # noqa: E402
from real_vault_eval import NOTES, build  # noqa: E402

HELP = next(
    (p / "shared" / "bench" / "obsidian-help" for p in ROOT.parents if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "bench" / "obsidian-help",
)


def _help_eval() -> Any:
    """The help set's own eval.py (its scoring functions), imported from where it lies."""
    spec = importlib.util.spec_from_file_location("obsidian_help_eval", HELP / "eval.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no eval.py in {HELP}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def questions(which: str, other_qa: Path | None = None) -> list[tuple[str, set[str]]]:
    if which in ("help", "other"):
        qa = HELP / "qa.json" if which == "help" else other_qa
        if qa is None:
            raise SystemExit("--other-qa is needed for the other vault")
        data = json.loads(qa.read_text(encoding="utf-8"))
        ev = _help_eval()
        return [(q["q"], {ev.norm_path(p) for p in q["notes"]}) for q in data["questions"]]
    pairs = json.loads((NOTES / "questions.json").read_text(encoding="utf-8"))
    return [(q, {want}) for q, want in pairs]


def prepare(which: str, work: Path, help_vault: Path, other: Path | None = None) -> Path:
    root = work / which
    if root.is_dir():
        return root
    if which in ("help", "other"):
        source = help_vault if which == "help" else other
        if source is None or not source.is_dir():
            raise SystemExit(f"no {which} vault at {source} (see {HELP / 'README.md'})")
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".memvault", ".obsidian"))
        (root / ".memvault").mkdir(exist_ok=True)
    else:
        build(root)
    return root


def score(vault: Vault, items: Sequence[tuple[str, set[str]]], contexts: bool) -> dict[str, Any]:
    ev = _help_eval()
    folds: dict[str, list[int | None]] = {"A": [], "B": []}
    ctx: dict[str, list[bool]] = {"A": [], "B": []}
    ranks: list[int | None] = []
    for i, (q, answers) in enumerate(items):
        fold = "A" if i % 2 == 0 else "B"
        hits = vault.search(q, k=10)
        rank = ev.first_rank([ev.norm_path(h.path) for h in hits], answers)
        folds[fold].append(rank)
        ranks.append(rank)
        if contexts:
            sources = [s.path for s in vault.context(q, budget=1000).sources if s.why != "index"]
            ctx[fold].append(bool(sources) and ev.norm_path(sources[0]) in answers)
    out: dict[str, Any] = {}
    for fold, fold_ranks in folds.items():
        out[fold] = ev.metrics(fold_ranks, 10)
        if contexts:
            out[fold]["ctx@1"] = round(sum(ctx[fold]) / max(len(ctx[fold]), 1), 3)
    out["all"] = ev.metrics(ranks, 10)
    out["ranks"] = ranks
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", action="append", default=[], help="section.key=value")
    parser.add_argument("--grid", type=Path, help="a JSON list of {name, set: [...]}")
    parser.add_argument("--only", choices=("help", "topic", "other"), action="append")
    parser.add_argument("--work", type=Path, help="where the indexed copies live (kept)")
    parser.add_argument("--help-vault", type=Path, default=Path("/work/data/obsidian-help"))
    parser.add_argument("--other-vault", type=Path, help="a third vault (--only other)")
    parser.add_argument("--other-qa", type=Path, help="its questions (qa.json's shape)")
    parser.add_argument("--contexts", action="store_true", help="also score context's first note")
    parser.add_argument("--ranks", action="store_true", help="print each question's rank")
    parser.add_argument(
        "--fresh-graph",
        action="store_true",
        help="delete vectors.bin before each config: the graph is built again from cache.db's"
        " vectors under the config's index settings (hnsw_m, ef_construction)",
    )
    args = parser.parse_args(argv)
    configs = json.loads(args.grid.read_text()) if args.grid else [{"name": "run", "set": args.set}]
    work = args.work or Path(tempfile.mkdtemp(prefix="mv-note-recall-"))
    work.mkdir(parents=True, exist_ok=True)
    for which in args.only or ("help", "topic"):
        items = questions(which, args.other_qa)
        root = prepare(which, work, args.help_vault, args.other_vault)
        for config in configs:
            started = time.perf_counter()
            overrides = parse_sets(config["set"])
            if args.fresh_graph:
                (root / ".memvault" / "vectors.bin").unlink(missing_ok=True)
            with Vault.open(root, overrides=overrides) as vault:
                vault.sync()
                synced = time.perf_counter() - started
                result = score(vault, items, args.contexts)
            if not args.ranks:
                result.pop("ranks")
            result.update(
                vault=which,
                config=config["name"],
                sync_s=round(synced, 1),
                s=round(time.perf_counter() - started, 1),
            )
            print(json.dumps(result), flush=True)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
