"""``memvault index move``: the vault's index to PostgreSQL and back (engine/index_move.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from memvault import errors as E
from memvault.interfaces.cli.common import JsonOpt, VaultOpt, emit_json, handled, out, progress_bar

index_app = typer.Typer(
    name="index",
    help="Where the search index lives: SQLite here, or PostgreSQL.",
    no_args_is_help=True,
)


def move(
    to: Annotated[str, typer.Option("--to", help="sqlite or postgres")],
    dsn: Annotated[str, typer.Option("--dsn", help="postgresql://... (for --to postgres)")] = "",
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Build the index in the other store from this one, reusing every stored vector
    (the model runs only for a text the index never held), then switch
    ``[index] store`` in .memvault/config.toml. The old index is left as it was."""
    from memvault.config import VaultConfig, is_dsn
    from memvault.engine.index_move import move_index, with_store
    from memvault.index.pg_schema import schema_name
    from memvault.index.pg_store import redact
    from memvault.interfaces.cli.common import resolve_vault
    from memvault.vault import runfile

    with handled(as_json):
        root = resolve_vault(vault)
        config = VaultConfig.load(root)
        if to not in ("sqlite", "postgres"):
            raise E.ConfigError("--to must be sqlite or postgres")
        if to == config.index.store:
            raise E.ConfigError(f"the index is in {to} already")
        if to == "postgres" and not (dsn or config.index.dsn):
            raise E.ConfigError("--to postgres needs --dsn postgresql://...")
        if dsn and not is_dsn(dsn):  # as config.toml's and $MEMVAULT_INDEX_DSN's (exit 3)
            raise E.ConfigError(
                "--dsn: a PostgreSQL connection string is needed, "
                '"postgresql://user@host/db" or libpq\'s "host=... dbname=... user=..."'
            )
        if runfile.running(root) is not None:
            raise E.LockHeld("a daemon serves this vault: stop it first (memvault daemon stop)")
        target = with_store(config, to, dsn)
        with progress_bar("moving the index") as bar:
            report = move_index(config, target, progress=bar)
        shown = redact(target.index.dsn) if to == "postgres" else str(config.state_dir)
        # the schema by name: config.toml travels by git, and a copy of the vault under
        # another folder name would otherwise write an index of its own (memvault_<name>)
        schema = schema_name(root, config.index.schema) if to == "postgres" else ""
        written = _set_store(root / ".memvault" / "config.toml", to, target.index.dsn, schema)
    if as_json:
        emit_json({"to": to, "where": shown, "vectors_copied": report.vectors_copied,
                   "chunks": report.chunks, "embedded": report.embedded,
                   "config_written": written})  # fmt: skip
        return
    out.print(
        f"index moved to {to} ({shown}): {report.chunks} chunks, {report.vectors_copied} "
        f"stored vectors reused, {report.embedded} texts embedded"
    )
    if written:  # a person's file changed: said, with what git is to do with it
        what = f'store = "{to}"' + (f', its dsn and schema = "{schema}"' if schema else "")
        out.print(
            f".memvault/config.toml: {what} written under [index]; commit it, so each clone "
            "of the vault reads this index (git carries it)"
        )
    else:
        out.print(
            "the DSN holds a password, so it is not written to config.toml (git carries "
            "that file to every clone): set MEMVAULT_INDEX_STORE=postgres, MEMVAULT_INDEX_DSN "
            f"and MEMVAULT_INDEX_SCHEMA={schema} here and on each clone, or put the password "
            'in ~/.pgpass and put store = "postgres", the DSN without its password and '
            f'schema = "{schema}" under [index] in .memvault/config.toml'
        )


CONFIG_TRIES = 20  # config.toml's saves (open for writing, just saved) waited for, 0.25 s apart


def _set_store(path: Path, store: str, dsn: str, schema: str = "") -> bool:
    """``[index] store`` (and ``dsn`` and ``schema`` for postgres, unless the DSN holds a
    password) in config.toml, the rest of the file byte for byte; False when not written.
    Atomic and compare-and-swap (``Swapper``), as every write of a person's file: a save
    in progress (the file open for writing, or saved within the quiet period) is waited
    for, up to ``CONFIG_TRIES`` looks, then ``WriteConflict`` naming the settings; a save
    between the read and the swap is read again. It put its own version in place over
    such a save (a review, rev56b: the rest of the person's save went into the file
    replaced)."""
    import time

    from memvault.core.text import sha256_bytes
    from memvault.index.pg_conn import has_password
    from memvault.vault.swap import Swapper

    if store == "postgres" and has_password(dsn):  # either form (key=value too)
        return False
    schema = schema if store == "postgres" else ""
    new = [f'store = "{store}"\n']
    if store == "postgres":
        new += [f"dsn = {json.dumps(dsn)}\n"] + ([f'schema = "{schema}"\n'] if schema else [])
    swapper, why = Swapper(), "it kept changing"
    for _ in range(CONFIG_TRIES):
        try:
            raw: bytes | None = path.read_bytes()
        except FileNotFoundError:
            raw = None
        text = (raw or b"").decode("utf-8")
        after = _with_store(text, new, bool(schema))
        if after == text:
            return True  # the file says so already: nothing written
        try:
            done, _ = swapper.swap(
                path, after.encode("utf-8"), None if raw is None else sha256_bytes(raw)
            )
        except E.FileBusy as exc:
            why = str(exc).split(": ", 1)[-1]
            time.sleep(0.25)
            continue
        if done:
            return True
    settings = ", ".join(line.strip() for line in new)
    raise E.WriteConflict(
        f"the index was built in {store}, but .memvault/config.toml was not switched to it "
        f"({why}; nothing was written over it): put {settings} under [index] in it, or "
        "run `memvault index move` again once it is saved"
    )


def _with_store(text: str, new: list[str], schema: bool) -> str:
    """``text`` (config.toml) with ``new`` (its ``[index]`` settings' lines) in place of
    those settings (``schema`` too when set), the rest byte for byte."""
    replaced = r"\s*(store|dsn|schema)\s*=" if schema else r"\s*(store|dsn)\s*="
    out_lines: list[str] = []
    section = None
    placed = False
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            section = header.group(1).strip()
            out_lines.append(line)
            if section == "index" and not placed:
                out_lines += new
                placed = True
            continue
        if section == "index" and re.match(replaced, line):
            continue
        out_lines.append(line)
    if not placed:
        out_lines += ["\n[index]\n", *new]
    return "".join(out_lines)


index_app.command("move")(move)
