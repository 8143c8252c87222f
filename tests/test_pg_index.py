"""The index on PostgreSQL + pgvector (index/seam.py): the same hits, contexts and syncs
as the SQLite index, and the faults a shared database brings. A real server (pgserver),
never a mock."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from helpers import eventually, make_vault, note, open_vault, rebuilt_snapshot, snapshot, write
from memvault.errors import IndexCorrupt, LockHeld, StorageError, outcome
from memvault.index import vector_cache
from memvault.index.pg_schema import PG_SCHEMA_VERSION, lock_key
from memvault.index.pg_store import _holder_kind, redact
from pg_helpers import StallProxy, fresh_schema, kill_server, socket_dir, start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "which database did we choose and why",
    "what does Sarah prefer",
    "assistant refactor status",
    "kafka events",
]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each conformance test runs on both backends."""
    if request.param == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", dsn)
    return str(request.param)


def _as_float16_cache(conn: psycopg.Connection, schema: str) -> dict[tuple[str, bytes], Any]:
    """The embedding cache's rows as schemas 1-4 kept them (float16), by key."""
    rows = conn.execute(f'SELECT model, sha, vector FROM "{schema}".embeddings').fetchall()
    half = {(m, bytes(s)): vector_cache.decode(bytes(b)).astype("<f2") for m, s, b in rows}
    for (model, sha), vector in half.items():
        conn.execute(
            f'UPDATE "{schema}".embeddings SET vector = %s WHERE model = %s AND sha = %s',
            (vector.tobytes(), model, sha),
        )
    return half


def _hits(v: Any) -> list[tuple[str, int]]:
    return [(h.path, h.line_start) for h in v.search("which database did we choose", k=5)]


def _answers(root: Path) -> dict[str, Any]:
    with open_vault(root) as v:
        v.sync()
        out: dict[str, Any] = {}
        for q in QUESTIONS:
            out[q] = [
                (h.path, h.line_start, h.line_end, round(h.score, 4)) for h in v.search(q, k=8)
            ]
            out["ctx " + q] = v.context(q, budget=400).text
        people = v.search("prefers", k=5, folder="people")
        out["people"] = [(h.path, h.line_start) for h in people]
        return out


