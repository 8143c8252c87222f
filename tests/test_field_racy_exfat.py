"""A second save in the same second on a real exFAT disk (exfat-fuse on a loop file keeps
mtimes to the whole second: tests/casefs.py) is seen by the next call and every call
after (git's "racy clean" problem: engine/racy_rows.py). The door's field test saved a
note, let an agent's call sync it, saved it again at the same size within the second:
the second save kept the (size, mtime) the index recorded and 10 of 10 were missed by
the call after and every call after. Through the real MCP server (the door keeps the
vault between calls) and a real daemon process. The mount needs root and exfat-fuse;
without them these tests fail saying so, as the other exFAT tests do."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
from anyio.from_thread import start_blocking_portal

from helpers import DaemonProcess, eventually, note, open_vault, write
from memvault.vault.template import init_vault
from test_mcp_server import Server, mcp_session

NOTE = "notes/racy.md"
TRIES = 6


def text(word: str) -> str:
    return note("Racy", "A note saved twice in one second", f"The word is {word}.")


def second_saves(root: Path, look: Callable[[str], bool]) -> tuple[int, int]:
    """(second saves in the same second as the first and its look, of them the ones
    ``look`` missed): a save at the start of a second, a look (it syncs the note), a save
    again of the same size at once."""
    path, racy, missed = root / NOTE, 0, 0
    for i in range(TRIES):
        time.sleep(1.05 - time.time() % 1)  # the start of a second: the look fits in it
        path.write_text(text(f"w{i}a"), encoding="utf-8")
        assert look(f"w{i}a"), f"the first save {i} was not seen"
        before = path.stat()
        path.write_text(text(f"w{i}b"), encoding="utf-8")
        after = path.stat()
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            continue  # a new second: no racy save
        racy += 1
        missed += not look(f"w{i}b")
    return racy, missed


def vault_on(place: Path) -> Path:
    root = place / "vault"
    init_vault(root)
    write(root, NOTE, text("w-a"))
    with open_vault(root) as v:
        v.sync()
    return root


def test_the_mcp_server_sees_a_second_save_in_the_same_second(place: Path, tmp_path: Path) -> None:
    root = vault_on(place)
    with (
        open(tmp_path / "mcp-stderr.log", "w") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_session(root, errlog, "hash")) as session,
    ):
        server = Server(portal, session, root)

        def look(word: str) -> bool:
            return word in server.ok("memory_context", query=f"The word is {word}", budget=400)

        racy, missed = second_saves(root, look)
    assert racy, "no second save fell in the same second as the first (a slow machine?)"
    assert missed == 0, f"{missed} of {racy} second saves in the same second missed"


def test_the_daemon_indexes_a_second_save_in_the_same_second(place: Path, tmp_path: Path) -> None:
    root = vault_on(place)
    daemon = DaemonProcess(tmp_path, root)
    try:
        info = daemon.ready(answering=True)
        url, auth = f"http://127.0.0.1:{info['port']}", {"Authorization": f"Bearer {info['token']}"}

        def has(word: str) -> bool:
            got = httpx.post(
                f"{url}/search", json={"query": word, "k": 20}, headers=auth, trust_env=False
            )
            got.raise_for_status()
            return any(word in h["text"] for h in got.json()["hits"])

        def look(word: str) -> bool:
            try:
                eventually(lambda: has(word), 8, f"{word} indexed", every=0.02)
            except AssertionError:
                return False
            return True

        racy, missed = second_saves(root, look)
    finally:
        daemon.stop()
    assert racy, "no second save fell in the same second as the first (a slow machine?)"
    assert missed == 0, f"{missed} of {racy} second saves in the same second missed"
