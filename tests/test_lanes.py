"""The two lanes, in order: the structure never waits behind the model.

A real in-process daemon (watchdog observer, HTTP API, vector lane thread) whose
embedder blocks inside ``embed`` on an Event while it holds a big note's text.
What must happen while it is blocked is asserted, not timed: a note saved
meanwhile is in MEMORY.md and found by keywords; status says the lane is busy
with chunks pending and a true lag. Then the embedder is released and the
vectors arrive. If the lane held the engine's lock while the model ran, the
small note's sync would wait for the Event and the first assertion would time out.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from helpers import daemon_json, eventually, make_vault, note, write
from memvault.index.embedder import HashEmbedder
from memvault.service.daemon import Daemon

MARKER = "zeppelin"  # a word only the big note holds


class GatedEmbedder(HashEmbedder):
    """The hash embedder, except that a batch holding ``MARKER`` waits for ``release``:
    the model busy with a big note for as long as the test likes."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()  # a batch of the big note is being "embedded"
        self.release = threading.Event()
        self.blocked_batches = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(MARKER in t for t in texts):
            self.blocked_batches += 1
            self.entered.set()
            if not self.release.wait(120):
                raise RuntimeError("the test never released the embedder")
        return super().embed(texts)


def _api(info: dict[str, Any], method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(
        method,
        f"http://127.0.0.1:{info['port']}{path}",
        trust_env=False,
        timeout=30,
        headers={"Authorization": f"Bearer {info['token']}"},
        **kw,
    )


def _big_note() -> str:
    # ~300 paragraphs: several of the lane's bounded steps, every chunk holding MARKER
    paragraphs = [
        f"## Part {i}\n\nThe {MARKER} survey, leg {i}: wind {i % 17} knots, hull check {i}."
        for i in range(300)
    ]
    return note("Airship survey", "A long survey log.", "\n\n".join(paragraphs))


def test_a_note_saved_while_the_model_is_busy_is_in_memory_md_and_found_at_once(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    embedder = GatedEmbedder()
    daemon = Daemon.open(root, embedder=embedder, port=0)
    daemon.start()
    try:
        info = daemon_json(root)
        assert info is not None
        eventually(
            lambda: daemon.model_state == "ready" and daemon.info()["vectors"]["pending"] == 0,
            what="the example notes embedded",
        )
        write(root, "projects/airship-survey.md", _big_note())
        assert embedder.entered.wait(30), "the lane never started on the big note"
        blocked_at = time.time()

        write(
            root,
            "people/ada-quill.md",
            note("Ada Quill", "Keeper of ledgers.", "Ada keeps the capybara ledger."),
        )

        # the structure lane went on: MEMORY.md and keyword search have the small note
        memory = root / "MEMORY.md"
        eventually(
            lambda: "[[people/ada-quill]]" in memory.read_text(encoding="utf-8"),
            what="the small note in MEMORY.md while the model is blocked",
        )
        hits = _api(info, "POST", "/search", json={"query": "capybara ledger"}).json()["hits"]
        assert hits and hits[0]["path"] == "people/ada-quill.md"
        assert hits[0]["pending"] is True  # found by its words; its vector is still queued
        assert not embedder.release.is_set()  # all of the above while the model was blocked

        # status tells the truth about the lag
        status = _api(info, "GET", "/status").json()["daemon"]
        vectors = status["vectors"]
        assert vectors["busy"] is True
        # the big note's chunks and the small note's wait (nothing of them indexed yet)
        assert vectors["pending"] >= 300 + 1
        waited = time.time() - blocked_at
        assert vectors["lag_seconds"] is not None and vectors["lag_seconds"] >= waited
        assert status["model"] == "ready"

        embedder.release.set()
        done = eventually(
            lambda: (v := daemon.info()["vectors"])["pending"] == 0 and not v["busy"] and v,
            60,
            "the vectors to arrive",
        )
        assert done["lag_seconds"] is None and done["last_error"] is None
        assert embedder.blocked_batches > 1  # the big note went in bounded steps

        store = daemon.vault.engine.store
        assert daemon.vault.engine.embedding.vectors.labels() == store.labels()
        hits = daemon.vault.search("capybara ledger")
        assert hits[0].path == "people/ada-quill.md" and hits[0].pending is False
    finally:
        embedder.release.set()
        daemon.shutdown()


def test_the_vector_lane_waits_for_the_structure_lanes_batch_before_a_step(
    tmp_path: Path,
) -> None:
    """While changes are queued or being synced the lane starts no step (the model
    would take the cores a save's sync needs); once they are done it catches up."""
    from helpers import open_vault
    from memvault.service.vector_lane import VectorLane

    root = make_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync(vectors=False)
        pending, _ = vault.pending_vectors()
        assert pending > 0
        structure = threading.Event()  # set: a batch is queued or in flight
        structure.set()
        asked = threading.Semaphore(0)

        def busy() -> bool:
            asked.release()
            return structure.is_set()

        lane = VectorLane(vault, structure_busy=busy)
        lane.start()
        lane.wake()
        try:
            for _ in range(5):  # the lane asked five times, and each time held back
                assert asked.acquire(timeout=30)
            assert vault.pending_vectors()[0] == pending and lane.embedded == 0
            structure.clear()
            eventually(lambda: vault.pending_vectors()[0] == 0, what="the lane to catch up")
            eventually(lambda: lane.embedded > 0, what="the lane's count")  # set after the step
        finally:
            structure.clear()
            assert lane.stop(10)


@pytest.mark.model
def test_writes_and_reads_without_a_daemon_never_load_the_model(
    tmp_path: Path, built: Path
) -> None:
    """On a vault indexed with the real default model (ONNX), `log` (twice: the second
    edits an indexed note, whose old chunks leave the vector index), `add`, `get`,
    `links check` and `status` import neither onnxruntime nor torch, in a process of
    their own; the new chunks wait for their vectors."""
    root = make_vault(tmp_path)
    code = (
        "import sys; from memvault.interfaces.cli import app\n"
        "def run(*args):\n"
        "    try:\n        app([*args, '--vault', sys.argv[1]])\n"
        "    except SystemExit as e:\n        assert not e.code, (args, e.code)\n"
        "run('sync')\n"  # the real model: this process may load it
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "daemon")

    def python(source: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", source, str(root)],
            capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip

    indexed = python(code)
    assert indexed.returncode == 0, indexed.stderr
    writes = code.replace("run('sync')\n", "") + (
        "run('log', 'met Ada about the capybara ledger')\n"
        "run('log', 'and again')\n"
        "run('add', 'people', '--title', 'Ada Quill', '--summary', 'Keeps the ledger.')\n"
        "run('get', 'people/ada-quill.md')\n"
        "run('links', 'check')\n"
        "run('status')\n"
        "heavy = [m for m in ('onnxruntime', 'torch', 'sentence_transformers')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = python(writes)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout
    assert "[[people/ada-quill]]" in (root / "MEMORY.md").read_text(encoding="utf-8")
    from memvault.api import Vault

    with Vault.open(root, read_only=True) as vault:
        assert vault.pending_vectors()[0] >= 2  # the log's new chunk and Ada's


@pytest.mark.model
def test_up_stopped_while_embedding_says_every_note_is_indexed(tmp_path: Path, built: Path) -> None:
    """`up` indexes the structure first (MEMORY.md is written before any embedding), then
    embeds; a Ctrl-C during the embedding was reported as "96 of 300 notes indexed",
    counting chunks as notes. The real model makes the embedding the long part."""
    root = tmp_path / "notes"
    for i in range(300):
        write(root, f"notes/n{i:03}.md", note(f"Note {i}", body=f"Paragraph about topic {i}."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "daemon")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memvault", "up", str(root)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        from memvault.api import Vault

        def notes_in() -> int:
            try:
                with Vault.open(root, read_only=True) as vault:
                    return len(vault.engine.store.manifest())
            except Exception:  # not a vault yet, or the index not created yet
                return 0

        eventually(lambda: notes_in() == 301, 120, "every note indexed before the vectors", 0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    said = re.search(r"while embedding: every note is indexed .*; ([\d,]+) of ([\d,]+) chunks", err)
    assert said, err
    with Vault.open(root, read_only=True) as vault:
        assert len(vault.engine.store.manifest()) == 301  # every note, and MEMORY.md
        done, total = (int(said.group(i).replace(",", "")) for i in (1, 2))
        assert vault.pending_vectors()[0] == total - done > 0
