"""Search and context on an ordinary vault of topic notes (not conversation logs).

    python bench/real_vault_eval.py

The vault is `memvault init --example`'s template and example notes plus the
notes under bench/realvault/ (people, projects, decisions, topics, day logs,
written for this check; two questions are about example notes);
bench/realvault/questions.json pairs 42 questions with the note that answers
each. Reported per configuration, with the real bundled model:

- search hit@1 / hit@5: the right note is the first / among the first five
  notes of ``Vault.search(question, group=True)``;
- context hit @300 / @1000: the right note is cited in ``Vault.context`` at
  that budget.

"before" is today's context (whole chunks, no line vectors); "after" the
shipped defaults. Both are indexed from scratch in the same run.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.index.embedder import SentenceTransformerEmbedder  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402

NOTES = ROOT / "bench" / "realvault"
CONFIGS: dict[str, dict[str, dict[str, Any]]] = {
    "before": {"context": {"excerpts": False, "candidates": 100}, "index": {"line_vectors": False}},
    "after": {},
}


def build(root: Path) -> None:
    init_vault(root, example=True)
    missing = [w for _, w in json.loads((NOTES / "questions.json").read_text())]
    missing = [w for w in missing if not (NOTES / w).is_file() and not (root / w).is_file()]
    if missing:  # a question whose note is gone would count as a miss, silently
        raise SystemExit(f"no note for questions about: {', '.join(sorted(set(missing)))}")
    for path in NOTES.rglob("*.md"):
        target = root / path.relative_to(NOTES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def evaluate(vault: Vault, questions: list[tuple[str, str]]) -> dict[str, float]:
    hit1 = hit5 = ctx300 = ctx1000 = 0
    for question, want in questions:
        paths = [h.path for h in vault.search(question, k=5, group=True)]
        hit1 += paths[:1] == [want]
        hit5 += want in paths
        ctx300 += any(s.path == want for s in vault.context(question, budget=300).sources)
        ctx1000 += any(s.path == want for s in vault.context(question, budget=1000).sources)
    n = len(questions)
    return {
        "search_hit@1": round(hit1 / n, 3),
        "search_hit@5": round(hit5 / n, 3),
        "context_hit@300": round(ctx300 / n, 3),
        "context_hit@1000": round(ctx1000 / n, 3),
        "questions": n,
    }


def main() -> int:
    questions = [tuple(q) for q in json.loads((NOTES / "questions.json").read_text())]
    embedder = SentenceTransformerEmbedder()
    for name, overrides in CONFIGS.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "vault"
            build(root)
            with Vault.open(root, embedder=embedder, overrides=overrides) as vault:
                vault.sync()
                result = evaluate(vault, questions)  # type: ignore[arg-type]
        print(json.dumps({"config": name, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
