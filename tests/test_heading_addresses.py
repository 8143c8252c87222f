"""A hit's address (``[[path#heading]]``) and a context's cite lead back to their
section, whatever the heading holds: Chinese, ``#``, ``|``, ``]]``, ``%%``. A heading
with ``#`` gave ``[[projects/项目计划#风险 & 问题 #1]]``, which Obsidian (and ``get``)
reads as the heading ``1`` under ``风险 & 问题``: no such section."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import note, open_vault, write
from memvault.core.wikilinks import address_parts

HEADINGS = {
    "数据库 设计": "我们决定使用 PostgreSQL 作为数据库 kiwi",
    "风险 & 问题 #1": "性能风险 fern",
    "Owners | backups": "Ana keeps the backups moss",
    "See [[other]] notes": "a heading with a link lichen",
    "Done 50%% so far": "half of it clover",
}
ANCHORS = {  # as the link writes them: what would break the link as a space
    "数据库 设计": "数据库 设计",
    "风险 & 问题 #1": "风险 & 问题 1",
    "Owners | backups": "Owners backups",
    "See [[other]] notes": "See other notes",
    "Done 50%% so far": "Done 50 so far",
}


@pytest.mark.parametrize("heading", HEADINGS)
def test_a_hits_address_reads_back_its_section(tmp_path: Path, heading: str) -> None:
    filler = "\n\n".join(f"Line {i} of the plan's notes on schedules." for i in range(60))
    body = "\n\n".join(f"## {h}\n\n{text}\n\n{filler}" for h, text in HEADINGS.items())
    write(tmp_path, "projects/项目计划.md", note("项目计划", "plan", body))
    word = HEADINGS[heading].rsplit(" ", 1)[1]
    with open_vault(tmp_path) as vault:
        vault.sync()
        [hit] = [h for h in vault.search(word, k=5) if h.heading and h.heading[-1] == heading]
        assert hit.address == f"[[projects/项目计划#{ANCHORS[heading]}]]"
        path, anchor = address_parts(hit.address) or ("", None)
        section = vault.get(hit.address)
        assert (section.heading, section.line_start) == (heading, hit.line_start), section
        assert HEADINGS[heading] in section.text and len(section.text) < len(body) / 4
        cited = vault.context(word, budget=400).text  # each cite reads back too
        cites = [line.split("]]")[0] + "]]" for line in cited.split("\n") if "项目计划" in line]
        assert cites and all(vault.get(c).path == "projects/项目计划.md" for c in cites)
        assert path == "projects/项目计划" and anchor == ANCHORS[heading]
