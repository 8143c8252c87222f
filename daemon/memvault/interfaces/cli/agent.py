"""The commands agents use: search, context, get, add, log, mcp.

One writer per vault: each command opens the vault with ``Vault.open(root, mode=...)``,
which decides where it goes — a running daemon (no model load per call) or the vault
opened in this process (see ``memvault.backends``). Heavy modules (the engine, mcp) are
imported inside the commands, so ``memvault --help`` stays light.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memvault.interfaces.cli.common import (
    JsonOpt,
    VaultOpt,
    emit_json,
    err,
    fail,
    handled,
    out,
    progress_bar,
    resolve_vault,
)

if TYPE_CHECKING:
    from memvault.api import Mode, Vault
    from memvault.core.results import Context, Hit

SLOW_ALONE = 5.0  # seconds: a command that opened the index itself past this says `up`


class Category(StrEnum):
    people = "people"
    projects = "projects"
    decisions = "decisions"
    logs = "logs"


# a person typing a category in the singular, or as their folder spells it (People/)
_SINGULAR = {"person": "people", "project": "projects", "decision": "decisions", "log": "logs"}


def _category(value: str) -> str:
    """``add``'s category as typed: any case, singular or plural, a slash after it."""
    word = value.strip().strip("/").casefold()
    try:
        return Category(_SINGULAR.get(word, word)).value
    except ValueError:
        names = ", ".join(c.value for c in Category)
        raise typer.BadParameter(f"{value!r} is not one of {names}") from None


FolderOpt = Annotated[
    str | None, typer.Option("--folder", help="Only notes under this folder, e.g. decisions.")
]
TagOpt = Annotated[
    list[str] | None,
    typer.Option("--tag", help="Only notes carrying this tag (repeat: all of them)."),
]
SinceOpt = Annotated[
    str | None, typer.Option("--since", help="Only notes dated on or after YYYY-MM-DD.")
]
UntilOpt = Annotated[
    str | None, typer.Option("--until", help="Only notes dated on or before YYYY-MM-DD.")
]
WhereOpt = Annotated[
    list[str] | None,
    typer.Option("--where", help="Only notes whose frontmatter has key=value (repeatable)."),
]
PathOpt = Annotated[
    str | None, typer.Option("--path", help="Only notes whose path matches this glob.")
]


def parse_pairs(values: Sequence[str] | None, option: str) -> dict[str, str] | None:
    """``["status=active", ...]`` -> ``{"status": "active"}``; bad syntax is a usage error."""
    pairs: dict[str, str] = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected key=value, got {item!r}", param_hint=option)
        if any(c < " " or c == "\x7f" for c in key):  # never silently "fixed" into another name
            raise typer.BadParameter(
                f"{key!r} is not a field name: it holds a control character", param_hint=option
            )
        pairs[key.strip()] = value
    return pairs or None


def filters_of(
    folder: str | None,
    tags: Sequence[str] | None,
    since: str | None,
    until: str | None,
    where: Sequence[str] | None,
    path: str | None,
) -> dict[str, Any]:
    return {
        "folder": folder,
        "tags": list(tags) if tags else None,
        "since": since,
        "until": until,
        "where": parse_pairs(where, "--where"),
        "path": path,
    }


@contextmanager
def bad_arguments(as_json: bool = False) -> Iterator[None]:
    """The library rejects bad argument values with ValueError: a usage error (exit 2)."""
    try:
        yield
    except typer.BadParameter as exc:
        if as_json:
            fail(exc.format_message(), 2, as_json=True)
        raise
    except ValueError as exc:
        if as_json:
            fail(str(exc), 2, as_json=True)
        raise typer.BadParameter(str(exc)) from None


