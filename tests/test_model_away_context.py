"""The model's process away (ModelAway: index/child_watch.py) in the midst of a context:
its question's vector made, then the one of the question without its common words
refused. The context is still given, ranked by the question's vector alone, as a search
then answers by keywords; before, the context failed with the error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import HashEmbedder, open_vault, write
from memvault.errors import ModelAway


def test_a_context_whose_focus_vector_is_refused_is_still_given(tmp_path: Path) -> None:
    root = tmp_path / "v"
    for i in range(4):  # "Ana" in every note: a common word, the question's focus without it
        write(root, f"people/p{i}.md", f"# P{i}\n\nAna met the team {i} about kiwis {i}.\n")
    write(root, "projects/orchard.md", "# Orchard\n\nAna plants kiwis in the orchard.\n")
    embedder = HashEmbedder()
    with open_vault(root, embedder=embedder) as v:
        v.sync()
        asked: list[list[str]] = []
        embed = embedder.embed

        def away_after_the_first(texts: Any) -> Any:
            asked.append(list(texts))
            if len(asked) > 1:
                raise ModelAway("the embedding model's process failed twice in a row")
            return embed(texts)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(embedder, "embed", away_after_the_first)
            ctx = v.context("Ana orchard kiwis", budget=400)
        assert len(asked) == 2 and "Ana" not in asked[1][0]  # the focus was asked for
        assert "orchard" in ctx.text
