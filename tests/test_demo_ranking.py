"""Ranking on the demo vault (`memvault init --example`), with the real model: issue 24
item 11. Fixed in the ranking's rules (core/ranking.with_evidence, core/excerpts
worth_a_place), not for these notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memvault.api import Vault
from memvault.vault.template import init_vault

pytestmark = pytest.mark.model

DECISION = "decisions/2024-03-12-why-postgresql.md"


def demo(tmp_path: Path, overrides: dict[str, Any] | None = None) -> Vault:
    root = tmp_path / "demo"
    init_vault(root, example=True)
    vault = Vault.open(root, overrides=overrides)
    vault.sync()
    return vault


def test_search_ranks_the_decision_above_the_status_line_of_the_same_note(tmp_path: Path) -> None:
    """The Status section ("Accepted on 2024-03-12. Supersedes nothing.") took its
    meaning from its title and the Consequences before it, and ranked at 0.5000
    above the Decision section; its own lines say nothing of PostgreSQL."""
    with demo(tmp_path) as vault:
        hits = [h for h in vault.search("postgres migration", k=10) if h.path == DECISION]
        sections = [h.heading[-1] for h in hits]
        assert "Decision" in sections and "Status" in sections
        assert sections.index("Decision") < sections.index("Status"), sections


def test_context_on_the_schema_decision_does_not_open_with_how_sarah_likes_to_talk(
    tmp_path: Path,
) -> None:
    """It opened with "Prefers async communication" (people/sarah-chen.md): her note
    answers (she drove the decision), and its weight carried every line of it over the
    filler bar. A line is admitted on its own evidence now."""
    with demo(tmp_path) as vault:
        ctx = vault.context("What did we decide about the database schema?")
    assert "Prefers async communication" not in ctx.text
    assert any(s.path == DECISION for s in ctx.sources)
    first = next(s for s in ctx.sources if s.why != "index")
    assert first.line_start != 17 or first.path != "people/sarah-chen.md"
