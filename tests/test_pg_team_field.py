"""Field test of a team's index on PostgreSQL (docs/TEAM.md) with the vault's copies in
git: what a clone under another folder name reads, and what a reader's `status` says of
its files. A real server (pgserver), real git, the CLI as a process."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from helpers import make_vault, memvault_env, run_memvault


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def folder_name(pg_server: Any, request: pytest.FixtureRequest) -> Any:
    """A vault folder name of this test's own; the schema memvault would derive from it
    (``memvault_<name>``) is dropped before and after."""
    name = "fieldteam_" + hashlib.sha256(request.node.name.encode()).hexdigest()[:10]
    drop = f'DROP SCHEMA IF EXISTS "memvault_{name}" CASCADE'
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(drop)
    yield name
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(drop)


def _clone(src: Path, dst: Path) -> Path:
    """What `git clone` of the vault gives: the notes and the tracked settings."""
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "-c", "user.email=a@x", "-c", "user.name=a", "commit", "-qm", "vault")
    dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(src), str(dst)], check=True)
    return dst


def _moved_to_postgres(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> tuple[Path, dict[str, str]]:
    """A writer's vault indexed, then its index moved to the server by the CLI."""
    dsn = str(pg_server.get_uri())
    env = memvault_env(tmp_path)
    writer = make_vault(tmp_path / "build-01", folder_name)
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    moved = run_memvault(
        "index", "move", "--to", "postgres", "--dsn", dsn, "--vault", str(writer), env=env
    )
    assert moved.returncode == 0, moved.stderr
    # a person's file changed is said, and what to do with it (it said nothing)
    said = " ".join(moved.stdout.split())
    written = f'store = "postgres", its dsn and schema = "memvault_{folder_name}" written'
    assert f".memvault/config.toml: {written} under [index]; commit it" in said, said
    return writer, env


def _indexed(pg_server: Any, schema: str) -> list[Any]:
    """The note paths the index in ``schema`` holds."""
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        return conn.execute(f'SELECT path FROM "{schema}".notes ORDER BY path').fetchall()


def _other_team(tmp_path: Path, folder_name: str) -> Path:
    """Another team's new vault under the same folder name, one note of its own."""
    from memvault.vault.template import init_vault

    other = tmp_path / "other-team" / folder_name
    init_vault(other)
    (other / "people" / "zed.md").write_text("# Zed\n\nZed likes giraffes.\n", encoding="utf-8")
    return other


