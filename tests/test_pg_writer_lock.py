"""The writer's lock of a team's index in PostgreSQL (index/pg_writer.py, pg_store.py), as
a first day's, a careless and a hostile user meet it (docs/TEAM.md). A real server
(pgserver), never a mock."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest

from helpers import make_vault, note, open_vault, write
from memvault.config import VaultConfig
from memvault.engine.index_move import move_index, with_store
from memvault.errors import ConfigError, LockHeld
from memvault.index.embedder_hash import HashEmbedder
from memvault.index.pg_schema import MARK
from pg_helpers import StallProxy, start_tcp_server, stop_server, vanish


def test_index_move_is_not_refused_by_its_own_copys_session_still_ending(
    tmp_path: Path, pg_server: Any, pg_dsn: str
) -> None:
    """A field test, the first step of docs/TEAM.md on a fresh database: `index move`
    failed, `has a writer already: another process`. The move copies the vectors as a
    writer, closes, and opens again as a writer to sync; a closed session's advisory
    lock goes only once its backend has exited (a loaded server: 1 in 200 here), and the
    second open does not wait. The proxy keeps the closed session alive, as that backend
    is for a moment."""
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    proxy = StallProxy(pg_server, linger=True)
    try:
        config = VaultConfig.load(root)
        target = with_store(config, "postgres", proxy.dsn())
        report = move_index(config, target, HashEmbedder())
        assert report.embedded == 0 and report.chunks > 0
    finally:
        proxy.close()


def test_a_writer_machine_gone_without_a_word_lets_its_lock_go_within_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: the writer's machine lost its power (or its network) and never said
    goodbye; the server kept its session, and the lock, until the kernel's keepalive
    (two hours and more on Linux): `memvault up` on another machine was a reader all
    that time, every write there refused naming a writer that was gone. Now the
    server asks each memvault session every few seconds whether its machine is there."""
    server, port = start_tcp_server()
    try:
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", f"postgresql://postgres@127.0.0.1:{port}/postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", "memvault_team")
        root = make_vault(tmp_path / "build-01")
        clone = tmp_path / "laptop-02" / "vault"
        shutil.copytree(root, clone)
        monkeypatch.setenv("MEMVAULT_HOSTNAME", "build-01")
        writer = open_vault(root)
        try:
            writer.sync()
            store = writer.engine.store
            vanish(store._writer.conn)  # the machine is gone: both its sessions
            vanish(store._pg.conn)
            monkeypatch.setenv("MEMVAULT_HOSTNAME", "laptop-02")
            with open_vault(clone, wait=25) as other:  # a CLI write waits for a CLI writer
                assert other.engine.store.writer()[0] == "laptop-02"
                write(clone, "decisions/after.md", note("After", "", "Written once build-01 died."))
                assert other.sync().created == ("decisions/after.md",)
        finally:
            writer.close()
    finally:
        stop_server(server)


def test_a_write_through_a_reader_daemon_whose_writer_died_says_to_restart_it(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: the writer daemon killed, a `memvault log` on a reader machine said
    `it has no writer now; run memvault up (a writer) to write`, and `memvault up` there
    said `a memvault daemon is already running`: the reader daemon stays a reader until
    it is restarted, which the refusal now says."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    copy = tmp_path / "laptop-02" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    logs = sorted((copy / "logs").iterdir())
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "build-01")
    writer = open_vault(root, through_daemon=False)  # build-01's writer daemon
    try:
        writer.sync()
        monkeypatch.setenv("MEMVAULT_HOSTNAME", "laptop-02")
        with open_vault(copy, through_daemon=False, reader=True) as r:  # a reader daemon
            with pytest.raises(LockHeld, match="its writer is build-01"):
                r.log("while build-01 writes")
            writer.close()
            with pytest.raises(LockHeld) as refused:
                r.log("once build-01 died")
            said = str(refused.value)
            assert "no writer now" in said and "restart it" in said, said
            assert "run `memvault up`" not in said
        assert sorted((copy / "logs").iterdir()) == logs  # nothing written
    finally:
        writer.close()


