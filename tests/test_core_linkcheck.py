"""core/linkcheck.py: what is wrong with one link, anchors included."""

from __future__ import annotations

import pytest

from memvault.core.anchors import Outline, outline
from memvault.core.linkcheck import link_problem
from memvault.core.wikilinks import LinkIndex

NOTES = {
    "Functions.md": "# Functions\n\n## `hasTag()`\n\ntext\n",
    "Sync/Limitations.md": "## How large can each remote vault be?\n\nLarge. ^size\n",
    "people/a.md": "# A\n",
    "projects/a.md": "# A\n",
    "self.md": "# Self\n\n## Local\n\nSee [[#Local]].\n",
}
FILES = [*NOTES, "Attachments/Engelbart.jpg", "Docs/manual.pdf"]
INDEX = LinkIndex(FILES, {"people/a.md": ["Anna"]})


def outline_of(path: str) -> Outline | None:
    return outline(NOTES[path]) if path in NOTES else None


@pytest.mark.parametrize(
    ("target", "anchor", "verdict"),
    [
        ("Functions", "hasTag", None),
        ("Functions", "hasTag()", None),
        ("Functions", "Functions#hasTag", None),
        ("Functions", "has-tag", "anchor"),
        ("Limitations", "How large can each remote vault be", None),
        ("Limitations", "^SIZE", None),
        ("Limitations", "^missing", "anchor"),
        ("Limitations", "", None),
        ("Limitations", None, None),
        ("Engelbart.jpg", "outline", None),  # an image's #outline is not a heading
        ("manual.pdf", "page=3", None),
        ("", "Local", None),  # [[#Local]] in self.md
        ("", "Elsewhere", "anchor"),
        ("nowhere", "x", "unresolved"),
        ("a", "A", "ambiguous"),
        ("Anna", None, "alias"),
    ],
)
def test_link_problems(target: str, anchor: str | None, verdict: str | None) -> None:
    problem = link_problem("self.md", 7, target, anchor, INDEX, outline_of)
    assert (problem.verdict if problem else None) == verdict
    if problem:
        assert (problem.source, problem.line, problem.target, problem.anchor) == (
            "self.md",
            7,
            target,
            anchor,
        )


def test_an_anchor_in_a_note_that_cannot_be_read_is_not_judged() -> None:
    assert link_problem("x.md", 1, "Functions", "nothing", INDEX, lambda path: None) is None


def test_a_missing_anchor_names_the_note_it_looked_in() -> None:
    problem = link_problem("x.md", 3, "Functions", "hasTags", INDEX, outline_of)
    assert problem is not None
    assert problem.candidates == ("Functions.md",)
    assert problem.to_dict()["anchor"] == "hasTags"