def test_both_backends_give_the_same_hits_and_contexts(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(tmp_path, "sqlite_vault")
    expected = _answers(root)
    other = make_vault(tmp_path, "pg_vault")
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    got = _answers(other)
    assert got == expected
    assert not (other / ".memvault" / "index.db").exists()  # the index is in PostgreSQL
    assert any(expected[q] for q in QUESTIONS)


def test_incremental_syncs_equal_a_fresh_rebuild(backend: str, tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        write(
            root, "decisions/2024-05-01-use-kafka.md", note("Use Kafka", "Events go through Kafka.")
        )
        v.sync()
        (root / "people" / "sarah-chen.md").rename(root / "people" / "sarah-c.md")
        v.sync()
        path = root / "projects" / "ai-assistant-refactor.md"
        path.write_text(path.read_text(encoding="utf-8") + "\nA new line about queues.\n", "utf-8")
        (root / "decisions" / "2024-05-01-use-kafka.md").unlink()
        v.sync()
        got = snapshot(v)
        if backend == "postgres":  # BM25's totals, kept by triggers: exact after edits
            assert _totals(v) == _counted(v)
        hits = v.search("queues", k=3)
        assert hits and hits[0].path == "projects/ai-assistant-refactor.md"
        assert all(h.path != "decisions/2024-05-01-use-kafka.md" for h in v.search("Kafka", k=10))
    if backend == "postgres":  # the rebuild in a schema of its own
        os.environ["MEMVAULT_INDEX_SCHEMA"] += "_rebuilt"
    assert rebuilt_snapshot(root, tmp_path) == got


def test_a_reader_reads_the_shared_index_with_no_local_one(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    writer_root = make_vault(tmp_path, "team")
    reader_home = tmp_path / "other-machine"
    reader_home.mkdir()
    with open_vault(writer_root) as w:
        w.sync()
        expected = [(h.path, h.line_start) for h in w.search(QUESTIONS[0], k=5)]
        # another machine: the vault's files by git (here: a copy), no .memvault/index.db
        reader_root = reader_home / "team"
        shutil.copytree(writer_root, reader_root, ignore=shutil.ignore_patterns(".memvault"))
        (reader_root / ".memvault").mkdir()
        with open_vault(reader_root, mode="read") as r:
            assert not r._backend.writable  # the writer holds the vault's lock in PostgreSQL
            assert [(h.path, h.line_start) for h in r.search(QUESTIONS[0], k=5)] == expected
            got = r.get("people/sarah-chen.md")
            assert "Sarah" in got.text
            where = r.status()["index"]["where"]
            assert where["store"] == "postgres" and where["role"] == "reader"
            assert where["writer"]["pid"] == os.getpid()  # the writer, as the lock says
            assert where["behind_seconds"] is not None and where["vectors_pending"] == 0
            # the reader's session is read-only in the server: it can never write the index
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                r.engine.store.set_meta("written_by_a_reader", "yes")
        assert w.engine.store.meta("written_by_a_reader") is None
        assert not (reader_root / ".memvault" / "index.db").exists()
        assert not (reader_root / ".memvault" / "cache.db").exists()


def test_a_second_writer_anywhere_is_refused_naming_the_holder(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    copy = tmp_path / "machine-b" / "team"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    with open_vault(root) as w:
        w.sync()
        with pytest.raises(LockHeld) as err:
            open_vault(copy, wait=0)
        assert socket.gethostname() in str(err.value) and f"pid {os.getpid()}" in str(err.value)
        assert outcome(err.value) == (6, 400)
    with open_vault(copy) as second:  # the first let go: the second may write now
        assert second._backend.writable


def test_a_newer_schema_is_refused_saying_which(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(IndexCorrupt) as err:  # a writer: refused at its open
        open_vault(root, mode="write")
    said = [str(err.value)]
    # a reader opens to answer its status (team58: "upgrade memvault", not a bare
    # refusal of everything) and is refused at any other call, saying the same
    with open_vault(root, mode="read") as v:
        assert v.status()["index"]["too_new"]["version"] == 99
        with pytest.raises(IndexCorrupt) as err:
            v.search("postgres")
        said.append(str(err.value))
    for text in said:
        assert "version 99" in text and f"({PG_SCHEMA_VERSION})" in text, text
        assert schema in text and "upgrade memvault" in text, text


def test_other_tables_in_the_database_are_untouched(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS theirs CASCADE")
        conn.execute("CREATE SCHEMA theirs")
        conn.execute("CREATE TABLE theirs.notes(path TEXT, body TEXT)")
        conn.execute("CREATE TABLE theirs.meta(key TEXT, value TEXT)")
        conn.execute("INSERT INTO theirs.notes VALUES('a.md', 'keep me'), ('b.md', 'me too')")
        conn.execute("INSERT INTO theirs.meta VALUES('schema_version', '1')")
        before = sorted(
            conn.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
            ).fetchall()
        )
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        assert v.search("database", k=3)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT * FROM theirs.notes ORDER BY path").fetchall() == [
            ("a.md", "keep me"),
            ("b.md", "me too"),
        ]
        assert conn.execute("SELECT * FROM theirs.meta").fetchall() == [("schema_version", "1")]
        after = sorted(
            conn.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
            ).fetchall()
        )
        conn.execute("DROP SCHEMA theirs CASCADE")
    new = [t for t in after if t not in before]
    assert new and {s for s, _ in new} == {schema}  # only memvault's own schema was added


def _cli(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    full.update(env, PYTHONPATH=str(ROOT / "daemon"), MEMVAULT_INDEX_MODEL="hash")
    return subprocess.run(
        [sys.executable, "-m", "memvault", *args, "--vault", str(root)],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_postgres_not_running_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))  # held, not listening: nothing there, and no program
        port = free.getsockname()[1]  # can start listening there meanwhile
        dsn = f"postgresql://memvault:s3cret-pw@127.0.0.1:{port}/team"
        env = {"MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": dsn}
        run = _cli(root, "sync", env=env)
    assert run.returncode == 7, run.stderr
    assert f"127.0.0.1:{port}" in run.stderr and "cannot reach the index" in run.stderr
    assert "s3cret-pw" not in run.stderr + run.stdout
    # the writer's lock file (empty: any writing command lays it down) aside, nothing
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "lock"}
    assert after == before  # no note, no MEMORY.md, no local index written


def test_a_wrong_password_is_refused_without_showing_it(
    tmp_path: Path, pg_server: Any, pg_dsn: str
) -> None:
    hba = Path(socket_dir(pg_server)) / "pg_hba.conf"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS mv_pw")
        conn.execute("CREATE ROLE mv_pw LOGIN PASSWORD 'right-one'")
        original = hba.read_text()
        hba.write_text("local all mv_pw scram-sha-256\n" + original)
        conn.execute("SELECT pg_reload_conf()")
    try:
        time.sleep(0.5)
        root = make_vault(tmp_path)
        dsn = f"postgresql://mv_pw:wrong-one@/postgres?host={socket_dir(pg_server)}"
        run = _cli(
            root, "sync", env={"MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": dsn}
        )
        assert run.returncode == 7, run.stderr
        assert "password authentication failed" in run.stderr
        assert "wrong-one" not in run.stderr + run.stdout
        assert "mv_pw:***@" in run.stderr
    finally:
        hba.write_text(original)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")


def test_a_stalled_network_times_out_instead_of_hanging(
    tmp_path: Path, pg_server: Any, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = StallProxy(pg_server)
    try:
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", proxy.dsn())
        monkeypatch.setenv("MEMVAULT_INDEX_PG_TIMEOUT", "2")
        root = make_vault(tmp_path)
        with open_vault(root) as v:
            v.sync()
            assert v.search("database", k=3)
            proxy.stall()
            started = time.monotonic()
            with pytest.raises(StorageError) as err:
                v.search("database", k=3)
            waited = time.monotonic() - started
            assert "did not answer within 2 s" in str(err.value)
            assert waited < 30  # bounded by the timeout (2 s), generous for a loaded machine
    finally:
        proxy.close()


def test_killed_mid_sync_resumes_with_no_chunk_lost_or_doubled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = start_server()  # this test stops its own server
    try:
        dsn = str(own.get_uri())
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", dsn)
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema(own, "killed"))
        root = make_vault(tmp_path)
        for i in range(150):
            write(
                root, f"logs/2024-01-{i:03d}.md", note(f"Log {i}", f"entry {i}", f"Body {i} " * 40)
            )
        steps: list[Any] = []

        def stop_the_server(progress: Any) -> None:  # called by the sync, midway
            steps.append(progress)
            if len(steps) == 3:
                kill_server(own)

        with open_vault(root) as v:
            with pytest.raises(StorageError):
                v.sync(progress=stop_the_server)
            assert len(steps) == 3  # it stopped where the server went away
            with pytest.raises(StorageError):  # still down: each call says so
                v.search("entry")
            own.ensure_postgres_running()
            v.sync()  # the same open vault (a daemon's): its connection opened again
            got = snapshot(v)
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema(own, "killed-rebuilt"))
        assert rebuilt_snapshot(root, tmp_path) == got
        assert len(got["notes"]) > 150
    finally:
        stop_server(own)


def test_redact_hides_the_password() -> None:
    assert (
        redact("postgresql://ann:pw@db.example:5433/team")
        == "postgresql://ann:***@db.example:5433/team"
    )
    assert redact("postgresql://db.example/team") == "postgresql://db.example/team"
    assert redact("postgresql://ann:@db/team") == "postgresql://ann:@db/team"  # none to hide
    assert "pw" not in redact("postgresql://db/team?user=a&password=pw")
    assert "s3" not in redact("postgresql://db/team?sslpassword=s3&sslmode=require")
    assert redact("host=db user=ann password=pw dbname=team") == (
        "host=db user=ann password=*** dbname=team"
    )
    assert "x y" not in redact("host=db password='x y' sslpassword=k")
    assert "=k" not in redact("host=db password='x y' sslpassword=k")


def test_index_move_to_postgres_and_back_reuses_every_vector(tmp_path: Path, pg_dsn: str) -> None:
    import json

    root = make_vault(tmp_path)
    for i in range(25):  # past the progress bar's 20 notes
        write(root, f"logs/2024-02-{i:02d}.md", note(f"Day {i}", f"work {i}", f"Did thing {i}."))
    schema = {"MEMVAULT_INDEX_SCHEMA": os.environ["MEMVAULT_INDEX_SCHEMA"]}
    assert _cli(root, "sync", env=schema).returncode == 0
    asked = _cli(root, "search", "which database did we choose", "--json", env=schema)
    before = json.loads(asked.stdout)
    run = _cli(root, "index", "move", "--to", "postgres", "--dsn", pg_dsn, "--json", env=schema)
    assert run.returncode == 0, run.stderr
    moved = json.loads(run.stdout)
    assert moved["embedded"] == 0 and moved["vectors_copied"] > moved["chunks"] > 0
    assert moved["config_written"]
    config = (root / ".memvault" / "config.toml").read_text(encoding="utf-8")
    assert 'store = "postgres"' in config and f'dsn = "{pg_dsn}"' in config
    after = json.loads(
        _cli(root, "search", "which database did we choose", "--json", env=schema).stdout
    )
    assert _rounded(after) == _rounded(before)  # the same hits, now from PostgreSQL
    status = json.loads(_cli(root, "status", "--json", env=schema).stdout)
    assert status["index"]["where"]["store"] == "postgres"
    back = _cli(root, "index", "move", "--to", "sqlite", "--json", env=schema)
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout)["embedded"] == 0
    assert 'store = "sqlite"' in (root / ".memvault" / "config.toml").read_text(encoding="utf-8")
    again = json.loads(
        _cli(root, "search", "which database did we choose", "--json", env=schema).stdout
    )
    assert _rounded(again) == _rounded(before)