def test_a_reader_is_told_which_hits_its_copy_lacks_or_holds_otherwise(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: a reader a `git pull` behind searched and got a note it did not
    have, and its context cited the writer's lines of it as if they were in its files
    (while `get` said `no note at`); a note edited here was cited with the index's
    lines too. The hits stay (the team's memory), each saying how this copy stands."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    copy = tmp_path / "laptop-02" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    with (copy / "people" / "sarah-chen.md").open("a", encoding="utf-8") as f:
        f.write("\nEdited on the laptop, not committed.\n")  # a local edit
    with open_vault(root) as writer:
        write(root, "decisions/zephyr.md", note("Zephyr Queue", "", "Zephyr queue retries."))
        writer.sync()
        assert all(h.this_copy == "" for h in writer.search("zephyr queue sarah", k=10))
        with open_vault(copy, mode="read") as reader:
            hits = {h.path: h.this_copy for h in reader.search("zephyr queue retries", k=10)}
            assert hits["decisions/zephyr.md"] == "missing"
            sarah = reader.search("Sarah prefers async communication", k=3)
            assert sarah[0].path == "people/sarah-chen.md" and sarah[0].this_copy == "differs"
            db = reader.search("which database did we choose", k=3)[0]
            assert db.path.startswith("decisions/2024") and db.this_copy == ""
            ctx = reader.context("zephyr queue retries", budget=400)
            assert "[[decisions/zephyr]] L" in ctx.text
            cited = ctx.text.split("[[decisions/zephyr]] L", 1)[1].split("\n", 1)[0]
            assert "not in this copy of the vault" in cited
            said = {s.path: s.this_copy for s in ctx.sources}
            assert said["decisions/zephyr.md"] == "missing"


def test_a_schema_of_the_teams_own_application_is_refused_and_its_tables_kept(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: `[index] schema = "app"`, the team's application's schema, holding
    its own `notes` table: the writer's open took `app` for an index whose tables were
    dropped by hand, dropped `app.notes` with its rows and built the index there. Now
    refused (exit 3), nothing written or dropped; an index memvault made goes on."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    own = os.environ["MEMVAULT_INDEX_SCHEMA"]  # the test's own (pg_dsn)
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", "app51")
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS app51 CASCADE")
        conn.execute("CREATE SCHEMA app51")
        conn.execute("CREATE TABLE app51.notes(id INT, body TEXT)")
        conn.execute("INSERT INTO app51.notes VALUES (1, 'a customer''s order')")
    root = make_vault(tmp_path)
    try:
        with pytest.raises(
            ConfigError, match=r"'app51' holds tables memvault did not make \(notes\)"
        ):
            open_vault(root)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            assert conn.execute("SELECT * FROM app51.notes").fetchall() == [
                (1, "a customer's order")
            ]
            tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'app51'")
            assert tables.fetchall() == [("notes",)]
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS app51 CASCADE")
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", own)
    with open_vault(root) as v:  # memvault's own schema: made, marked, and opened again
        v.sync()
    with open_vault(root) as v:
        assert v.search("which database did we choose", k=1)


def test_a_reader_of_an_index_moved_back_to_sqlite_is_told_it_is_kept_no_more(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A field test: the writer moved the index back (`index move --to sqlite`); a reader
    set to PostgreSQL by MEMVAULT_INDEX_STORE (config.toml's change cannot reach it)
    searched the index left behind for good, and nothing said that no one kept it. Now
    its open warns and `status` says so, until a writer takes the index up again."""
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "build-01")
    root = make_vault(tmp_path)
    copy = tmp_path / "laptop-02" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    config = with_store(VaultConfig.load(root), "postgres", pg_dsn)
    with open_vault(root, overrides={"index": {"store": "postgres"}}) as writer:
        writer.sync()
    move_index(config, with_store(config, "sqlite"), HashEmbedder())
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    with caplog.at_level("WARNING", logger="memvault"), open_vault(copy, mode="read") as reader:
        assert reader.search("which database did we choose", k=1)  # it still answers
        where = reader.status()["index"]["where"]
    assert where["moved_away"]["host"] == "build-01"
    assert "was moved back to SQLite by build-01" in caplog.text
    caplog.clear()
    with open_vault(root):  # a writer takes the index up again: kept, not left
        pass
    with caplog.at_level("WARNING", logger="memvault"), open_vault(copy, mode="read") as reader:
        assert reader.status()["index"]["where"]["moved_away"] is None
    assert "moved back" not in caplog.text


def test_a_reader_set_to_postgres_while_its_writer_is_on_sqlite_is_told_how_it_moves(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader set to PostgreSQL before its writer moved (still on SQLite): its search
    writes nothing and says the writer moves its index there (it said `memvault up`
    alone, which on the writer builds a second index beside its own)."""
    from memvault.errors import NotIndexed

    root = make_vault(tmp_path)
    with open_vault(root) as writer:  # the writer, on SQLite
        writer.sync()
    copy = tmp_path / "laptop-02" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    with pytest.raises(NotIndexed, match=r"index move --to postgres"):
        open_vault(copy, mode="read").search("which database did we choose")
    assert sorted(p.name for p in (copy / ".memvault").iterdir()) == []


def test_a_search_on_a_copy_with_an_index_db_left_behind_writes_nothing_to_the_team_index(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: the writer's machine after `index move --to postgres` keeps its old
    `.memvault/index.db`; with its daemon stopped, a `memvault search` there took the
    shared index's writer lock and synced first: a draft not committed went into the
    team's index, and a note another machine's writer had indexed (not pulled here) was
    deleted from it. A read on a PostgreSQL index reads it as it is, on every copy."""
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()  # the local index, as before the team
    config = VaultConfig.load(root)
    move_index(config, with_store(config, "postgres", pg_dsn), HashEmbedder())
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    assert (root / ".memvault" / "index.db").exists()  # left as it was
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        before = conn.execute(f'SELECT path, sha256 FROM "{schema}".notes ORDER BY 1').fetchall()
    with (root / "people" / "sarah-chen.md").open("a", encoding="utf-8") as f:
        f.write("\nA draft about salaries, not committed.\n")
    (root / "logs" / "2024-03-15.md").unlink()  # as if another machine's, not pulled here
    with open_vault(root, mode="query") as v:
        assert v.search("which database did we choose", k=1)
    with open_vault(root, mode="read") as v:
        v.context("salaries", budget=200)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        after = conn.execute(f'SELECT path, sha256 FROM "{schema}".notes ORDER BY 1').fetchall()
    assert after == before


def test_a_role_not_granted_the_index_is_told_what_to_grant(
    tmp_path: Path, pg_server: Any, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field test: a colleague's DSN with a role of their own, not granted the team's
    index: `memvault search` and `index move` printed a 40-line traceback ending in
    `psycopg.errors.InsufficientPrivilege: permission denied for schema ...`."""
    from memvault.errors import IndexUnavailable
    from pg_helpers import socket_dir

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as writer:
        writer.sync()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS ungranted51")
        conn.execute("CREATE ROLE ungranted51 LOGIN")
    try:
        copy = tmp_path / "laptop-02" / "vault"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
        (copy / ".memvault").mkdir()
        dsn = f"postgresql://ungranted51@/postgres?host={socket_dir(pg_server)}"
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", dsn)
        with pytest.raises(IndexUnavailable) as refused:
            open_vault(copy, mode="read").search("which database did we choose")
        said = str(refused.value)
        assert "permission denied for schema" in said and "role 'ungranted51'" in said
        assert "GRANT USAGE ON SCHEMA" in said
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP OWNED BY ungranted51")
            conn.execute("DROP ROLE IF EXISTS ungranted51")


def test_settings_the_dsn_makes_itself_are_kept(pg_server: Any, pg_dsn: str) -> None:
    """A DSN's own connection settings win over memvault's: psycopg's keywords overrode
    them, so `keepalives_idle=60` in the DSN was 5, and its `options` (`-c work_mem=64MB`:
    a team's server settings for memvault's role) were dropped whole. A reader's session
    stays read-only whatever the DSN's options say."""
    from memvault.index.pg_conn import connect

    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    sep = "&" if "?" in pg_dsn else "?"
    dsn = (
        f"{pg_dsn}{sep}keepalives_idle=60&connect_timeout=17"
        "&options=-c%20work_mem%3D64MB%20-c%20default_transaction_read_only%3Doff"
    )
    conn = connect(dsn, schema, timeout=5, statement_ms=5000, read_only=True)
    try:
        given = conn.info.get_parameters()
        assert given["keepalives_idle"] == "60" and given["connect_timeout"] == "17"
        assert conn.execute("SHOW work_mem").fetchone()[0] == "64MB"  # before: 4MB
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "5s"  # memvault's
    finally:
        conn.close()


def test_an_applications_schema_with_a_meta_table_of_its_own_is_refused_too(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An application's schema keeping its own `meta(key, value)` table with a
    `schema_version` row (a common way to version a schema): taken for an index of a
    memvault from before the schema's comment, it was marked memvault's, and the
    writer's open, finding memvault's tables missing, dropped the application's `notes`
    and `meta` with their rows. Now an unmarked schema is memvault's only when it holds
    memvault's tables alone; such an index (made before the comment, a table dropped by
    hand, a view the team added) is still upgraded and marked."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    own = os.environ["MEMVAULT_INDEX_SCHEMA"]
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", "app51m")
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS app51m CASCADE")
        conn.execute("CREATE SCHEMA app51m")
        conn.execute("CREATE TABLE app51m.meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO app51m.meta VALUES ('schema_version', '12')")
        conn.execute("CREATE TABLE app51m.notes(id INT, body TEXT)")
        conn.execute("INSERT INTO app51m.notes VALUES (1, 'a customer''s order')")
        conn.execute("CREATE TABLE app51m.users(id INT)")
    root = make_vault(tmp_path)
    try:
        with pytest.raises(ConfigError, match=r"'app51m' holds tables memvault did not make"):
            open_vault(root)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            assert conn.execute("SELECT * FROM app51m.notes").fetchall() == [
                (1, "a customer's order")
            ]
            assert conn.execute("SELECT * FROM app51m.meta").fetchall() == [
                ("schema_version", "12")
            ]
            said = conn.execute("SELECT obj_description('app51m'::regnamespace, 'pg_namespace')")
            assert said.fetchone() == (None,)  # not marked memvault's
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS app51m CASCADE")
    monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", own)
    with open_vault(root) as v:
        v.sync()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as a memvault before the mark
        conn.execute(f'COMMENT ON SCHEMA "{own}" IS NULL')
        conn.execute(f'CREATE VIEW "{own}".recent AS SELECT path FROM "{own}".notes')
        conn.execute(f'DROP TABLE "{own}".memory_owned')
    with open_vault(root) as v:  # memvault's: upgraded, mended, marked
        v.sync()
        assert v.search("which database did we choose", k=1)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        said = conn.execute(f"SELECT obj_description('\"{own}\"'::regnamespace, 'pg_namespace')")
        assert said.fetchone() == (MARK,)


def _a_windows_writer_and_a_reader(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, str]:
    """A writer's vault holding a note with CRLF (Git for Windows' checkout), a reader's
    copy holding it with LF, one PostgreSQL index; and the note's text."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    text = note("Zephyr Queue", "", "Zephyr queue retries.\nThree times, then a dead letter.")
    (root / "decisions").mkdir(exist_ok=True)
    (root / "decisions" / "zephyr.md").write_bytes(text.replace("\n", "\r\n").encode())
    copy = tmp_path / "laptop-02" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    (copy / "decisions" / "zephyr.md").write_bytes(text.encode())  # git's LF checkout
    return root, copy, text


def test_a_note_a_windows_writer_checked_out_with_crlf_is_the_same_on_a_reader(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git for Windows checks notes out with CRLF (core.autocrlf, its default), every
    other machine with LF: the writer on Windows indexed CRLF bytes, and a reader on a
    Mac said of every hit that its copy "differs" (edited here or a pull behind) while
    it was the same note. Line ends aside, it is the same; an edit still differs."""
    root, copy, text = _a_windows_writer_and_a_reader(tmp_path, pg_dsn, monkeypatch)
    with open_vault(root) as writer:
        writer.sync()
        with open_vault(copy, mode="read") as reader:
            hits = {h.path: h.this_copy for h in reader.search("zephyr queue retries", k=5)}
            assert hits["decisions/zephyr.md"] == ""  # before: "differs"
            (copy / "decisions" / "zephyr.md").write_bytes(text.replace("Three", "Four").encode())
            hits = {h.path: h.this_copy for h in reader.search("zephyr queue retries", k=5)}
            assert hits["decisions/zephyr.md"] == "differs"


def test_a_readers_status_counts_no_crlf_checkout_as_a_change(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same Windows writer: the reader's status said every note it indexed had
    changed since the last sync (its size differs by the CRLFs), "the index is behind
    the files" for a copy that was not. Line ends aside, nothing changed; an edit did."""
    root, copy, text = _a_windows_writer_and_a_reader(tmp_path, pg_dsn, monkeypatch)
    with open_vault(root) as writer:
        writer.sync()
        with open_vault(copy, mode="read") as reader:
            index = reader.status()["index"]
            assert "decisions/zephyr.md" not in index["pending"]  # before: it was there
            (copy / "decisions" / "zephyr.md").write_bytes(text.replace("Three", "Four").encode())
            index = reader.status()["index"]
            assert "decisions/zephyr.md" in index["pending"]


def test_the_mcp_server_with_no_daemon_lets_the_teams_writer_lock_go_soon_after_a_write(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review (rev56b): the MCP server on the writer's machine with no daemon kept the
    vault it wrote in, and with it PostgreSQL's writer lock, 15 s after each call (door's
    LINGER): no other machine's process can ask it to let go (a local lock file is
    asked, not the server), so another machine's `memvault up` waited those 15 s
    ("waiting for a pid ..., which is writing this vault's index"), a colleague's CLI
    write too. Kept ``door.LINGER_TEAM`` for a team's index (the real MCP client, the
    server a process over stdio)."""
    import sys

    from anyio.from_thread import start_blocking_portal
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from memvault.index.pg_store import PgStore

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    root = make_vault(tmp_path, "team")
    with open_vault(root) as writer:
        writer.sync()
    env = {
        "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "daemon"),
        "MEMVAULT_INDEX_MODEL": "hash",
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": schema,
        "HF_HUB_OFFLINE": "1",
        "MEMVAULT_HOSTNAME": "mcp-host",
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memvault", "mcp", "--vault", str(root)],
        env=env,
        cwd=str(tmp_path),
    )
    probe = PgStore(pg_dsn, schema, read_only=True, timeout=10, statement_ms=10_000)

    async def write_then_wait() -> None:
        with (tmp_path / "mcp-stderr.log").open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, send),
                ClientSession(read, send) as session,
            ):
                await session.initialize()
                done = await session.call_tool(
                    "memory_write",
                    {"category": "people", "title": "Zed Quark", "body": "Zed owns billing."},
                )
                assert not done.is_error, done
                held = probe.writer()
                assert held is not None and held[0] == "mcp-host"  # the write took it
                # let go well before the 15 s it was kept (the server still running)
                await _until(lambda: probe.writer() is None, 6.0)

    try:
        with start_blocking_portal() as portal:
            portal.call(write_then_wait)
    finally:
        probe.close()


async def _until(check: Any, seconds: float) -> None:
    import time

    import anyio

    ends = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < ends, f"still held after {seconds:g} s"
        await anyio.sleep(0.2)
