"""Two threads searching a team's index at once through one ``Vault`` (the HTTP app's
worker threads, an agent's own): each answer's note (``Vault.stale``: the notes of this
copy the index lacks) is its own. It was one marker on the backend, shared: a search
that met the note could read the one a search beside it left (None: its answer missed a
note and said nothing), and the other carried a note its hits contradicted. A real
server (pgserver), real git clones, real threads."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from helpers import note, open_vault, write
from pg_helpers import team_clones

ANA = "people/ana-quill.md"


def test_two_threads_searching_at_once_each_read_the_note_of_their_own_answer(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    a, b = team_clones(tmp_path)
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    with open_vault(a) as writer:
        writer.sync()
        with open_vault(b, read_only=True) as reader:  # a reader daemon's vault
            assert reader.engine.store.writer() is not None  # a's writer runs
            reader.check_changes_here()  # git names b's new note
            first_searched, second_done = threading.Event(), threading.Event()
            seen: dict[str, tuple[list[str], str | None, str | None]] = {}

            def first() -> None:  # its answer lacks Ana, and says so
                hits = [h.path for h in reader.search("quill harpsichord", k=5)]
                said = reader.stale
                first_searched.set()
                second_done.wait(60)
                seen["first"] = (hits, said, reader.stale)  # its note still

            def second() -> None:  # the index has Ana now: nothing to say
                hits = [h.path for h in reader.search("quill harpsichord", k=5)]
                seen["second"] = (hits, reader.stale, None)
                second_done.set()

            one = threading.Thread(target=first)
            one.start()
            assert first_searched.wait(60)
            # the writer's machine gets Ana (git: push there, pull here) and indexes it
            shutil.copyfile(b / ANA, a / ANA)
            writer.sync([ANA])
            two = threading.Thread(target=second)
            two.start()
            two.join(60)
            one.join(60)
    hits, said, later = seen["first"]
    assert ANA not in hits
    assert said is not None and f"lacks 1 note of this copy ({ANA})" in said, said
    assert later == said  # not the note of the search beside it (None)
    hits, said, _ = seen["second"]
    assert ANA in hits
    assert said is None, said  # not the first's note, which its hits contradict


def test_each_thread_reads_the_open_note_until_it_searched(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read with no daemon and no writer running says at its open what the index
    lacks (``say_unkept``): every thread of the process reads that note, not only the
    one that opened the vault."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    a, b = team_clones(tmp_path)
    with open_vault(a) as writer:
        writer.sync()
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    with open_vault(b, mode="query") as reader:
        assert reader.daemon is None and reader.engine.read_only
        said = reader.stale
        assert said is not None and ANA in said, said
        other: list[str | None] = []
        thread = threading.Thread(target=lambda: other.append(reader.stale))
        thread.start()
        thread.join(10)
        assert other == [said]
    assert os.path.exists(b / ANA)
