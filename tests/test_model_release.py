"""An idle daemon lets its embedding model go (issue 27: what a daemon holds for nothing).

``Embedding.release_model`` drops a model it loaded itself once nothing has used it for
the given time; the next search loads it again and finds the same. The daemon's vector
lane looks after ``daemon.model_idle_seconds`` (a search counts as a use). Real vaults,
the real lane thread; the model is the hash embedder named in the config (so the engine
loads it, as it loads the real one), and the real int8 model in the ``model`` test.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import open_vault, write
from memvault.api import Vault
from memvault.config import ConfigError, VaultConfig
from memvault.service.vector_lane import VectorLane

HASH = {"index": {"model": "hash"}}


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    write(root, "people/ana.md", "# Ana\n\nAna runs the billing migration to PostgreSQL.\n")
    write(root, "projects/atlas.md", "# Atlas\n\nThe search project: ranking and recall.\n")
    (root / ".memvault").mkdir(parents=True, exist_ok=True)
    return root


def _paths(hits: list) -> list[tuple[str, float]]:
    return [(h.path, round(h.score, 6)) for h in hits]


def test_a_model_unused_for_the_idle_time_is_let_go_and_loaded_again_by_a_search(
    tmp_path: Path,
) -> None:
    with Vault.open(_vault(tmp_path), overrides=HASH) as v:
        v.sync()
        embedding = v.engine.embedding
        before = _paths(v.search("billing migration"))
        assert embedding.loaded
        assert not embedding.release_model(3600)  # used a moment ago: kept
        assert embedding.loaded
        assert embedding.release_model(0)
        assert not embedding.loaded and embedding.unused_for() is None
        assert not embedding.release_model(0)  # nothing left to let go
        assert _paths(v.search("billing migration")) == before  # loaded again, the same
        assert embedding.loaded


def test_a_model_given_to_the_engine_is_never_let_go(tmp_path: Path) -> None:
    with open_vault(_vault(tmp_path)) as v:  # the caller's own HashEmbedder
        v.sync()
        assert not v.engine.embedding.release_model(0)
        assert v.engine.embedding.loaded


def test_the_vector_lane_lets_an_idle_model_go_and_a_search_brings_it_back(
    tmp_path: Path,
) -> None:
    with Vault.open(_vault(tmp_path), overrides=HASH) as v:
        v.sync(vectors=False)
        embedding = v.engine.embedding
        idle = threading.Event()
        lane = VectorLane(v, on_idle=idle.set, model_idle_seconds=1.0)
        lane.start()  # loads the model first thing (warm-up)
        lane.wake()
        try:
            assert idle.wait(30)
            assert v.pending_vectors()[0] == 0
            deadline = time.monotonic() + 10
            while embedding.loaded and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not embedding.loaded, "the lane kept an idle model"
            assert lane.info()["model_loaded"] is False
            hits = v.search("recall ranking")  # loads it again
            assert hits and hits[0].path == "projects/atlas.md"
            assert embedding.loaded
            deadline = time.monotonic() + 10
            while embedding.loaded and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not embedding.loaded, "a model a search loaded again was kept for good"
        finally:
            assert lane.stop(10)


def test_a_lane_told_zero_keeps_the_model(tmp_path: Path) -> None:
    with Vault.open(_vault(tmp_path), overrides=HASH) as v:
        v.sync(vectors=False)
        idle = threading.Event()
        lane = VectorLane(v, on_idle=idle.set)  # model_idle_seconds 0: the default here
        lane.start()
        lane.wake()
        try:
            assert idle.wait(30)
            time.sleep(1.5)
            assert v.engine.embedding.loaded
        finally:
            assert lane.stop(10)


def test_a_reload_that_brings_another_model_re_embeds_at_once_and_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model let go and loaded again by a search may be another one (the ONNX backend
    unusable now: PyTorch's model): every chunk is queued for it, and the lane, which
    nothing else wakes, embeds them at once, and never lets the model go with chunks
    waiting (it sat idle with the queue full)."""
    from memvault.engine import embedding as embedding_module
    from memvault.index.embedder import HashEmbedder

    with Vault.open(_vault(tmp_path), overrides=HASH) as v:
        v.sync(vectors=False)
        embedding = v.engine.embedding
        idle = threading.Event()
        lane = VectorLane(v, on_idle=idle.set, model_idle_seconds=1.0)
        lane.start()
        lane.wake()
        try:
            assert idle.wait(30) and v.pending_vectors()[0] == 0
            deadline = time.monotonic() + 10
            while embedding.loaded and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not embedding.loaded
            monkeypatch.setattr(
                embedding_module, "make_embedder", lambda *_, **__: HashEmbedder(32)
            )
            idle.clear()
            v.search("recall ranking")  # loads the other model: every chunk queued
            assert embedding.model_id() == "hash-32"
            assert idle.wait(30), "the lane never took up the re-embed"
            assert v.pending_vectors()[0] == 0
            hits = v.search("recall ranking")
            assert hits and hits[0].path == "projects/atlas.md"
        finally:
            assert lane.stop(10)


def test_an_idle_time_past_what_a_wait_can_take_keeps_the_lane_alive(tmp_path: Path) -> None:
    """10**10 s (past ``threading.TIMEOUT_MAX``): a wait that long raised OverflowError
    in the lane's thread, which died while the daemon served on with nothing embedded."""
    with Vault.open(_vault(tmp_path), overrides=HASH) as v:
        v.sync(vectors=False)
        idle = threading.Event()
        lane = VectorLane(v, on_idle=idle.set, model_idle_seconds=10**10)
        lane.start()
        lane.wake()
        try:
            assert idle.wait(30) and v.pending_vectors()[0] == 0
            time.sleep(0.5)  # the lane now waits (for up to a day at a time)
            write(v.root, "people/bo.md", "# Bo\n\nBo reviews the ranking code.\n")
            v.sync(vectors=False)
            idle.clear()
            lane.wake()
            assert idle.wait(30), "the lane's thread is gone"
            assert v.pending_vectors()[0] == 0 and v.engine.embedding.loaded
        finally:
            assert lane.stop(10)


@pytest.mark.parametrize("value", [-1, -600])
def test_a_negative_idle_time_is_refused_by_name(tmp_path: Path, value: int) -> None:
    root = _vault(tmp_path)
    (root / ".memvault" / "config.toml").write_text(f"[daemon]\nmodel_idle_seconds = {value}\n")
    with pytest.raises(ConfigError, match="model_idle_seconds"):
        VaultConfig.load(root)


@pytest.mark.model
def test_the_real_model_let_go_and_loaded_again_embeds_the_same(tmp_path: Path) -> None:
    with Vault.open(_vault(tmp_path)) as v:  # the configured int8 model
        embedding = v.engine.embedding
        first = embedding.embedder.embed(["where is the billing migration?"])
        assert embedding.release_model(0)
        again = embedding.embedder.embed(["where is the billing migration?"])
        assert np.array_equal(first, again)
        assert embedding.model_id() == embedding.embedder.model_id