def _rounded(found: dict[str, Any]) -> list[dict[str, Any]]:
    """Hits with scores to 4 places (pgvector gets the vectors as decimal text: the
    cosine differs from hnswlib's in the 6th place)."""
    return [{**h, "score": round(h["score"], 4)} for h in found["hits"]]


def test_a_reader_while_the_writer_reindexes_never_cites_lines_not_in_the_note(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    short = note("Alpha log", "alpha", "\n".join(f"- alpha entry {i} short" for i in range(8)))
    long = note("Alpha log", "alpha", "\n".join(f"- alpha entry {i} long form" for i in range(60)))
    versions = [short, long]
    write(root, "logs/alpha.md", short)
    copy = tmp_path / "reader" / "team"
    with open_vault(root) as w:
        w.sync()
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
        (copy / ".memvault").mkdir()
        done = threading.Event()

        def rewrite() -> None:
            for i in range(12):
                write(root, "logs/alpha.md", versions[(i + 1) % 2])
                w.sync()
            done.set()

        writer = threading.Thread(target=rewrite, name="rewriter")
        seen = 0
        with open_vault(copy, mode="read") as r:
            writer.start()
            while not done.is_set() or seen == 0:
                for h in r.search("alpha entry", k=10):
                    if h.path != "logs/alpha.md":
                        continue
                    seen += 1
                    fits = [
                        v
                        for v in versions
                        if h.line_end <= len(v.splitlines())
                        and all(line in v.splitlines() for line in h.text.splitlines() if line)
                    ]
                    assert fits, (h.line_start, h.line_end, h.text)
            writer.join()
    assert seen > 0


def test_a_model_of_another_dimension_re_embeds_to_what_a_fresh_index_gives(
    backend: str, tmp_path: Path
) -> None:
    # PostgreSQL kept the old model's rows and built the new dimension's HNSW index over
    # them first: the cast failed ("expected 32 dimensions, not 64") on every later sync
    from memvault.index.embedder import HashEmbedder

    def hits(v: Any) -> list[Any]:
        return [(h.path, h.line_start, round(h.score, 4)) for q in QUESTIONS for h in v.search(q)]

    root = make_vault(tmp_path, "changed")
    with open_vault(root, embedder=HashEmbedder(64)) as v:
        v.sync()
    with open_vault(root, embedder=HashEmbedder(32)) as v:
        v.sync()
        assert v.pending_vectors()[0] == 0
        got = hits(v)
    fresh = make_vault(tmp_path, "fresh")
    with open_vault(fresh, embedder=HashEmbedder(32)) as v:
        v.sync()
        assert got == hits(v) and got


def test_a_writer_whose_lock_another_took_while_the_server_was_down_writes_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = start_server()  # this test restarts its own server
    try:
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", str(own.get_uri()))
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema(own, "lost-lock"))
        root = make_vault(tmp_path, "team")
        copy = tmp_path / "machine-b" / "team"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
        (copy / ".memvault").mkdir()
        with open_vault(root) as first:
            first.sync()
            kill_server(own)
            own.ensure_postgres_running()
            with open_vault(copy) as second:  # the lock went with the server: b takes it
                assert second._backend.writable
                # a's next call finds its connection lost, opens it again at once (a
                # query, asked again: test_pg_outage.py) and finds its lock taken
                with pytest.raises(LockHeld):
                    first.sync()
                write(root, "people/new.md", note("New", "written on machine a"))
                with pytest.raises(Exception, match="read-only"):  # refused by the server
                    first.sync()
                second.sync()  # the writer that holds the lock goes on
    finally:
        stop_server(own)