@contextmanager
def memory(vault: Path | None, mode: Mode) -> Iterator[Vault]:
    """The vault ``--vault`` names, opened for ``mode``, with a progress bar on its sync.
    A command that opened the index itself (no daemon) and took past ``SLOW_ALONE``
    says so on stderr: a large vault's index is read whole at each such open (100,000
    notes: ~15 s), once for the daemon's life with one."""
    from memvault.api import Vault

    began = time.monotonic()
    with (
        progress_bar("indexing") as bar,
        Vault.open(resolve_vault(vault), mode=mode, progress=bar) as m,
    ):
        yield m
        took = time.monotonic() - began
        if m.daemon is None and took > SLOW_ALONE:
            err.print(
                f"took {took:.0f} s: with no daemon, each command opens the index itself; "
                f"`memvault up {shlex.quote(str(m.root))}` keeps it open for the next",
                markup=False,
            )


# -- printing -------------------------------------------------------------------------


def print_hits(hits: Sequence[Hit]) -> None:
    from memvault.core.context import COPY_SAYS

    if not hits:
        err.print("no matches", markup=False)
        return
    for i, h in enumerate(hits, 1):
        out.print(
            f"{i:>2}. {h.address}  {h.score:.4f}  {h.path}:{h.line_start}-{h.line_end}",
            markup=False,
            emoji=False,
        )
        out.print(f"    {' '.join(h.snippet.split())}", markup=False, emoji=False)
        if h.this_copy in COPY_SAYS:  # a reader's copy lacks the note (docs/TEAM.md)
            out.print(f"    ({COPY_SAYS[h.this_copy]})", markup=False, emoji=False)
        if h.copies:  # the same text in other places, kept off the page (core/copies)
            out.print(f"    {copies_line(h)}", markup=False, emoji=False)
    if pending := sum(h.pending for h in hits):  # (every hit while the model is away)
        err.print(
            f"{pending} of {len(hits)} hits found by keywords alone (their vectors still "
            "pending, or the model's process away for the moment: `memvault status`)",
            markup=False,
        )


def copies_line(hit: Hit) -> str:
    """``+ 3 copies: a.md, b.md`` (the notes named on the hit; ``, …`` when more hold one)."""
    named = ", ".join(hit.copy_paths)
    more = ", …" if hit.copies > len(hit.copy_paths) else ""
    word = "copy" if hit.copies == 1 else "copies"
    return f"+ {hit.copies} {word} of this text" + (
        f": {named}{more}" if named else " in this note"
    )


def print_context(ctx: Context) -> None:
    sys.stdout.write(ctx.text if ctx.text.endswith("\n") else ctx.text + "\n")
    err.print(f"{ctx.tokens}/{ctx.budget} tokens from {len(ctx.sources)} sources", markup=False)


def write_text(text: str) -> None:
    """Note text exactly as it is: no markup, emoji codes or tab expansion."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# -- the commands ----------------------------------------------------------------------


def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=100, help="How many hits.")] = 10,
    folder: FolderOpt = None,
    tag: TagOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    where: WhereOpt = None,
    path: PathOpt = None,
    group: Annotated[bool, typer.Option("--group", help="At most one hit per note.")] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid (keyword + meaning) search: address, score and snippet per hit."""
    with handled(as_json), bad_arguments(as_json):
        filters = filters_of(folder, tag, since, until, where, path)
        with memory(vault, "query") as m:
            hits = m.search(query, k, group=group, **filters)
    if as_json:
        emit_json({"hits": [h.to_dict() for h in hits]})
    else:
        print_hits(hits)


def context(
    query: Annotated[str, typer.Argument(help="The question to gather memory for.")],
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget", min=1, max=100_000, help="Token budget (default: context.budget, 2000)."
        ),
    ] = None,
    folder: FolderOpt = None,
    tag: TagOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    where: WhereOpt = None,
    path: PathOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """MEMORY.md plus the most relevant note sections, cited, within a token budget."""
    with handled(as_json), bad_arguments(as_json):
        filters = filters_of(folder, tag, since, until, where, path)
        with memory(vault, "query") as m:
            ctx = m.context(query, budget, **filters)
    if as_json:
        emit_json(ctx.to_dict())
    else:
        print_context(ctx)


