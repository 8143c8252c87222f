"""A new embedding model (issue 21 item 7): keyword search never stops, vectors follow.

An ONNX backend that falls back to torch while the daemon runs, or a vault reopened
with another model, used to drop every chunk, keyword rows too: ``search`` and
``context`` found nothing until the periodic reconcile (~300 s). Now every chunk keeps
its rows and is queued for the new model; the vector lane starts on it at once, and
only notes the new model's tokenizer cuts differently are cut again.

The fallback is the real code path: a backend registered under ``index.backend`` (in torch's place)
whose identity, known before the model loads, is one model, and which loads another
(what ``embedder_onnx`` does when ONNX cannot run and torch takes over).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import (
    eventually,
    make_vault,
    new_vault,
    note,
    open_vault,
    rebuilt_snapshot,
    snapshot,
    write,
)
from memvault.config import IndexSettings
from memvault.index.embedder import (
    EmbedderBackend,
    HashEmbedder,
    backend_named,
    register_backend,
)
from memvault.index.tokenizer import Tokenizer
from memvault.service.daemon import Daemon

MARKER = "quetzalcoatl"  # a word only one note holds
LONG = " ".join(f"word{i} {MARKER if i == 3 else 'plain'}." for i in range(120))


class _Named(HashEmbedder):
    """Hash vectors under another model's name, counting word pieces with the configured
    model's tokenizer (torch and ONNX run the same model: the same tokenizer)."""

    def __init__(self, model_id: str, dim: int, tokenizer: Tokenizer) -> None:
        super().__init__(dim=dim, max_tokens=tokenizer.max_tokens)
        self.model_id = model_id
        self.count_tokens = tokenizer.count  # type: ignore[method-assign]


_LOADS = {"model": "model-a"}  # what the next load of the test backend gives


def _load(settings: IndexSettings) -> _Named:
    model = _LOADS["model"]
    return _Named(model, 64 if model == "model-a" else 32, Tokenizer.for_model(settings.model))


@pytest.fixture
def fallback_backend() -> Iterator[None]:
    # stands in for the torch backend (index.backend names only real ones), put back after
    real = backend_named("torch")
    register_backend("torch", EmbedderBackend(_load, lambda s: "model-a"))
    _LOADS["model"] = "model-a"
    try:
        yield
    finally:
        register_backend("torch", real)


OVERRIDES = {"index": {"backend": "torch"}}  # the bundled model's tokenizer


def _keyword_paths(daemon: Daemon, word: str) -> list[str]:
    return [h.path for h in daemon.vault.search(word, k=5)]


def test_a_fallback_while_the_daemon_runs_keeps_keyword_search_and_re_embeds_at_once(
    tmp_path: Path, fallback_backend: None
) -> None:
    root = make_vault(tmp_path)
    write(root, "people/kim.md", note("Kim Park", "Boat repairs.", f"Kim says {MARKER} often."))
    from memvault.api import Vault

    with Vault.open(root, overrides=OVERRIDES) as v:
        v.sync()
        chunks = v.engine.store.counts()["chunks"]
        assert v.engine.store.meta("model_id") == "model-a"
    # the next load falls back: the engine expects model-a, model-b runs
    _LOADS["model"] = "model-b"
    daemon = Daemon.open(root, overrides={**OVERRIDES, "daemon": {"reconcile_seconds": 3600}})
    daemon.start()
    try:
        store = daemon.vault.engine.store
        eventually(lambda: daemon.model_state == "ready", what="the model loaded")
        assert store.meta("model_id") == "model-b"
        assert store.meta("model_changed") == "model-a -> model-b"
        # at once, with no reconcile: every chunk is still there, found by its words
        assert store.counts()["chunks"] == chunks
        assert _keyword_paths(daemon, MARKER)[:1] == ["people/kim.md"]
        # the vector lane re-embeds everything with the new model, by itself
        eventually(
            lambda: (
                daemon.info()["vectors"]["pending"] == 0
                and daemon.vault.engine.embedding.vectors.labels() == store.labels()
            ),
            what="every chunk re-embedded with model-b",
        )
        shas = set(store.label_shas().values())
        assert set(store.cached("model-b", shas)) == shas
        assert _keyword_paths(daemon, MARKER)[:1] == ["people/kim.md"]
        assert store.meta("last_sync_at") is not None
    finally:
        daemon.shutdown()


def test_a_new_model_keeps_keyword_rows_and_says_so_in_status(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(root, "people/kim.md", note("Kim Park", "Boat repairs.", f"Kim says {MARKER} often."))
    with open_vault(root) as v:
        v.sync()
        chunks = v.engine.store.counts()["chunks"]
    with open_vault(root, embedder=HashEmbedder(dim=32)) as v:
        report = v.sync(vectors=False)  # the structure lane alone (the daemon's)
        store = v.engine.store
        assert any("model changed from hash-64 to hash-32" in w for w in report.warnings)
        assert store.counts()["chunks"] == chunks
        assert store.fts(f'"{MARKER}"', 5), "keyword rows dropped"
        assert [h.path for h in v.search(MARKER, k=1)] == ["people/kim.md"]
        status = v.status()
        assert status["index"]["vectors_pending"] == chunks
        assert status["index"]["model_changed"] == "hash-64 -> hash-32"
        v.engine.embed_pending()
        status = v.status()
        assert status["index"]["vectors_pending"] == 0
        assert "model_changed" not in status["index"]
        assert snapshot(v) == rebuilt_snapshot(root, tmp_path)


def test_only_notes_the_new_tokenizer_cuts_differently_are_cut_again(tmp_path: Path) -> None:
    root = new_vault(tmp_path)  # no example notes: these two only
    write(root, "projects/long.md", note("Long", "A long one.", LONG))
    write(root, "people/kim.md", note("Kim Park", "Boat repairs.", "Kim fixes boats."))
    with open_vault(root) as v:
        v.sync()
        short_labels = v.engine.store.labels_of(["people/kim.md"])
        long_labels = v.engine.store.labels_of(["projects/long.md"])
    narrow = HashEmbedder(dim=32, max_tokens=60)  # a window the long note's chunk overflows
    with open_vault(root, embedder=narrow) as v:
        report = v.sync()
        store = v.engine.store
        assert any("1 notes cut again" in w for w in report.warnings), report.warnings
        assert store.labels_of(["people/kim.md"]) == short_labels  # kept, re-embedded
        assert not store.labels_of(["projects/long.md"]) & long_labels  # cut again
        assert all(c.tokens <= 60 for c in store.chunks_of("projects/long.md"))
        assert [h.path for h in v.search(MARKER, k=1)] == ["projects/long.md"]
        fresh = tmp_path / "fresh"
        got = snapshot(v)
    import shutil

    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(fresh, embedder=HashEmbedder(dim=32, max_tokens=60)) as v:
        v.sync()
        assert snapshot(v) == got