def test_a_model_change_on_an_index_past_the_statement_deadline_requeues_every_chunk(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # requeue_all is one transaction over every chunk: its UPDATEs and the queue's
    # INSERTs went under one deadline (pg_timeout), cut on a large index; a trigger
    # makes each UPDATE statement of it slow (0.03 s each: short alone, ~3 s together;
    # the deadline's floor is lowered to match: 10 chunks a second)
    from memvault.index import pg_store
    from memvault.index.embedder import HashEmbedder

    monkeypatch.setattr(pg_store, "REQUEUE_PER_S", 10, raising=False)

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    monkeypatch.setenv("MEMVAULT_INDEX_PG_TIMEOUT", "2")
    root = make_vault(tmp_path, "big")
    for i in range(80):
        write(root, f"logs/2024-03-{i:03d}.md", note(f"Day {i}", f"day {i}", f"Worked on {i}."))
    with open_vault(root, embedder=HashEmbedder(32)) as v:
        v.sync()
        chunks = v.engine.store.chunk_count()
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            f'CREATE FUNCTION "{schema}".slow() RETURNS trigger LANGUAGE plpgsql AS '
            "$$ BEGIN PERFORM pg_sleep(0.03); RETURN NULL; END $$"
        )
        conn.execute(
            f'CREATE TRIGGER slow AFTER UPDATE OF sha ON "{schema}".chunks '
            f'FOR EACH STATEMENT EXECUTE FUNCTION "{schema}".slow()'
        )
    with open_vault(root, embedder=HashEmbedder(64)) as v:  # another model
        v.sync()
        assert v.pending_vectors()[0] == 0
        assert v.engine.store.meta("model_id") == HashEmbedder(64).model_id
        assert v.engine.store.chunk_count() == chunks > 80
        assert v.search("Worked on 7", k=3)