def get(
    path: Annotated[str, typer.Argument(help="Vault-relative note path, e.g. people/ana.md.")],
    lines: Annotated[
        str | None, typer.Option("--lines", help="A line range: 10:20, 10: or :20.")
    ] = None,
    heading: Annotated[
        str | None, typer.Option("--heading", help="Only the section under this heading.")
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a note, one section of it, or a line range."""
    with handled(as_json), bad_arguments(as_json), memory(vault, "read") as m:
        note = m.get(path, lines=lines, heading=heading)
    if as_json:
        emit_json(note.to_dict())
    else:
        write_text(note.text)
    if note.cut is not None:  # said on stderr: stdout is the note's text (or the JSON)
        err.print(f"note: {note.cut}")


def add(
    category: Annotated[
        str,
        typer.Argument(
            parser=_category,
            metavar="CATEGORY",
            help="Where the note goes: people, projects, decisions or logs (a person, "
            "project, decision, log: the same).",
            show_default=False,
        ),
    ],
    named: Annotated[
        str | None,
        typer.Argument(metavar="[TITLE]", help="The note's title (its file name), or --title."),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="The note's title (its file name).")
    ] = None,
    summary: Annotated[
        str | None, typer.Option("--summary", help="One line for MEMORY.md and search.")
    ] = None,
    field: Annotated[
        list[str] | None,
        typer.Option("--field", help="A frontmatter field key=value (repeatable)."),
    ] = None,
    body: Annotated[
        str | None,
        typer.Option(
            "--body",
            help="The note's body; '-' reads it from stdin (not for logs: `memvault log`).",
        ),
    ] = None,
    update: Annotated[
        bool,
        typer.Option(
            "--update",
            help="Change the note if it exists already: --body is added at its end "
            "(nothing in it is replaced) unless --section names the part to replace.",
        ),
    ] = False,
    section: Annotated[
        str | None,
        typer.Option(
            "--section",
            help="Replace only the text under this heading with --body (an existing note "
            "is changed so with or without --update).",
        ),
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a note from the vault's template (an existing one changes only with
    --update or --section): memvault add people "Ana Pérez" --summary "Payments lead"."""
    with handled(as_json), bad_arguments(as_json):
        if named is not None and title is not None and named != title:
            raise typer.BadParameter(f"two titles, {named!r} and --title {title!r}: give one")
        title = named if title is None else title
        if title is None:
            raise typer.BadParameter('give the note\'s title: memvault add people "Ana Pérez"')
        text = sys.stdin.read() if body == "-" else body
        fields = parse_pairs(field, "--field")
        with memory(vault, "write") as m:
            result = m.add(
                category,
                title,
                summary=summary,
                fields=fields,
                body=text,
                update=update,
                section=section,
            )
    if as_json:
        emit_json(result.to_dict())
    elif not result.written:  # (an update whose body the note holds already)
        out.print(f"{result.path} holds this already: nothing written", markup=False)
    else:
        out.print(f"{'created' if result.created else 'updated'} {result.path}", markup=False)
    if not as_json:
        _warn(result.report.warnings)
        if result.note:  # a note grown long (core/note_size): said while it can be split
            err.print(f"note: {result.note}", markup=False, highlight=False)


def log(
    text: Annotated[str, typer.Argument(help="What happened (one line).")],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a timestamped line to today's log (logs/YYYY-MM-DD.md), after its last entry."""
    with handled(as_json), bad_arguments(as_json), memory(vault, "write") as m:
        result = m.log(text)
    if as_json:
        emit_json(result.to_dict())
    elif not result.written:  # an agent's retried call, a loop: the day says it once
        out.print(
            f"{result.path} has this line at this minute already: nothing written", markup=False
        )
        _warn(result.report.warnings)
    else:
        out.print(f"logged to {result.path}", markup=False)
        _warn(result.report.warnings)


def _warn(warnings: tuple[str, ...]) -> None:
    for warning in warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)


def mcp(vault: VaultOpt = None) -> None:
    """Serve the vault to an AI agent over MCP (stdio): memory_search, memory_context,
    memory_get, memory_write, memory_log and memory_status."""
    with handled():
        root = resolve_vault(vault)
        from memvault.interfaces.mcp_server import serve

        serve(root)
