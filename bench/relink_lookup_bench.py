"""A rename (or a delete) of one note with a few backlinks, with no daemon: CPU of its link
part and of the whole sync, two codes alternated on their own copies of an indexed vault
(issue 27, branch relink60).

    python bench/relink_lookup_bench.py --runs 5 --op rename --note decisions/n000010.md \\
        --code main=/tmp/relink60-main/daemon:/tmp/relink60-v100k-main \\
        --code branch=/work/wt-relink60/daemon:/tmp/relink60-v100k

Each code gets its own copy (an index a newer code upgraded is refused by an older one).
Each run is a fresh process (`python -c`, the hash embedder) that opens the vault for a
write, renames the note on disk (``--op rename``: to ``<name>-moved.md``, and back the
next run) or deletes it (``--op delete``: written back, and synced, before the next run,
untimed), then syncs that change as a watcher reports it (``Vault.sync(paths, moves=)``,
what the memory tool and the daemon's watcher do); ``--op get`` reads the note as
MEMORY.md links it, its path without ``.md`` (``Vault.get``; "sync" is then its CPU);
``--op tool-delete`` deletes it with the memory tool (``VaultMemoryTool``: "sync" is
the call's CPU) and puts it back, untimed. "links": the CPU inside the link maps
(``LinkIndex`` built and asked, ``Catalogue.link_index*``, ``StoredLinks``,
``KeyedLinks``), counted once when nested; "sync": the CPU of the sync; "process": the
child's user+sys CPU (imports included). Medians per code; the first run of each code
(an index upgrade, the file cache warmed) is timed apart. ``--profile FILE``: each
code's last run under cProfile, written to FILE.<name>.
"""

from __future__ import annotations

import argparse

from link_lookup_bench import TIMER, alternate, run_child

CHILD = (
    TIMER
    + r"""
import os
from pathlib import Path
targets = [(wikilinks.LinkIndex, n) for n in
           ("__init__", "resolve", "__contains__", "with_files", "name_matches", "link_text")]
targets += [(catalogue.Catalogue, n) for n in
            ("link_index", "link_index_with", "link_lookup", "link_index_before")]
try:
    from memvault.engine import stored_links
    targets += [(stored_links.StoredLinks, n) for n in
                ("__init__", "resolve", "__contains__", "aliases_of", "index_for")]
except ImportError:
    pass
try:
    from memvault.engine import relink_links
    targets += [(relink_links, n) for n in ("before_moves", "after_moves")]
    targets += [(relink_links.KeyedLinks, n) for n in
                ("resolve", "__contains__", "name_matches", "with_files")]
except ImportError:
    pass
for owner, name in targets:
    if hasattr(owner, name):
        setattr(owner, name, timed(getattr(owner, name)))
root, note, op, prof = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
moved = note[:-3] + "-moved.md"
v = Vault.open(root, mode="write")
if op == "get":  # a read of one note as MEMORY.md links it: its path without ``.md``
    t = time.process_time()
    got = v.get(note[:-3])
    synced = time.process_time() - t
    v.close()
    print(json.dumps({"links": spent[0], "sync": synced, "relinked": 0}))
    sys.exit(0)
if op == "tool-delete":  # the memory tool's delete (its answer names the links left)
    from memvault.integrations.anthropic import VaultMemoryTool
    t = time.process_time()
    said = VaultMemoryTool(v).call({"command": "delete", "path": "/memories/" + note})
    synced = time.process_time() - t
    assert "Successfully deleted" in said and "Links to it" in said, said
    os.replace(root / ".trash" / note, root / note)  # back for the next run (untimed)
    v.sync([note])
    v.close()
    print(json.dumps({"links": spent[0], "sync": synced, "relinked": 0}))
    sys.exit(0)
if op == "rename":
    old, new = (note, moved) if (root / note).exists() else (moved, note)
    os.rename(root / old, root / new)
    paths, moves = [old, new], [(old, new)]
else:
    keep = root.parent / (root.name + ".deleted")
    keep.write_bytes((root / note).read_bytes())
    os.remove(root / note)
    paths, moves = [note], []
if prof:
    import cProfile
    pr = cProfile.Profile()
    pr.enable()
t = time.process_time()
r = v.sync(paths, moves=moves)
synced = time.process_time() - t
if prof:
    pr.disable()
    pr.dump_stats(prof)
assert (r.moved if op == "rename" else r.deleted), r
relinked = len(r.relinked)
if op == "delete":  # back for the next run (untimed)
    (root / note).write_bytes(keep.read_bytes())
    v.sync([note])
v.close()
print(json.dumps({"links": spent[0], "sync": synced, "relinked": relinked}))
"""
)


def run(code: str, vault: str, note: str, op: str, prof: str) -> dict[str, float]:
    return run_child(CHILD, code, vault, note, op, prof)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", action="append", required=True, help="name=PYTHONPATH:VAULT")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--op", choices=("rename", "delete", "get", "tool-delete"), default="rename")
    ap.add_argument("--note", default="decisions/n000010.md")
    ap.add_argument("--profile", default="")
    args = ap.parse_args()

    def one(name: str, code: str, vault: str, i: int) -> dict[str, float]:
        prof = f"{args.profile}.{name}" if args.profile and i == args.runs else ""
        return run(code, vault, args.note, args.op, prof)

    alternate(args.code, args.runs, one)


if __name__ == "__main__":
    main()