def test_a_cli_write_waits_for_a_short_lived_writer_and_is_refused_at_once_by_a_daemon(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as the file lock (MEMVAULT_LOCK_WAIT): a CLI write waits for another short-lived
    # writer, anywhere, to let go; a daemon holding the lock writes as long as it
    # runs, so waiting for it is pointless: refused at once, naming it
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    env = {
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": schema,
        "MEMVAULT_LOCK_WAIT": "60",
    }
    root = make_vault(tmp_path, "team")
    copy = tmp_path / "machine-b" / "team"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    full.update(env, PYTHONPATH=str(ROOT / "daemon"), MEMVAULT_INDEX_MODEL="hash")
    with open_vault(root) as short_lived:  # a sync on machine a, not a daemon
        short_lived.sync()
        waiting = subprocess.Popen(
            [sys.executable, "-m", "memvault", "sync", "--vault", str(copy)],
            env=full,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        assert waiting.stderr is not None
        said = waiting.stderr.readline()  # it says it waits, and whom for
        assert "waiting for" in said and f"pid {os.getpid()}" in said, said
        assert waiting.poll() is None
    assert waiting.wait(timeout=120) == 0, waiting.stderr.read()  # a let go: b wrote
    waiting.stderr.close()
    with open_vault(root, through_daemon=False) as daemon:  # as `memvault up` opens it
        assert daemon._backend.writable
        started = time.monotonic()
        run = _cli(copy, "sync", env=env)
        assert run.returncode == 6, run.stderr
        assert "(a daemon)" in run.stderr and f"pid {os.getpid()}" in run.stderr
        assert "waiting" not in run.stderr
        assert time.monotonic() - started < 50  # at once, not after MEMVAULT_LOCK_WAIT (60 s)
    with open_vault(root) as short_lived:  # and a daemon starting meanwhile: at once
        short_lived.sync()
        with pytest.raises(LockHeld):
            open_vault(copy, through_daemon=False)


def test_a_bulk_load_builds_the_hnsw_index_after_and_a_kill_midway_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a first index past BULK_ROWS (lowered here to this vault's size) loads the vectors
    # without the HNSW index and builds it once the lane's queue drains; the server
    # killed midway, the next sync resumes, and the index (HNSW index and all) equals
    # a fresh rebuild's, with the same hits as the SQLite index
    from memvault.index import pg_vectors

    monkeypatch.setattr(pg_vectors, "BULK_ROWS", 20, raising=False)
    own = start_server()  # this test stops its own server
    try:
        dsn = str(own.get_uri())
        schema = fresh_schema(own, "bulk")
        root = make_vault(tmp_path, "bulk")
        for i in range(60):
            write(root, f"logs/2024-04-{i:03d}.md", note(f"Day {i}", f"day {i}", f"Shipped {i}."))
        sqlite_hits = _answers(root)  # the default index first (its .memvault/ set aside)
        assert any(sqlite_hits[q] for q in QUESTIONS)
        shutil.rmtree(root / ".memvault")
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", dsn)
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", schema)

        def hnsw() -> list[str]:  # the valid ones (a build under way is not yet)
            return _hnsw(dsn, os.environ["MEMVAULT_INDEX_SCHEMA"])

        during: list[list[str]] = []

        def watch(progress: Any) -> None:
            if progress.stage == "vectors":
                during.append(hnsw())
                if len(during) == 3:
                    kill_server(own)

        with open_vault(root) as v:
            with pytest.raises(StorageError):
                v.sync(progress=watch)
            assert len(during) == 3 and during[0] == []  # loading in bulk: no HNSW index
            own.ensure_postgres_running()
            v.sync()
            # built once the queue drained (on a thread of its own: saves go on)
            eventually(lambda: hnsw() == ["vectors_nodes_64"], what="the HNSW index built")
            got = snapshot(v)
        assert _untied(_answers(root)) == _untied(sqlite_hits)
        monkeypatch.setenv("MEMVAULT_INDEX_SCHEMA", fresh_schema(own, "bulk-rebuilt"))
        assert rebuilt_snapshot(root, tmp_path) == got
        assert hnsw() == ["vectors_nodes_64"]
    finally:
        stop_server(own)


def _hnsw(dsn: str, schema: str) -> list[str]:
    """The schema's valid HNSW indexes."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
            "AND c.relname LIKE 'vectors_nodes_%%' AND i.indisvalid",
            (schema,),
        ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("left", ["none", "invalid"])
def test_the_hnsw_build_never_stops_a_save(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch, left: str
) -> None:
    """The HNSW index missing at open (a bulk load's build not finished: none, or an
    INVALID one a cut CREATE INDEX CONCURRENTLY left) is built by CREATE INDEX
    CONCURRENTLY on a thread of its own: a save goes on while the build waits (here
    for another session's write transaction on the vectors, which a plain CREATE
    INDEX's SHARE lock would wait for with the engine's lock held), and the index is
    built once that ends."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    assert _hnsw(pg_dsn, schema) == ["vectors_nodes_64"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        if left == "none":
            conn.execute(f'DROP INDEX "{schema}".vectors_nodes_64')
        else:  # as a build cut short leaves it
            conn.execute(
                f"UPDATE pg_index SET indisvalid = false WHERE indexrelid = "
                f"'\"{schema}\".vectors_nodes_64'::regclass"
            )
    assert _hnsw(pg_dsn, schema) == []
    blocker = psycopg.connect(pg_dsn)  # another session writing the vectors, not done
    try:
        blocker.execute(f'LOCK TABLE "{schema}".vectors IN ROW EXCLUSIVE MODE')
        with open_vault(root) as v:
            write(root, "people/new.md", note("New Person", "joined", "Works on the queue."))
            report = v.sync()  # the build waits for the blocker; the save does not
            assert "people/new.md" in report.created
            assert v.engine.store.pending_state()[0] == 0
            assert [h.path for h in v.search("works on the queue", k=3)]
            assert _hnsw(pg_dsn, schema) == []
            blocker.rollback()
            eventually(lambda: _hnsw(pg_dsn, schema) == ["vectors_nodes_64"], what="the build")
    finally:
        blocker.close()


def _untied(answers: dict[str, Any]) -> dict[str, Any]:
    """The hits, equal notes' order among equal scores left aside (the log notes here
    tie; labels, which break ties, are handed out in another order after a restart)."""
    return {
        q: sorted(hits, key=lambda h: (-h[-1], h))
        for q, hits in answers.items()
        if not q.startswith("ctx ") and q != "people"
    } | {"people": sorted(answers["people"])}


def _totals(v: Any) -> tuple[int, int]:
    n, ntok = v.engine.store._pg.raw("SELECT n, ntok FROM chunk_totals").fetchone()
    return int(n), int(ntok)


def _counted(v: Any) -> tuple[int, int]:
    row = v.engine.store._pg.raw("SELECT count(*), sum(ntok) FROM chunks").fetchone()
    return int(row[0]), int(row[1])


def test_a_schema_1_index_is_migrated_to_keep_the_chunk_totals(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        expected = [(h.path, round(h.score, 4)) for h in v.search("database schema", k=5)]
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as memvault's schema 1 was
        for trigger in ("insert", "delete", "update"):
            conn.execute(f'DROP TRIGGER chunk_totals_{trigger} ON "{schema}".chunks')
        conn.execute(f'DROP TABLE "{schema}".chunk_totals')
        _as_float16_cache(conn, schema)
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '1' WHERE key = 'schema_version'")
    copy = tmp_path / "reader" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    with open_vault(copy, mode="read") as r:  # a reader of schema 1: counts per query
        assert [(h.path, round(h.score, 4)) for h in r.search("database schema", k=5)] == expected
    with open_vault(root) as v:  # the writer migrates it
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        assert _totals(v) == _counted(v)
        write(root, "people/new.md", note("New Person", "joined", "Works on the database."))
        v.sync()
        assert _totals(v) == _counted(v)
        assert [(h.path, round(h.score, 4)) for h in v.search("database schema", k=5)]


def test_a_schema_3_index_gets_link_names_and_its_stale_verdicts_resolved(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 3 -> 4: the links' name column filled from the targets (as the SQLite
    index's: wikilinks.link_name), indexed; the first sync resolves every stored link
    once; a file deleted then has the stored links of its name resolved again."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    write(root, "logs/a.md", "# A\n\nSee [[Über Plan]] and [[sarah-chen]].\n")
    write(root, "logs/über plan.md", "# Plan\n\nText.\n")
    with open_vault(root) as v:
        v.sync()
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as memvault's schema 3 left it
        conn.execute(f'DROP INDEX "{schema}".links_name')
        conn.execute(f'ALTER TABLE "{schema}".links DROP COLUMN name')
        conn.execute(
            f"UPDATE \"{schema}\".links SET verdict = 'unresolved', resolved = NULL "
            "WHERE target = 'sarah-chen'"
        )
        _as_float16_cache(conn, schema)
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '3' WHERE key = 'schema_version'")
    with open_vault(root) as v:  # the writer migrates it
        store = v.engine.store
        assert store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        names = dict(store._pg.raw("SELECT target, name FROM links").fetchall())
        assert names["Über Plan"] == "über plan" and names["sarah-chen"] == "sarah-chen"
        assert store.meta("links_resolve") == "1"
        v.sync()
        assert not store.meta("links_resolve")
        kept = {(r.target, r.verdict, r.resolved) for r in store.links("logs/a.md")}
        assert ("sarah-chen", "resolved", "people/sarah-chen.md") in kept
        (root / "logs" / "über plan.md").unlink()
        v.sync()
        kept = {(r.target, r.verdict, r.resolved) for r in store.links("logs/a.md")}
        assert ("Über Plan", "unresolved", None) in kept


def test_a_reader_never_migrates_the_schema_while_another_writer_holds_the_lock(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer (another machine's, maybe on older code) holds the lock on a schema 2
    index: a reader opened meanwhile reads it as it is; it neither bumps the version
    nor marks the linking notes to be read again (the writer would then refuse it)."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    stale = f"SELECT count(*) FROM \"{schema}\".notes WHERE sha256 = '' OR mtime_ns = -1"
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-a")
    with open_vault(root, through_daemon=False) as v:  # machine a's writer daemon
        v.sync()
        with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as an older writer left it
            _as_float16_cache(conn, schema)
            conn.execute(f"UPDATE \"{schema}\".meta SET value = '2' WHERE key = 'schema_version'")
            assert conn.execute(stale).fetchone() == (0,)
        copy = tmp_path / "reader" / "vault"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
        (copy / ".memvault").mkdir()
        monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-b")
        with pytest.raises(LockHeld):  # a CLI write there: refused, nothing changed
            open_vault(copy, wait=0.0)
        with open_vault(copy, through_daemon=False, reader=True) as r:  # a reader daemon's
            assert r.engine.store.read_only
            assert [h.path for h in r.search("database schema", k=3)]
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            version = conn.execute(
                f"SELECT value FROM \"{schema}\".meta WHERE key = 'schema_version'"
            ).fetchone()
            assert version == ("2",)
            assert conn.execute(stale).fetchone() == (0,)


def test_a_daemon_becomes_a_reader_only_beside_a_daemon_of_another_machine(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon starting (``reader=True``) while the lock is held: a short-lived CLI
    writer's is waited for, then refused (a restarted writer daemon must not turn
    reader for good behind a colleague's ``memvault add``); a daemon of this host (its
    own predecessor's lingering session) is refused too (exit 6: the service manager
    retries); only a daemon of another machine makes it a reader."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    copy = tmp_path / "other" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-a")
    with open_vault(root) as v:  # a CLI writer (no daemon): a short-lived one
        v.sync()
        with pytest.raises(LockHeld) as held:
            open_vault(copy, through_daemon=False, reader=True, wait=0.3)
        assert outcome(held.value)[0] == 6
    with open_vault(root, through_daemon=False):  # a daemon of this host holds it
        with pytest.raises(LockHeld):
            open_vault(copy, through_daemon=False, reader=True, wait=0.3)
        monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-b")  # ... of another machine
        with open_vault(copy, through_daemon=False, reader=True, wait=0.3) as r:
            assert r.engine.store.read_only
            assert [h.path for h in r.search("database schema", k=3)]


def test_a_daemon_writer_reconnected_still_holds_the_lock_as_a_daemon(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its sessions cut by the server (a restart, a network cut): the daemon takes the
    writer's lock again on its next call, and its lock session still says it is a
    daemon's (so a CLI write is refused at once, not left waiting for it)."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    key = lock_key(os.environ["MEMVAULT_INDEX_SCHEMA"], "writer")
    with open_vault(root, through_daemon=False) as v:  # a daemon's open
        v.sync()
        store = v.engine.store
        assert _holder_kind(store._writer.conn, key) == "daemon"
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            cut = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name LIKE %s",
                (f"memvault % {os.getpid()}",),
            ).fetchall()
        assert len(cut) >= 2  # its search session and its lock session
        write(root, "people/new.md", note("New Person", "joined", "Works on the database."))
        try:
            v.sync()
        except StorageError:  # the cut noticed by this call: the next one reconnects
            v.sync()
        assert store._writer is not None and not store.read_only
        assert _holder_kind(store._writer.conn, key) == "daemon"


def test_a_schema_2_index_reads_the_notes_holding_a_link_again_once(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Links are embedded without their folders (SQLite schema 5, PostgreSQL 3): an
    index written before keeps its linking chunks' old vectors unless the notes holding
    a link are read again; only those are, and the index then equals a fresh one."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    write(
        root, "logs/linked.md", note("Linked", body="Met [[people/team/sarah-chen|Sarah]] today.")
    )
    write(root, "logs/plain.md", note("Plain", body="Nothing links from here."))
    write(root, "logs/short.md", note("Short", body="Met [[people/sarah-chen|Sarah]], one folder."))
    with open_vault(root) as v:
        v.sync()
        linking = {
            n.path for n in v.engine.store.notes()
            for c in v.engine.store.chunks_of(n.path)
            if ("[[" in c.text or "](" in c.text) and c.text.count("/") >= 2
        }  # fmt: skip
    assert "logs/linked.md" in linking
    assert "logs/plain.md" not in linking and "logs/short.md" not in linking
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # what schema 2 held
        conn.execute(
            f"UPDATE \"{schema}\".chunks SET sha = 'x' || sha "
            "WHERE (text LIKE '%[[%' OR text LIKE '%](%') AND text LIKE '%/%/%'"
        )
        _as_float16_cache(conn, schema)
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '2' WHERE key = 'schema_version'")
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION)
        report = v.sync()
        assert set(report.modified) == linking
        assert v.engine.store.pending_state()[0] == 0
        kept = snapshot(v)
    with open_vault(root) as v:  # opened again: nothing more to read
        assert v.sync().modified == ()
    assert kept == rebuilt_snapshot(root, tmp_path)


def test_a_schema_4_index_keeps_its_cache_as_int8_and_embeds_nothing_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 4 -> 5: the embedding cache's float16 rows converted to int8 with a
    scale (cache.db's version 3: both backends hold the same vectors), a row memvault
    did not write dropped; the next sync embeds nothing again and searches as before."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        before = _hits(v)
    schema = os.environ["MEMVAULT_INDEX_SCHEMA"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as memvault's schema 4 kept it
        half = _as_float16_cache(conn, schema)
        conn.execute(
            f'INSERT INTO "{schema}".embeddings(model, sha, vector) VALUES(%s, %s, %s)',
            ("hash-64", b"\x01" * 32, b"\x00\x01\x02"),  # not float16: not memvault's
        )
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '4' WHERE key = 'schema_version'")
    copy = tmp_path / "reader" / "vault"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    reader = open_vault(copy, mode="read")  # another machine's reader, open throughout
    try:
        assert _hits(reader) == before  # schema 4's float16 rows, read as such
        models = {m for m, _ in half}
        read = {
            m: reader.engine.store.cached(m, [s.hex() for mm, s in half if mm == m]) for m in models
        }
        assert all(
            np.array_equal(read[m][s.hex()], v.astype(np.float32)) for (m, s), v in half.items()
        )
        with open_vault(root) as v:  # the writer migrates it
            for m in models:  # int8 from the migration's commit on, in the same reader
                again = reader.engine.store.cached(m, [s.hex() for mm, s in half if mm == m])
                assert set(again) == set(read[m])
                assert all(
                    np.abs(again[k] - read[m][k]).max() <= np.abs(read[m][k]).max() / 254 * 1.0001
                    for k in again
                )
                assert not all(np.array_equal(again[k], read[m][k]) for k in again)
    finally:
        reader.close()
    with open_vault(root) as v:
        store = v.engine.store
        assert store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        kept = {
            (m, bytes(s)): bytes(b)
            for m, s, b in store._pg.raw("SELECT model, sha, vector FROM embeddings").fetchall()
        }
        assert set(kept) == set(half)  # the stray row dropped, every other kept
        dim = len(next(iter(half.values())))
        assert {len(b) for b in kept.values()} == {4 + dim}  # a float32 scale, an int8 each
        for key, vector in half.items():
            got, want = vector_cache.decode(kept[key]), vector.astype(np.float32)
            assert np.abs(got - want).max() <= np.abs(want).max() / 254 * (1 + 1e-5)
        report = v.sync()
        assert report.embedded_chunks == 0
        assert [
            (h.path, h.line_start) for h in v.search("which database did we choose", k=5)
        ] == before
    (model, sha), stray = next(iter(half)), b"\x02" * 32
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # too short for int8's scale
        conn.execute(
            f'INSERT INTO "{schema}".embeddings(model, sha, vector) VALUES(%s, %s, %s)',
            (model, stray, b"\x01\x02"),
        )
    with open_vault(root) as v:  # a miss (embedded again), not an error
        assert set(v.engine.store.cached(model, [stray.hex(), sha.hex()])) == {sha.hex()}
