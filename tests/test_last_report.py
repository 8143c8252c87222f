"""The last sync's report in index.db's meta: packed when big, read back whole by status."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers import new_vault, open_vault, write
from memvault.engine.status import PACK_ABOVE, pack_report, unpack_report


def test_a_first_sync_of_many_notes_keeps_its_report_packed_and_status_reads_it_whole(
    tmp_path: Path,
) -> None:
    root = new_vault(tmp_path)
    for i in range(400):
        write(root, f"people/person-{i:04}.md", f"# Person {i}\n\nmet on day {i}\n")
    with open_vault(root) as v:
        report = v.sync()
        status = v.status()
    created = sorted(report.created)
    assert len(created) >= 400
    assert sorted(status["last_sync"]["created"]) == created  # every path, as the sync said
    db = sqlite3.connect(root / ".memvault" / "index.db")
    (stored,) = db.execute("SELECT value FROM meta WHERE key = 'last_sync'").fetchone()
    db.close()
    assert stored.startswith("z:")
    assert len(stored) * 4 < sum(len(p) + 4 for p in created)  # a quarter of the paths alone


def test_a_small_report_stays_json_and_an_old_plain_report_still_reads() -> None:
    small = {"created": ["a.md"], "warnings": []}
    assert pack_report(small) == '{"created": ["a.md"], "warnings": []}'
    big = {"created": [f"notes/n{i:06}.md" for i in range(2000)]}
    packed = pack_report(big)
    plain = len('{"created": []}') + sum(len(p) + 4 for p in big["created"])
    assert plain > PACK_ABOVE and packed.startswith("z:") and len(packed) * 4 < plain
    assert unpack_report(packed) == big
    assert unpack_report('{"created": ["x.md"]}') == {"created": ["x.md"]}  # memvault before
    assert unpack_report(None) is None and unpack_report("") is None