def test_index_move_names_the_schema_so_a_clone_under_another_folder_name_reads_it(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """`index move --to postgres` wrote store and dsn to config.toml, which git carries,
    but not the schema: a colleague's clone in a folder of another name derived a schema
    of its own (memvault_<its folder>), and its `memvault up` became a second writer of a
    second index, silently. The move names the schema it built."""
    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    config = (writer / ".memvault" / "config.toml").read_text(encoding="utf-8")
    assert f'schema = "memvault_{folder_name}"' in config
    assert config.count("\nschema =") == 1  # the commented default's line replaced

    clone = _clone(writer, tmp_path / "laptop" / "our-memory")
    asked = run_memvault("status", "--json", "--vault", str(clone), env=env)
    where = json.loads(asked.stdout)["index"]["where"]
    assert where["schema"] == f"memvault_{folder_name}"
    question = ("search", "which database did we choose", "--json")
    theirs = json.loads(run_memvault(*question, "--vault", str(clone), env=env).stdout)
    ours = json.loads(run_memvault(*question, "--vault", str(writer), env=env).stdout)
    assert theirs["hits"] and theirs["hits"] == ours["hits"]
    shutil.rmtree(clone)


def test_a_readers_status_finds_its_clone_of_the_same_files_in_step_with_the_index(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A reader's files come by `git clone`/`pull`: the same bytes as the writer's, other
    modification times. Its `status` compared size and time only and said "index is
    behind the files: N notes changed" of every note, with nothing changed; it reads the
    notes whose size agrees, and names only the one that differs."""
    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    clone = _clone(writer, tmp_path / "laptop" / folder_name)
    asked = run_memvault("status", "--json", "--vault", str(clone), env=env)
    index = json.loads(asked.stdout)["index"]
    assert (index["matches_disk"], index["pending_count"]) == (True, 0)
    said = run_memvault("status", "--vault", str(clone), env=env).stdout
    assert "index matches the files on disk" in said

    person = clone / "people" / "sarah-chen.md"
    person.write_text(person.read_text(encoding="utf-8").replace("a", "e"), encoding="utf-8")
    index = json.loads(run_memvault("status", "--json", "--vault", str(clone), env=env).stdout)[
        "index"
    ]
    assert index["pending"] == ["people/sarah-chen.md"]
    said = run_memvault("status", "--vault", str(clone), env=env).stdout
    assert "index is behind the files: 1 notes changed" in said


def test_vaults_whose_folder_names_are_not_ascii_keep_an_index_each(
    tmp_path: Path, pg_server: Any
) -> None:
    """`Заметки` and `日本語メモ` both became schema `memvault__` (every character outside
    a-z, 0-9 and _ folded to one _): one server, one index for two vaults, each sync
    deleting the other's notes from it and search answering with the other vault's.
    A name losing characters that way gets a digest of itself."""
    from memvault.index.pg_schema import schema_name

    names = ["Заметки", "日本語メモ", "Мои notes", "Наши notes"]
    schemas = [schema_name(tmp_path / n) for n in names]
    assert len(set(schemas)) == len(names), schemas
    assert schema_name(tmp_path / "my-notes") == "memvault_my_notes"  # ASCII: as before
    assert schema_name(tmp_path / "Заметки") == schema_name(tmp_path / "Заметки")  # stable
    env = memvault_env(
        tmp_path, MEMVAULT_INDEX_STORE="postgres", MEMVAULT_INDEX_DSN=str(pg_server.get_uri())
    )
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        for schema in {*schemas[:2], "memvault__"}:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    ru, ja = tmp_path / names[0], tmp_path / names[1]
    assert run_memvault("init", "--example", str(ru), env=env).returncode == 0
    assert run_memvault("init", str(ja), env=env).returncode == 0
    (ja / "会議.md").write_text("# 会議\n\n東京の会議メモ\n", encoding="utf-8")
    for root in (ru, ja, ru):
        synced = run_memvault("sync", "--vault", str(root), env=env)
        assert synced.returncode == 0, synced.stderr
        assert " deleted" in synced.stdout and ", 0 deleted" in synced.stdout
    found = run_memvault("search", "会議", "--json", "--vault", str(ru), env=env).stdout
    assert all(h["path"] != "会議.md" for h in json.loads(found)["hits"])
    found = run_memvault("search", "会議", "--json", "--vault", str(ja), env=env).stdout
    assert [h["path"] for h in json.loads(found)["hits"]][:1] == ["会議.md"]
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        for schema in {*schemas[:2], "memvault__"}:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_status_on_the_writers_machine_with_no_daemon_does_not_call_it_a_reader(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """`status` with no daemon reads the index without taking the writer's lock, and said
    `this process: reader`: on the writer's own machine, with no writer running, where
    `memvault up` (or a write) makes it the writer. It says what this copy is: no writer
    holds the index, the next `up` or write here takes it; a reader only where another
    machine's writer holds it."""
    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    asked = run_memvault("status", "--vault", str(writer), env=env)
    assert "reader" not in asked.stdout, asked.stdout
    assert "writer: no writer running" in asked.stdout, asked.stdout
    assert "`memvault up` here makes this copy the writer" in asked.stdout, asked.stdout
    where = json.loads(run_memvault("status", "--json", "--vault", str(writer), env=env).stdout)
    assert where["index"]["where"]["role"] == "none", where["index"]["where"]
    assert where["index"]["where"]["writer"] is None


def test_a_password_in_config_toml_is_warned_of_and_never_shown(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A first-day user pastes the DSN with its password into config.toml (TEAM.md's
    example has none): git commits that file and pushes it to every clone. memvault used
    it without a word; now every command says so, once, on stderr, and never the
    password."""
    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    config = writer / ".memvault" / "config.toml"
    text = config.read_text(encoding="utf-8")
    dsn = str(pg_server.get_uri()).replace("postgres:@", "postgres:hunter2-secret@")
    assert 'dsn = "' in text and "hunter2" in dsn
    config.write_text(
        "\n".join(f'dsn = "{dsn}"' if ln.startswith("dsn = ") else ln for ln in text.splitlines()),
        encoding="utf-8",
    )
    for args in (("status",), ("search", "database choice")):
        got = run_memvault(*args, "--vault", str(writer), env=env)
        assert got.returncode == 0, got.stderr
        assert got.stderr.count("holds the index's password") == 1, got.stderr
        assert "~/.pgpass" in got.stderr
        assert "hunter2" not in got.stdout + got.stderr
    config.write_text(text, encoding="utf-8")  # as index move wrote it: no password
    got = run_memvault("status", "--vault", str(writer), env=env)
    assert got.returncode == 0 and "password" not in got.stderr


def test_index_move_into_another_vaults_schema_is_refused_and_back_into_its_own_goes_on(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A field test: another team's vault under the same folder name moved its index to
    the same database; the schema both derive (``memvault_<folder name>``) held the
    first vault's index, which the move replaced without a word (its readers then
    answered from the other vault's notes)."""

    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    schema = f"memvault_{folder_name}"
    before = _indexed(pg_server, schema)
    other = _other_team(tmp_path, folder_name)
    assert run_memvault("sync", "--vault", str(other), env=env).returncode == 0
    dsn = str(pg_server.get_uri())
    got = run_memvault(
        "index", "move", "--to", "postgres", "--dsn", dsn, "--vault", str(other), env=env
    )
    assert got.returncode == 3, got.stdout + got.stderr
    assert "holds another vault's index" in got.stderr and "nothing was moved" in got.stderr
    after = _indexed(pg_server, schema)
    assert after == before and len(before) > 4
    assert 'store = "sqlite"' in (other / ".memvault" / "config.toml").read_text(encoding="utf-8")
    # the first vault's round trip: back to SQLite, then into its own old index again
    assert (
        run_memvault("index", "move", "--to", "sqlite", "--vault", str(writer), env=env).returncode
        == 0
    )
    again = run_memvault(
        "index", "move", "--to", "postgres", "--dsn", dsn, "--vault", str(writer), env=env
    )
    assert again.returncode == 0, again.stderr


def test_a_writer_of_another_vault_under_the_same_folder_name_writes_nothing(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A field test: another team's vault under the same folder name, set by hand to the
    same database (TEAM.md: "A new vault with no index yet needs no move"), derived the
    same schema; with the first vault's writer stopped, its `memvault sync` (or `up`)
    deleted the first vault's notes from the shared index and indexed its own."""

    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    schema = f"memvault_{folder_name}"
    before = _indexed(pg_server, schema)
    other = _other_team(tmp_path, folder_name)
    pg_env = {**env, "MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": pg_server.get_uri()}
    got = run_memvault("sync", "--vault", str(other), env=pg_env)
    assert got.returncode == 3, got.stdout + got.stderr
    assert "holds an index of notes this folder lacks" in got.stderr
    assert "nothing was written" in got.stderr
    after = _indexed(pg_server, schema)
    assert after == before
    # the first vault's own clone, its files in step, writes as before
    clone = _clone(writer, tmp_path / "build-02" / folder_name)
    (clone / "people" / "new.md").write_text("# New\n\nA new colleague.\n", encoding="utf-8")
    assert run_memvault("sync", "--vault", str(clone), env=env).returncode == 0


def test_a_role_that_may_not_create_pgvector_is_told_who_may(
    tmp_path: Path, pg_server: Any
) -> None:
    """A first-day user points memvault at a database of their own (not a superuser's):
    the error was PostgreSQL's 'permission denied to create extension "vector"' alone."""
    from pg_helpers import socket_dir

    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS novector")
        conn.execute("DROP ROLE IF EXISTS plainrole")
        conn.execute("CREATE ROLE plainrole LOGIN")
        conn.execute("CREATE DATABASE novector OWNER plainrole")
    try:
        dsn = f"postgresql://plainrole@/novector?host={socket_dir(pg_server)}"
        root = make_vault(tmp_path, "team")
        env = memvault_env(tmp_path, MEMVAULT_INDEX_STORE="postgres", MEMVAULT_INDEX_DSN=dsn)
        got = run_memvault("sync", "--vault", str(root), env=env)
        assert got.returncode == 7, got.stdout + got.stderr
        assert "pgvector is not available" in got.stderr
        assert "a superuser runs CREATE EXTENSION vector in that database once" in got.stderr
    finally:
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS novector")
            conn.execute("DROP ROLE IF EXISTS plainrole")


def test_a_writers_folders_renamed_while_it_was_down_are_no_other_vault(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """The refusal above took a vault whose folders a pull renamed while no writer ran
    (most indexed paths gone) for another vault's: its notes are there under their own
    names, so its sync goes on and follows them."""
    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    for folder in [d for d in writer.iterdir() if d.is_dir() and not d.name.startswith(".")]:
        if any(folder.rglob("*.md")):
            folder.rename(writer / f"{folder.name}-renamed")
    got = run_memvault("sync", "--vault", str(writer), env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "-renamed/" in (writer / "MEMORY.md").read_text(encoding="utf-8")


def test_another_vault_of_the_same_note_names_is_still_refused(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A second review: counting a gone note as there by its name alone let another
    team's vault in whose notes share names (a day's log, README.md): only the same
    name with the same bytes is the same note."""
    from memvault.vault.template import init_vault

    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    other = tmp_path / "other-team" / folder_name
    init_vault(other)
    for note in writer.rglob("*.md"):
        if ".memvault" not in note.parts and note.name != "MEMORY.md":
            twin = other / "elsewhere" / note.relative_to(writer)
            twin.parent.mkdir(parents=True, exist_ok=True)
            twin.write_text(f"# {note.stem}\n\nAnother team's note.\n", encoding="utf-8")
    pg_env = {**env, "MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": pg_server.get_uri()}
    got = run_memvault("sync", "--vault", str(other), env=pg_env)
    assert got.returncode == 3, got.stdout + got.stderr
    assert "holds an index of notes this folder lacks" in got.stderr


def test_a_reader_of_another_vaults_index_is_told_by_status(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A field test: another team's vault under the same folder name, set to the same
    database, reads the first vault's index: its searches answer with notes it never
    had, and `status` said only "this copy's files differ from the shared index in 296
    notes (a `git pull` behind ...)". A writer there is refused (the test above); a
    reader is told what it reads."""
    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    other = _other_team(tmp_path, folder_name)
    pg_env = {**env, "MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": pg_server.get_uri()}
    said = run_memvault("status", "--vault", str(other), env=pg_env).stdout
    assert "another vault's index" in said and "a schema of its own" in said, said
    # the first vault's own clone, a few notes behind, is not told so
    clone = _clone(writer, tmp_path / "laptop" / folder_name)
    (clone / "people" / "new.md").write_text("# New\n\nA new colleague.\n", encoding="utf-8")
    said = run_memvault("status", "--vault", str(clone), env=env).stdout
    assert "another vault's index" not in said, said


def test_index_move_on_a_clone_behind_the_writers_settings_builds_no_second_index(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A field test: a clone a `git pull` behind the writer's (its config.toml without the
    settings `index move` wrote) followed TEAM.md's step 1, `memvault index move --to
    postgres --dsn ...`: its schema, derived from its own folder name, was not the
    writer's, and it built a second index of the same notes beside the team's, whose
    writer ran: two writers, and readers split by the settings they had pulled."""
    from helpers import DaemonProcess

    writer, env = _moved_to_postgres(tmp_path, pg_server, folder_name)
    behind = _clone(writer, tmp_path / "laptop" / f"{folder_name}_b")
    settings = behind / ".memvault" / "config.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(  # as before the move's commit: no store, dsn or schema
        "\n".join(
            line for line in text.splitlines() if not line.startswith(("store", "dsn", "schema"))
        ),
        encoding="utf-8",
    )
    daemon = DaemonProcess(tmp_path, writer)
    second = f"memvault_{folder_name}_b"
    try:
        daemon.ready(answering=True)
        dsn = str(pg_server.get_uri())
        got = run_memvault(
            "index", "move", "--to", "postgres", "--dsn", dsn, "--vault", str(behind), env=env
        )
        assert got.returncode == 3, got.stdout + got.stderr
        assert f"schema 'memvault_{folder_name}'" in got.stderr, got.stderr
        assert "holds this vault's index already" in got.stderr and "git pull" in got.stderr
        with psycopg.connect(dsn, autocommit=True) as conn:
            made = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (second,)
            ).fetchone()
        assert made is None
        assert 'store = "postgres"' not in settings.read_text(encoding="utf-8")  # not switched
    finally:
        assert daemon.stop() == 0, daemon.stderr[-3000:]
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{second}" CASCADE')


def test_another_schemas_paths_leaving_the_folder_or_naming_a_fifo_are_not_read(
    tmp_path: Path,
) -> None:
    """pg_siblings hashed the file at each path another schema's notes table names,
    joined to this folder: rows are anyone's with a login that can make a schema, so
    `/dev/zero` was read without end (a move or a first sync eating memory), a FIFO in
    the folder hung it, and `../` or an absolute path read files outside the vault. Such
    paths now count as not here; a regular note inside still does. (The old code is not
    given /dev/zero here: it would fill the memory.)"""
    import os

    from memvault.index import pg_siblings

    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "ana.md").write_bytes(b"Ana\n")
    os.mkfifo(root / "people" / "pipe.md")
    (tmp_path / "outside.md").write_bytes(b"secret\n")
    sha = {p: hashlib.sha256(b).hexdigest() for p, b in [("a", b"Ana\n"), ("o", b"secret\n")]}
    zero = hashlib.sha256(b"").hexdigest()
    rows = [
        ("people/pipe.md", zero),
        ("../outside.md", sha["o"]),
        (str(tmp_path / "outside.md"), sha["o"]),
        ("people/ana.md", sha["a"]),
    ]

    class Conn:
        def execute(self, sql: str, args: Any = ()) -> Any:
            class Answer:
                def fetchall(self) -> list[Any]:
                    return [("memvault_other",)] if "information_schema" in sql else rows

                def fetchone(self) -> Any:
                    return None

            return Answer()

    import threading

    found: list[Any] = []
    looking = threading.Thread(
        target=lambda: found.append(pg_siblings.elsewhere(Conn(), "memvault_here", root)),
        daemon=True,
    )
    looking.start()
    looking.join(10)
    if looking.is_alive():  # held at the FIFO's open: let it go, then fail
        with open(root / "people" / "pipe.md", "wb"):
            pass
        looking.join(5)
    assert found == [None]  # 1 of the 4 here: none of the others read
    assert pg_siblings._sha(root, "people/ana.md") == sha["a"]
    assert pg_siblings._sha(root, "/dev/zero") is None  # (not read: a path out of the folder)


def test_a_key_value_dsn_in_the_environment_is_taken_and_its_password_never_shown(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A field test: `MEMVAULT_INDEX_DSN="host=... dbname=... user=... password=..."`
    (libpq's key=value form, as psql and psycopg take it) was refused with
    `.../config.toml: index.store = "postgres" needs index.dsn = "postgresql://..."`:
    the wrong form, and the wrong place named (the DSN came from the environment). It is
    taken; its password is shown nowhere, in status, an error or the daemon's log."""
    from helpers import DaemonProcess
    from pg_helpers import socket_dir

    secret = "sw0rd fish-47"
    dsn = f"host={socket_dir(pg_server)} dbname=postgres user=postgres password='{secret}'"
    root = make_vault(tmp_path, folder_name)
    settings = {"MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": dsn}
    env = memvault_env(tmp_path, **settings)
    synced = run_memvault("sync", "--vault", str(root), env=env)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    found = run_memvault("search", "which database did we choose", "--json", "--vault",
                         str(root), env=env)  # fmt: skip
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
    shown = run_memvault("status", "--json", "--vault", str(root), env=env)
    where = json.loads(shown.stdout)["index"]["where"]
    assert where["dsn"].endswith("password=***") and where["role"] == "none", where
    said = run_memvault("status", "--vault", str(root), env=env)
    for got in (synced, found, shown, said):
        assert "sw0rd" not in got.stdout + got.stderr
    daemon = DaemonProcess(tmp_path, root, **settings)
    try:
        daemon.ready(answering=True)
    finally:
        assert daemon.stop() == 0, daemon.stderr[-3000:]
    assert "sw0rd" not in daemon.stderr

    # an error names the DSN without its password (here: no such database)
    gone = memvault_env(tmp_path, **{**settings, "MEMVAULT_INDEX_DSN": dsn.replace(
        "dbname=postgres", "dbname=no_such_db_47")})  # fmt: skip
    failed = run_memvault("search", "database", "--vault", str(root), env=gone)
    assert failed.returncode == 7, failed.stdout + failed.stderr
    assert "no_such_db_47" in failed.stderr and "password=***" in failed.stderr
    assert "sw0rd" not in failed.stdout + failed.stderr
    # what is no DSN at all is refused naming where it came from, not config.toml
    typo = memvault_env(tmp_path, **{**settings, "MEMVAULT_INDEX_DSN": "db.internal"})
    refused = run_memvault("status", "--vault", str(root), env=typo)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "$MEMVAULT_INDEX_DSN" in refused.stderr and "config.toml" not in refused.stderr


def test_index_move_never_writes_over_a_save_of_config_toml_in_progress(
    tmp_path: Path, pg_server: Any, folder_name: str
) -> None:
    """A review (rev56b): `index move` read config.toml and put its own version in place
    with no compare-and-swap, over an editor saving the file in place (truncated, then
    written in pieces): the rest of the person's save went into the file replaced, and
    their words were lost. Now the save is waited for, then given up on: nothing
    written over it, the settings to write said (exit 1)."""
    dsn = str(pg_server.get_uri())
    env = memvault_env(tmp_path)
    writer = make_vault(tmp_path / "build-01", folder_name)
    assert run_memvault("sync", "--vault", str(writer), env=env).returncode == 0
    config = writer / ".memvault" / "config.toml"
    theirs = config.read_text(encoding="utf-8") + "\n# the person's note on the settings\n"
    half = len(theirs) // 2
    with config.open("r+", encoding="utf-8") as saving:  # an editor's save in place
        saving.truncate(0)
        saving.write(theirs[:half])
        saving.flush()
        moved = run_memvault(
            "index", "move", "--to", "postgres", "--dsn", dsn, "--vault", str(writer), env=env
        )
        saving.write(theirs[half:])
    assert config.read_text(encoding="utf-8") == theirs  # every word of the person's save
    assert moved.returncode == 1, moved.stdout + moved.stderr
    said = " ".join(moved.stderr.split())
    assert "config.toml" in said and "open for writing" in said, said
    assert f'schema = "memvault_{folder_name}"' in said, said
