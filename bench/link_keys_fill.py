"""Time the schema 18 -> 19 fill of link_keys on an index.db, in a transaction rolled back
(3 runs): PYTHONPATH=daemon python bench/link_keys_fill.py INDEX_DB"""

import sqlite3
import sys
import time

from memvault.index.link_keys import fill_link_keys

db = sqlite3.connect(sys.argv[1], isolation_level=None)
for _ in range(3):
    db.execute("BEGIN")
    t = time.process_time()
    w = time.perf_counter()
    n = fill_link_keys(db, "?")
    print(
        "files",
        n,
        "cpu",
        round(time.process_time() - t, 2),
        "wall",
        round(time.perf_counter() - w, 2),
    )
    db.execute("ROLLBACK")
