"""Hostile and unlucky inputs: each way memvault was made to lose words, blow
up or stall, reproduced through the interfaces a person or an agent uses.

Real parts throughout: the filesystem, SQLite, watchdog, the CLI through Typer, the
HTTP app, the MCP server over stdio, and a real ``memvault daemon run`` subprocess
where the defect needs one (tests marked slow).
"""

from __future__ import annotations

import json
import os
import random
import resource
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from helpers import (
    DaemonProcess,
    daemon_idle,
    eventually,
    make_vault,
    note,
    open_vault,
    run_memvault,
    write,
)
from memvault import errors as E
from memvault.api import Vault
from memvault.interfaces.cli import app as cli_app
from memvault.service.http_api import create_app
from memvault.service.watch_queue import ChangeQueue
from memvault.service.watcher import Watcher, WatchSettings

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"
PORT = 48124
TOKEN = "hostile-token-" + "x" * 29
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BAD_NAME = b"notes/name\xff\xfe.md"  # not UTF-8: Python sees lone surrogates
BAD_SHOWN = "notes/name\\xff\\xfe.md"  # how memvault reports it
LONG = "a" * 5000 + ".md"

runner = CliRunner()


def cli(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(cli_app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")  # config reads it at Vault.open


def found(vault: Vault, word: str) -> set[str]:
    """Notes whose hit text holds ``word`` (the hash embedder's vector hits fill k)."""
    return {h.path for h in vault.search(word, k=20) if word in h.text.lower()}


def http_client(vault: Vault) -> tuple[Any, TestClient]:
    app = create_app(vault, TOKEN, lambda: {"port": PORT}, port=PORT)
    return app, TestClient(app, base_url=f"http://127.0.0.1:{PORT}", headers=AUTH)


# -- a real daemon ------------------------------------------------------------------------------


class Daemon(DaemonProcess):
    """``memvault daemon run`` in a subprocess (hash embedder), with its HTTP API."""

    def __init__(
        self,
        root: Path,
        tmp_path: Path,
        preexec: Callable[[], None] | None = None,
        **settings: str,
    ) -> None:
        super().__init__(tmp_path, root, preexec=preexec, **settings)
        self.info = self.ready()
        self.url = f"http://127.0.0.1:{self.info['port']}"

    def get(self, path: str, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.info['token']}"}
        return httpx.get(self.url + path, headers=headers, trust_env=False, **kw)

    def post(self, path: str, body: Any, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.info['token']}"}
        return httpx.post(self.url + path, json=body, headers=headers, trust_env=False, **kw)

    def status(self) -> dict[str, Any]:
        r = self.get("/status", timeout=60)
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    def indexed(self, path: str) -> bool:
        r = self.get(f"/notes/{path}", timeout=60)
        return r.status_code == 200 and self.status()["index"]["matches_disk"]

    def settled(self) -> bool:
        return daemon_idle(self.status()["daemon"])


@pytest.fixture
def daemon_for(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(root: Path, preexec: Callable[[], None] | None = None, **settings: str) -> Daemon:
        d = Daemon(root, tmp_path, preexec, **settings)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


# -- 3: a file name that is not UTF-8 --------------------------------------------------------------


def put_bad_name(root: Path) -> None:
    (root / "notes").mkdir(exist_ok=True)
    with open(os.path.join(os.fsencode(root), BAD_NAME), "wb") as fh:
        fh.write(b"# Odd name\n\nzanzibar sloth\n")


def test_a_note_named_in_invalid_utf8_is_skipped_and_reported_by_sync(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    put_bad_name(root)
    write(root, "notes/fine.md", note("Fine", body="quokka harbour"))
    with open_vault(root) as v:
        report = v.sync()
        assert [(s.path, "UTF-8" in s.reason) for s in report.skipped] == [(BAD_SHOWN, True)]
        assert "notes/fine.md" in report.created
        assert found(v, "quokka") == {"notes/fine.md"}
        assert v.get("notes/fine.md").text.startswith("---")
        status = v.status()
        assert {"path": BAD_SHOWN, "reason": report.skipped[0].reason} in status["skipped_files"]
        assert status["index"]["matches_disk"]
        json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as is
        assert not v.sync().changed  # and stays skipped, quietly


def test_a_folder_named_in_invalid_utf8_is_skipped_once(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    folder = os.path.join(os.fsencode(root), b"topics\xff")
    os.makedirs(folder)
    with open(os.path.join(folder, b"a.md"), "w", encoding="utf-8") as fh:
        fh.write("# A\n")
    with open_vault(root) as v:
        report = v.sync()
    assert [s.path for s in report.skipped] == ["topics\\xff"]


def test_cli_sync_status_search_get_work_beside_an_invalid_name(
    tmp_path: Path, hashed: None
) -> None:
    root = make_vault(tmp_path)
    put_bad_name(root)
    code, out, err = cli("sync", "--vault", root)
    assert code == 0, err
    assert f"skipped {BAD_SHOWN}: the name is not valid UTF-8" in out
    code, out, err = cli("status", "--vault", root, "--json")
    assert code == 0, err
    assert BAD_SHOWN in [s["path"] for s in json.loads(out)["skipped_files"]]
    code, out, _ = cli("status", "--vault", root)
    assert f"{BAD_SHOWN}: the name is not valid UTF-8" in out
    code, out, err = cli("search", "PostgreSQL", "--vault", root, "--json")
    assert code == 0 and json.loads(out)["hits"], err
    code, out, err = cli("get", "people/sarah-chen.md", "--vault", root)
    assert code == 0 and "Sarah Chen" in out, err


def test_http_status_lists_an_invalid_name(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    put_bad_name(root)
    with open_vault(root) as v:
        v.sync()
        app, client = http_client(v)
        with client:
            r = client.get("/status")
            assert r.status_code == 200, r.text
            assert BAD_SHOWN in [s["path"] for s in r.json()["skipped_files"]]
            assert client.post("/search", json={"query": "PostgreSQL"}).status_code == 200
        app.state.close()


def watching(vault: Vault) -> Watcher:
    w = Watcher(
        vault.root, vault.sync, is_ignored=vault.is_ignored, settings=WatchSettings(quiet_ms=50)
    )
    w.start(initial_reconcile=False)
    return w


def test_a_watcher_batch_with_an_invalid_name_indexes_the_rest(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        w = watching(v)
        try:
            put_bad_name(root)
            write(root, "notes/beside.md", note("Beside", body="wombat lantern"))
            eventually(lambda: v.engine.store.note("notes/beside.md"), what="the other note")
            assert w.last_error is None and w.batches_failed == 0
            assert found(v, "wombat") == {"notes/beside.md"}
        finally:
            w.stop()


@pytest.mark.slow
def test_a_daemon_starts_and_serves_beside_an_invalid_name(
    tmp_path: Path, daemon_for: Callable[..., Daemon]
) -> None:
    root = make_vault(tmp_path)
    put_bad_name(root)
    d = daemon_for(root, MEMVAULT_DAEMON_DEBOUNCE_MS="50")
    eventually(d.settled, what="the start-up reconcile")
    status = d.status()
    assert status["daemon"]["last_error"] is None and status["daemon"]["failed_batches"] == 0
    assert BAD_SHOWN in [s["path"] for s in status["skipped_files"]]
    write(root, "notes/later.md", note("Later", body="capybara"))
    eventually(lambda: d.indexed("notes/later.md"), what="a note saved afterwards")
    hits = d.post("/search", {"query": "capybara", "k": 20}).json()["hits"]
    assert {h["path"] for h in hits if "capybara" in h["text"]} == {"notes/later.md"}


# -- 5: a symlink to a file outside the vault ------------------------------------------------------


def test_a_symlink_leading_out_is_skipped_and_the_batch_goes_through(tmp_path: Path) -> None:
    outside = tmp_path / "hostname"
    outside.write_text("SECRET host\n", encoding="utf-8")
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        w = watching(v)
        try:
            (root / "notes").mkdir()
            (root / "notes" / "host.md").symlink_to(outside)
            write(root, "notes/new.md", note("New", body="okapi meadow"))
            eventually(lambda: v.engine.store.note("notes/new.md"), 10, "the note beside it")
            assert w.last_error is None and w.batches_failed == 0
            assert v.engine.store.note("notes/host.md") is None
            assert not found(v, "secret")
            report = v.sync(["notes/host.md"])
            assert [(s.path, s.reason) for s in report.skipped] == [
                ("notes/host.md", "symlink leads outside the vault")
            ]
        finally:
            w.stop()


def test_a_note_replaced_by_a_symlink_leading_out_leaves_the_index(tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("SECRET\n", encoding="utf-8")
    root = make_vault(tmp_path)
    write(root, "notes/n.md", note("N", body="ibis"))
    with open_vault(root) as v:
        v.sync()
        (root / "notes" / "n.md").unlink()
        (root / "notes" / "n.md").symlink_to(outside)
        report = v.sync(["notes/n.md"])
        assert report.deleted == ("notes/n.md",)
        assert v.engine.store.note("notes/n.md") is None


def test_a_symlinked_folder_named_by_an_event_is_not_read_through(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "private.md").write_text("# Private\n\nSECRET\n", encoding="utf-8")
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        (root / "linked").symlink_to(tmp_path / "elsewhere")
        report = v.sync(["linked", "linked/private.md"])
        assert {s.path for s in report.skipped} == {"linked", "linked/private.md"}
        assert v.engine.store.note("linked/private.md") is None


def test_a_failed_batch_keeps_the_age_of_its_first_change() -> None:
    now = [100.0]
    q = ChangeQueue(100, clock=lambda: now[0])
    q.put(["a.md"])
    now[0] = 100.2
    batch = q.take()
    assert batch is not None and batch.oldest == 100.0
    now[0] = 130.0  # the sync failed after 30 s: the paths go back with their age
    q.put(sorted(batch.paths or ()), since=batch.oldest)
    assert q.oldest == 100.0
    q.request_full("retry", since=90.0)
    assert q.oldest == 90.0


@pytest.mark.slow
def test_a_daemon_indexes_at_once_beside_a_symlink_leading_out(
    tmp_path: Path, daemon_for: Callable[..., Daemon]
) -> None:
    outside = tmp_path / "hostname"
    outside.write_text("SECRET host\n", encoding="utf-8")
    root = make_vault(tmp_path)
    d = daemon_for(root, MEMVAULT_DAEMON_DEBOUNCE_MS="50")
    eventually(d.settled, what="the start-up reconcile")
    (root / "notes").mkdir()
    (root / "notes" / "host.md").symlink_to(outside)
    write(root, "notes/new.md", note("New", body="okapi"))
    # within seconds (before: not until the periodic reconcile, 120 s and more)
    eventually(lambda: d.indexed("notes/new.md"), 20, "the note beside the symlink")
    daemon = d.status()["daemon"]
    assert daemon["last_error"] is None and daemon["failed_batches"] == 0
    assert d.get("/notes/notes/host.md").status_code == 400


# -- 6: field names and values that would break the frontmatter -------------------------------------

BAD_FIELDS = [
    {"role\n": "x"},
    {"status\n": "x"},
    {"a b": "x"},
    {"summary: x\nrole": "y"},
    {"": "x"},
]


@pytest.mark.parametrize("fields", BAD_FIELDS)
def test_http_refuses_a_bad_field_and_writes_nothing(tmp_path: Path, fields: dict) -> None:
    root = make_vault(tmp_path)
    before = (root / "people/sarah-chen.md").read_bytes()
    with open_vault(root) as v:
        v.sync()
        app, client = http_client(v)
        with client:
            body = {"category": "people", "title": "Sarah Chen", "fields": fields, "update": True}
            r = client.post("/notes", json=body)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["message"]
        app.state.close()
    assert (root / "people/sarah-chen.md").read_bytes() == before


def test_a_value_with_newlines_and_control_characters_is_one_quoted_line(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    value = "x\nsummary: hijacked\x00\x1b[31m"
    with open_vault(root) as v:
        v.sync()
        v.add("people", "Sarah Chen", fields={"role": value}, update=True)
        row = v.engine.store.note("people/sarah-chen.md")
    assert row is not None and row.frontmatter["role"] == value
    assert row.summary.startswith("Backend lead on the platform team")  # not "hijacked"
    text = (root / "people/sarah-chen.md").read_text(encoding="utf-8")
    assert [ln for ln in text.splitlines() if ln.startswith("role:")] == [
        'role: "x\\nsummary: hijacked\\u0000\\u001b[31m"'
    ]


@pytest.mark.parametrize("field", ["status\n=x", "role\n=x", "a b=x", "\x1b[31m=x"])
def test_cli_refuses_a_bad_field_with_exit_2_and_writes_nothing(
    tmp_path: Path, hashed: None, field: str
) -> None:
    root = make_vault(tmp_path)
    before = sorted(p.name for p in (root / "people").iterdir())
    sarah = (root / "people/sarah-chen.md").read_bytes()
    code, _, err = cli("add", "people", "--title", "Bob", "--field", field, "--vault", root)
    assert code == 2, err
    code, _, err = cli(
        "add", "people", "--title", "Sarah Chen", "--update", "--field", field, "--vault", root
    )
    assert code == 2, err
    assert sorted(p.name for p in (root / "people").iterdir()) == before
    assert (root / "people/sarah-chen.md").read_bytes() == sarah


# -- 13: over-long and odd paths ----------------------------------------------------------------------

ODD_PATHS = [
    LONG,  # one name of 5,000 characters
    "/".join(["b" * 200] * 30) + ".md",  # every name fits, the whole path does not
    "x" * 300 + ".md",
    "people/" + "é" * 200 + ".md",  # 200 characters, 400 bytes
]


@pytest.mark.parametrize("path", ODD_PATHS, ids=["5000-name", "6000-path", "300-name", "400-bytes"])
def test_http_answers_an_over_long_path_with_400(tmp_path: Path, path: str) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        app, client = http_client(v)
        with client:
            for r in (
                client.get(f"/notes/{path}"),
                client.get("/related", params={"path": path}),
                client.post("/sync", json={"paths": [path]}),
            ):
                assert r.status_code == 400, r.text
                assert r.json()["error"]["type"] == "UnsafePath"
                assert "too long" in r.json()["error"]["message"]
            assert client.get("/health").status_code == 200
        app.state.close()


def test_the_python_api_and_the_cli_refuse_an_over_long_path(tmp_path: Path, hashed: None) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        for path in ODD_PATHS:
            with pytest.raises(E.UnsafePath, match="too long"):
                v.get(path)
    code, _, err = cli("get", LONG, "--vault", root)
    assert code == 5 and "too long" in err


def test_a_path_too_long_only_with_the_vault_folder_in_front_is_refused(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 200) / ("e" * 200)
    root = make_vault(deep)
    rel = "/".join(["f" * 250] * 15) + ".md"  # < 4000 bytes alone, > 4096 under the root
    with open_vault(root) as v, pytest.raises(E.UnsafePath, match="too long"):
        v.get(rel)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["status", "--vault", LONG], 3),
        (["search", "x", "--vault", LONG], 3),
        (["daemon", "status", "--vault", LONG], 3),
        (["obsidian", "install", "--vault", LONG], 3),
        (["init", LONG], 2),
        (["migrate", LONG], 2),
    ],
    ids=["status", "search", "daemon-status", "obsidian", "init", "migrate"],
)
def test_an_over_long_vault_path_is_an_error_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], code: int
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli_app, args)
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "File name too long" in result.stderr and "Traceback" not in result.output


def test_opening_an_over_long_vault_path_is_vault_not_found() -> None:
    with pytest.raises(E.VaultNotFound, match="File name too long"):
        Vault.open("a" * 5000)


# -- 8: a symlinked MEMORY.md ---------------------------------------------------------------------


def test_a_symlinked_memory_md_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "docs").mkdir()
    os.replace(root / "MEMORY.md", root / "docs" / "index.md")
    (root / "MEMORY.md").symlink_to(Path("docs") / "index.md")
    with open_vault(root) as v:
        v.sync()
        write(root, "people/zed.md", note("Zed Park", "a welder"))
        report = v.sync()
        assert report.memory_written
        v.add("people", "Yan Li", summary="a potter")
    assert (root / "MEMORY.md").is_symlink()
    assert os.readlink(root / "MEMORY.md") == os.path.join("docs", "index.md")
    target = (root / "docs" / "index.md").read_text(encoding="utf-8")
    assert "[[people/zed-park]]" in target or "[[people/zed]]" in target
    assert "[[people/yan-li]]" in target
    assert not [p for p in (root / "docs").iterdir() if p.name != "index.md"]  # no temp left


def test_a_memory_md_linked_out_of_the_vault_is_left_alone_and_reported(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Memory Index\n\nmine\n", encoding="utf-8")
    root = make_vault(tmp_path)
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").symlink_to(outside)
    with open_vault(root) as v:
        write(root, "people/zed.md", note("Zed Park", "a welder"))
        report = v.sync()
    assert any("MEMORY.md left untouched" in p and "outside" in p for p in report.problems)
    assert outside.read_text(encoding="utf-8") == "# Memory Index\n\nmine\n"
    assert (root / "MEMORY.md").is_symlink()


# -- 1: a slow in-place save of MEMORY.md ----------------------------------------------------------

SAVE_ROUNDS = 200


@pytest.mark.slow
def test_a_slow_in_place_save_of_memory_md_never_loses_its_tail(
    tmp_path: Path, daemon_for: Callable[..., Daemon]
) -> None:
    """``( cat MEMORY.md; sleep; echo TAIL ) > MEMORY.md`` while a note is created: the
    shell truncates MEMORY.md and holds it open while it sleeps; a daemon that swapped
    its own version in then would send the tail to a file no longer there."""
    rng = random.Random(11)
    root = make_vault(tmp_path)
    mem, snap = root / "MEMORY.md", tmp_path / "snapshot.md"
    d = daemon_for(root, MEMVAULT_DAEMON_DEBOUNCE_MS="30")
    eventually(d.settled, what="the start-up reconcile")
    tails = ""
    for i in range(SAVE_ROUNDS):
        # mostly short pauses; every 20th as long as the report's (past memvault's wait)
        pause = 1.5 if i % 20 == 19 else rng.uniform(0.05, 0.4)
        snap.write_bytes(mem.read_bytes())
        writer = subprocess.Popen(
            ["sh", "-c", f'( cat "{snap}"; sleep {pause:.2f}; echo "tail {i}" ) > "{mem}"']
        )
        threading.Event().wait(rng.uniform(0.0, 0.05))
        write(root, f"people/p{i}.md", note(f"Person {i}", f"person number {i}"))
        assert writer.wait(30) == 0
        tails += f"tail {i}\n"
        eventually(lambda: d.settled() and d.status()["index"]["matches_disk"], 60, "a sync")
        text = mem.read_text(encoding="utf-8")
        assert text.endswith(tails), f"round {i} lost the person's words:\n{text[-400:]}"

    def listed() -> str:
        return mem.read_text(encoding="utf-8") + (root / "people/people.md").read_text("utf-8")

    # the update is redone on top of the person's version once the shell closed the file
    # (the daemon's tick picks a MEMORY.md left busy up within seconds)
    eventually(lambda: f"[[people/p{SAVE_ROUNDS - 1}]]" in listed(), 20, "the redone update")
    assert mem.read_text(encoding="utf-8").endswith(tails)  # and the redo kept every tail
    assert d.status()["daemon"]["failed_batches"] == 0


# -- 11: idle unauthenticated connections --------------------------------------------------------

IDLE_SOCKETS = 1100


def _cap_open_files() -> None:  # in the daemon's child process: a common default, no room to raise
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


@pytest.mark.slow
def test_a_thousand_idle_connections_do_not_starve_the_daemon(
    tmp_path: Path, daemon_for: Callable[..., Daemon]
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = IDLE_SOCKETS + 200
    assert hard == resource.RLIM_INFINITY or hard >= need, f"raise `ulimit -Hn` to {need}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))
    root = make_vault(tmp_path)
    d = daemon_for(root, preexec=_cap_open_files, MEMVAULT_DAEMON_DEBOUNCE_MS="50")
    eventually(d.settled, what="the start-up reconcile")
    socks: list[socket.socket] = []
    try:
        for _ in range(IDLE_SOCKETS):  # each sends half a request and waits
            s = socket.create_connection(("127.0.0.1", d.info["port"]), timeout=30)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        assert d.get("/health", timeout=10).status_code == 200
        write(root, "notes/after.md", note("After", body="pangolin"))
        eventually(lambda: d.indexed("notes/after.md"), 20, "a note saved meanwhile")
        hits = d.post("/search", {"query": "pangolin", "k": 20}, timeout=10).json()["hits"]
        assert {h["path"] for h in hits if "pangolin" in h["text"]} == {"notes/after.md"}
        assert d.status()["daemon"]["last_error"] is None
    finally:
        for s in socks:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert "Too many open files" not in d.stderr


# -- 2: a YAML alias bomb in a note's frontmatter ------------------------------------------------

BOMB_LEVELS = "\n".join(  # the 9x9 bomb
    ["a: &a [" + ",".join(["lol"] * 9) + "]"]
    + [
        f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)
BOMB = f"---\n{BOMB_LEVELS}\n---\n# Bomb\n\nThe body is still read: axolotl.\n"
CAP_SYNC = 512 << 20  # address space: the bomb expanded needs gigabytes (9^9 strings)
CAP_DAEMON = 1536 << 20  # a daemon reserves more (uvicorn, watchdog, thread stacks)


def _cap_memory(limit: int) -> Callable[[], None]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return cap


def test_the_bomb_is_nine_anchors_of_nine_aliases_in_a_few_hundred_bytes() -> None:
    assert len(f"---\n{BOMB_LEVELS}\n---\n".encode()) <= 362 and BOMB_LEVELS.count("*") == 72


def test_memvault_sync_on_a_bomb_stays_small_reports_it_and_indexes_the_body(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    write(root, "notes/bomb.md", BOMB)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(DAEMON_DIR), MEMVAULT_INDEX_MODEL="hash", HOME=str(tmp_path))

    def memvault(*args: str) -> subprocess.CompletedProcess[str]:
        return run_memvault(*args, "--vault", str(root), env=env, preexec_fn=_cap_memory(CAP_SYNC))

    sync = memvault("sync")
    assert sync.returncode == 0, sync.stderr[-2000:]
    assert "warning: notes/bomb.md: frontmatter ignored: aliases expand" in sync.stdout
    found = json.loads(memvault("search", "axolotl", "--json").stdout)["hits"]
    assert "notes/bomb.md" in {h["path"] for h in found if "axolotl" in h["text"]}
    got = memvault("get", "notes/bomb.md")
    assert got.returncode == 0 and "axolotl" in got.stdout
    assert memvault("sync").returncode == 0  # and again: nothing left to choke on


@pytest.mark.slow
def test_a_daemon_capped_in_memory_indexes_a_bomb_and_carries_on(
    tmp_path: Path, daemon_for: Callable[..., Daemon]
) -> None:
    root = make_vault(tmp_path)
    write(root, "notes/first.md", BOMB)  # there at start-up: the reconcile meets it
    d = daemon_for(root, preexec=_cap_memory(CAP_DAEMON), MEMVAULT_DAEMON_DEBOUNCE_MS="50")
    eventually(d.settled, 60, "the start-up reconcile")
    write(root, "notes/second.md", BOMB.replace("axolotl", "quetzal"))  # and a watcher batch
    eventually(lambda: d.indexed("notes/second.md"), 30, "the bomb saved later")
    status = d.status()
    assert status["daemon"]["last_error"] is None and status["daemon"]["failed_batches"] == 0
    # the daemon's own list of the last syncs' warnings: the last sync may be a later one
    # (MEMORY.md's own event, or the catch-up, under load), which has none of its own
    warnings = status["daemon"]["warnings"]
    assert any(w.startswith("notes/second.md: frontmatter ignored: aliases") for w in warnings)
    for word, path in (("axolotl", "notes/first.md"), ("quetzal", "notes/second.md")):
        hits = d.post("/search", {"query": word, "k": 20}).json()["hits"]
        assert path in {h["path"] for h in hits if word in h["text"]}
    assert d.proc.poll() is None


# -- 12: link repair leaves code, math and comments alone ----------------------------------------

LINKER = """---
title: Linker
---
# Linker

The real link: [[alpha]], and [[alpha|with an alias]].

    [[alpha]] in an indented code block

$$
[[alpha]] in display math
$$

Inline $[[alpha]]$ math, and <!-- [[alpha]] in a comment --> beside it.

<!--
[[alpha]] in a block comment
-->
"""


@pytest.mark.slow
def test_a_rename_through_the_daemon_retargets_only_real_links(
    tmp_path: Path, daemon_for: Callable[..., Daemon]
) -> None:
    root = make_vault(tmp_path)
    write(root, "notes/alpha.md", note("Alpha", body="the first letter"))
    write(root, "notes/linker.md", LINKER)
    d = daemon_for(root, MEMVAULT_DAEMON_DEBOUNCE_MS="50")
    eventually(d.settled, what="the start-up reconcile")
    os.rename(root / "notes/alpha.md", root / "notes/beta.md")  # as Obsidian or `mv` would
    expected = LINKER.replace(
        "The real link: [[alpha]], and [[alpha|with", "The real link: [[beta]], and [[beta|with"
    )
    linker = root / "notes/linker.md"
    eventually(lambda: "[[beta]]" in linker.read_text(encoding="utf-8"), 30, "the relink")
    eventually(d.settled, what="the rename's batch")
    assert linker.read_text(encoding="utf-8") == expected  # code, math, comments: byte for byte
    assert d.status()["links"]["unresolved"] == 0
