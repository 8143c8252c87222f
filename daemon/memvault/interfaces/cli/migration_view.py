"""How `memvault migrate` reads to a person (--json gives the data itself)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from memvault.migration import MigrationReport

SHOWN = 40


def render_migration(console: Console, r: MigrationReport) -> None:
    verb = "would create" if r.dry_run else "created"
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("note", "kind", "lines", "action"):
        table.add_column(col)
    for row in r.plan[:SHOWN]:
        table.add_row(row.path, row.kind, row.lines, row.action)
    console.print(table)
    if len(r.plan) > SHOWN:
        console.print(f"… and {len(r.plan) - SHOWN} more notes (--json lists them all)")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(r.notes_by_kind.items()))
    console.print(
        f"{len(r.plan)} notes planned ({kinds}); {verb} "
        f"{len(r.created) if not r.dry_run else sum(x.action == 'create' for x in r.plan)}, "
        f"{len(r.unchanged)} already there, {len(r.kept)} kept as they are (changed since)"
        + (f", {len(r.merged)} merged into the note already there" if r.merged else "")
    )
    tokens = lambda s: f", {s.tokens} tokens" if s.tokens is not None else ""  # noqa: E731
    console.print(
        f"MEMORY.md before: {r.before.lines} lines{tokens(r.before)}; "
        f"after: {r.after.lines} lines{tokens(r.after)}"
    )
    console.print(f"originals kept untouched in: {', '.join(r.archive)}")
    if r.replaced_bytes:
        console.print(f"{r.replaced_bytes} invalid UTF-8 byte sequences were kept as \ufffd")
    if r.uncertain:
        console.print(f"{len(r.uncertain)} things were uncertain:")
        for u in r.uncertain[:SHOWN]:
            where = f"{u['source']}:{u['line']}" if u["line"] else u["source"]
            console.print(f"  {where}: {u['message']}")
        if len(r.uncertain) > SHOWN:
            console.print(f"  … and {len(r.uncertain) - SHOWN} more (--json)")
    timing = f"planned in {r.plan_seconds:.2f}s, written in {r.write_seconds:.2f}s"
    if r.sync:
        timing += (
            f", indexed in {r.index_seconds:.1f}s ({r.sync['embedded_chunks']} chunks embedded"
        )
        pending = r.pending_vectors
        timing += f"; {pending} left for the next sync or the daemon)" if pending else ")"
    console.print(timing)
