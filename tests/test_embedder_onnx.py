"""embedder_onnx.py: the int8 ONNX backend, its identity, its fallback to torch.

Tests marked ``model`` run the real onnxruntime on the model built from the
bundled weights; the session's user cache (conftest) holds the build, so the
first such test pays for it once (~15-60 s). The cache, the build and its
failures are tested in test_onnx_cache.py.
"""

from __future__ import annotations

import json
import platform
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from memvault.config import DEFAULT_MODEL, IndexSettings
from memvault.index.embedder import (
    Embedder,
    SentenceTransformerEmbedder,
    make_embedder,
    model_id_for,
)
from memvault.index.embedder_onnx import (
    OnnxEmbedder,
    load_onnx_embedder,
    onnx_model_id_for,
    support_problem,
)
from memvault.index.model_files import BUNDLED_SHA256, file_sha256, resolve_model_path
from memvault.index.onnx_cache import (
    ModelSpec,
    failed_log,
)
from onnx_helpers import (
    ONNX_ID,
    STEM,
    TEXTS,
    TORCH_ID,
    copy_built,
    fake_torch,
    fallback_messages,
    read_only,
    run_python,
    spec,
)


def test_the_bundled_model_is_one_the_onnx_backend_runs() -> None:
    assert support_problem(resolve_model_path(DEFAULT_MODEL, verify=False)) is None


@pytest.mark.parametrize(
    ("model_type", "pooling"),
    [("bert", "pooling_mode_cls_token"), ("xlm-roberta", "pooling_mode_mean_tokens")],
)
def test_other_kinds_of_model_are_named_and_left_to_torch(
    tmp_path: Path, model_type: str, pooling: str
) -> None:
    bundled = resolve_model_path(DEFAULT_MODEL, verify=False)
    for name in ("modules.json", "tokenizer.json"):
        shutil.copy(bundled / name, tmp_path / name)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type}))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({pooling: True}))
    problem = support_problem(tmp_path)
    assert problem is not None and str(tmp_path) in problem
    assert 'index.backend = "torch"' in problem


def test_the_identity_is_known_without_importing_onnxruntime_or_torch(tmp_path: Path) -> None:
    result = run_python(
        "import sys\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder import model_id_for\n"
        f"print(model_id_for(IndexSettings(model_cache={str(tmp_path / 'c')!r})))\n"
        "heavy = [m for m in ('onnxruntime', 'torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ONNX_ID


def test_the_backend_and_the_precision_are_part_of_the_identity(tmp_path: Path) -> None:
    onnx = IndexSettings(model_cache=str(tmp_path))
    torch = IndexSettings(backend="torch")
    assert (model_id_for(onnx), model_id_for(torch)) == (ONNX_ID, TORCH_ID)
    ids = {
        p: model_id_for(IndexSettings(model_cache=str(tmp_path), onnx_precision=p))
        for p in ("int8", "fp32")
    }
    assert ids == {p: f"{TORCH_ID}+onnx-{p}-v1" for p in ids}
    stems = {ModelSpec(spec().source, TORCH_ID, p).stem for p in ids}
    assert len(stems) == 2  # two files: a precision never reads another's model


def test_the_identity_expects_torch_when_onnxruntime_is_not_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else real(name, *a),
    )
    assert onnx_model_id_for(IndexSettings(model_cache=str(tmp_path))) == TORCH_ID


def test_the_identity_expects_torch_when_the_cache_cannot_be_written(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where a folder should be")
    assert onnx_model_id_for(IndexSettings(model_cache=str(blocked / "onnx"))) == TORCH_ID
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder):
        assert onnx_model_id_for(IndexSettings(model_cache=str(folder))) == TORCH_ID


def test_the_identity_expects_torch_after_a_failed_build(tmp_path: Path) -> None:
    settings = IndexSettings(model_cache=str(tmp_path))
    assert onnx_model_id_for(settings) == ONNX_ID
    failed_log(tmp_path, spec()).write_text("Traceback ...")
    assert onnx_model_id_for(settings) == TORCH_ID


@pytest.mark.model
def test_onnx_embedder_identity_window_and_protocol(onnx: OnnxEmbedder) -> None:
    assert (onnx.model_id, onnx.dim, onnx.max_tokens) == (ONNX_ID, 384, 254)
    assert isinstance(onnx, Embedder)
    assert make_embedder(IndexSettings(model_cache=str(onnx.model_file.parent))).model_id == ONNX_ID


@pytest.mark.model
def test_onnx_vectors_are_normalized_float32_rows(onnx: OnnxEmbedder) -> None:
    out = onnx.embed(TEXTS)
    assert out.shape == (len(TEXTS), 384) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    empty = onnx.embed([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


@pytest.mark.model
@pytest.mark.parametrize("apart", [False, True], ids=["here", "in-its-own-process"])
def test_a_texts_vector_is_the_same_alone_and_in_any_batch(built: Path, apart: bool) -> None:
    """int8 activations are quantized with one scale per session run (DynamicQuantizeLinear):
    each text runs alone, so its vector is bit-identical whatever is embedded beside it
    (batched, a text's cosine to itself alone was 0.974-0.999: bench/RESULTS.md, drift59)."""
    settings = IndexSettings(model_cache=str(built))
    emb = load_onnx_embedder(settings, apart=apart)
    try:
        alone = np.vstack([emb.embed([t]) for t in TEXTS])
        together = emb.embed(TEXTS)  # lengths 3 to 256 word pieces
        backwards = emb.embed(TEXTS[::-1])[::-1]
        shuffled = [5, 0, 7, 2, 6, 1, 4, 3]
        mixed = emb.embed([TEXTS[i] for i in shuffled])[np.argsort(shuffled)]
        same_length = emb.embed([TEXTS[1], "Postgres was chosen for our data store."])[0]
        for name, got in (("together", together), ("reversed", backwards), ("shuffled", mixed)):
            assert np.array_equal(got, alone), name
        assert np.array_equal(same_length, alone[1])
        in_twos = load_onnx_embedder(
            IndexSettings(model_cache=str(built), batch_size=2), apart=apart
        )
        try:
            assert np.array_equal(in_twos.embed(TEXTS), alone)  # index.batch_size: no matter
        finally:
            in_twos.close()
    finally:
        emb.close()


@pytest.mark.model
def test_onnx_vectors_are_close_to_pytorch(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    cosines = (onnx.embed(TEXTS) * torch_model.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.985, cosines
    v = onnx.embed(TEXTS[:3])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


@pytest.mark.model
def test_onnx_runs_the_word_pieces_sentence_transformers_runs(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    reference = torch_model._model.tokenize(TEXTS)
    for i, ours in enumerate(onnx.token_ids(TEXTS)):
        n = int(reference["attention_mask"][i].sum())
        assert ours == reference["input_ids"][i][:n].tolist(), TEXTS[i][:40]
    assert len(onnx.token_ids([TEXTS[-1]])[0]) == 256  # truncated at the window, not at 128
    for text in TEXTS:
        assert onnx.count_tokens(text) == torch_model.count_tokens(text)


@pytest.mark.model
def test_the_embedding_path_imports_no_torch(built: Path) -> None:
    result = run_python(
        "import sys\n"
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder import make_embedder\n"
        f"emb = make_embedder(IndexSettings(model_cache={str(built)!r}))\n"
        "assert type(emb).__name__ == 'OnnxEmbedder', type(emb)\n"
        "emb.embed(['a query', 'and a longer text to embed with it'])\n"
        "emb.count_tokens('hello world')\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.model
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the mmap threshold is glibc's")
def test_the_memory_of_a_big_embed_call_is_given_back(built: Path) -> None:
    """onnxruntime's arena grows for a call of long texts; the daemon's process (the mmap
    threshold fixed by heap.configure) has it back after the call. Measured on the old
    code: +21 MB kept; now +4 (bench/RESULTS.md, "Memory after bulk work")."""
    result = run_python(
        "from memvault.config import IndexSettings\n"
        "from memvault.index.embedder import make_embedder\n"
        "from memvault.service import heap\n"
        "heap.configure()\n"
        "def rss():\n"
        "    s = open('/proc/self/status').read().split('VmRSS:')[1]\n"
        "    return int(s.split()[0]) // 1024\n"
        f"emb = make_embedder(IndexSettings(model_cache={str(built)!r}))\n"
        "emb.embed(['warm up'])\n"
        "before = rss()\n"
        "words = 'the quick brown fox jumps over a lazy dog while wizards judge boxing'.split()\n"
        "texts = [' '.join(words[(i + j) % len(words)] for j in range(230)) for i in range(48)]\n"
        "emb.embed(texts)\n"
        "print(rss() - before)\n"
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) < 12, result.stdout


@pytest.mark.model
def test_threads_reach_onnxruntime(built: Path) -> None:
    one = load_onnx_embedder(IndexSettings(model_cache=str(built), threads=1))
    assert one._run.session.get_session_options().intra_op_num_threads == 1


@pytest.mark.model
def test_the_torch_backend_is_still_there(built: Path) -> None:
    emb = make_embedder(IndexSettings(backend="torch", model_cache=str(built)))
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID


@pytest.mark.model
def test_without_onnxruntime_torch_is_used_and_the_fix_is_named(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, built: Path
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    emb = make_embedder(IndexSettings(model_cache=str(built)))
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID
    said = fallback_messages(caplog)
    assert "pip install onnxruntime" in said and "PyTorch backend" in said


@pytest.mark.model
@pytest.mark.parametrize("apart", [False, True], ids=["here", "in-its-own-process"])
def test_an_onnxruntime_that_cannot_load_falls_back_to_torch(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    built: Path,
    tmp_path: Path,
    apart: bool,
) -> None:
    fake = tmp_path / "site" / "onnxruntime"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ImportError('libonnxruntime.so.1: cannot open shared object file')\n"
    )
    if apart:  # the daemon's model process imports it, with this path
        monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    else:
        monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
        monkeypatch.syspath_prepend(str(fake.parent))
    emb = make_embedder(IndexSettings(model_cache=str(built)), apart=apart)
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.model_id == TORCH_ID
    said = fallback_messages(caplog)
    assert "cannot be loaded on this machine" in said and "libonnxruntime.so.1" in said
    assert "pip install --force-reinstall onnxruntime" in said and "PyTorch backend" in said


@pytest.mark.model
@pytest.mark.parametrize("apart", [False, True], ids=["here", "in-its-own-process"])
def test_a_model_onnxruntime_cannot_load_falls_back_and_says_how_to_fix(
    caplog: pytest.LogCaptureFixture, built: Path, tmp_path: Path, apart: bool
) -> None:
    """Here and in the daemon's model process (onnx_run.ChildRun) alike."""
    folder = copy_built(built, tmp_path / "c")
    model = folder / f"{STEM}.onnx"
    model.write_bytes(b"not an onnx graph" * 100)
    manifest = json.loads((folder / f"{STEM}.json").read_text())
    manifest.update(sha256=file_sha256(model), bytes=model.stat().st_size)
    (folder / f"{STEM}.json").write_text(json.dumps(manifest))  # consistent, yet unloadable
    emb = make_embedder(IndexSettings(model_cache=str(folder)), apart=apart)
    assert isinstance(emb, SentenceTransformerEmbedder)
    said = fallback_messages(caplog)
    assert f"onnxruntime cannot load {model}" in said and "delete it to have it rebuilt" in said


@pytest.mark.model
def test_a_switch_of_backend_re_embeds_every_note(built: Path, tmp_path: Path) -> None:
    from helpers import make_vault, note, write
    from memvault.api import Vault

    root = make_vault(tmp_path)
    write(root, "people/kim.md", note("Kim Park", body="Kim repairs old sailing boats."))
    with Vault.open(root, overrides={"index": {"backend": "torch"}}) as v:
        first = v.sync()
        chunks = v.engine.store.counts()["chunks"]
    with Vault.open(root, overrides={"index": {"model_cache": str(built)}}) as v:
        report = v.sync()
        assert v.engine.store.meta("model_id") == ONNX_ID
        assert any("embedding model changed" in w for w in report.warnings)
        assert report.embedded_chunks == chunks == first.embedded_chunks
        assert [h.path for h in v.search("who fixes vessels", k=1)] == ["people/kim.md"]


@pytest.mark.model
def test_a_fallback_found_when_the_model_loads_never_mixes_vectors(
    monkeypatch: pytest.MonkeyPatch, built: Path, tmp_path: Path
) -> None:
    from helpers import make_vault, note, write
    from memvault.api import Vault

    root = make_vault(tmp_path)
    write(root, "people/kim.md", note("Kim Park", body="Kim repairs old sailing boats."))
    write(root, "people/ana.md", note("Ana Lima", body="Ana bakes sourdough bread at dawn."))
    with Vault.open(root, overrides={"index": {"model_cache": str(built)}}) as v:
        v.sync()
        assert v.engine.store.meta("model_id") == ONNX_ID
    # an empty cache whose build will fail: the engine expects ONNX, the embedder is torch
    monkeypatch.setenv("PYTHONPATH", str(fake_torch(tmp_path)))
    broken = {"index": {"model_cache": str(tmp_path / "empty-cache")}}
    with Vault.open(root, overrides=broken) as v:
        store = v.engine.store
        assert v.engine.embedding.model_id() == ONNX_ID  # the guess, before anything loads
        onnx_labels = v.engine.embedding.vectors.labels()  # opened: the ONNX vectors
        assert onnx_labels == store.labels() and onnx_labels
        v.search("bread baking")  # the query loads the model: torch, not ONNX
        assert isinstance(v.engine.embedding.embedder, SentenceTransformerEmbedder)
        assert store.meta("model_id") == TORCH_ID  # said, and the index reset for it
        assert not v.engine.embedding.vectors.labels() & onnx_labels, (
            "ONNX vectors met a torch query"
        )
        report = v.sync()  # everything is embedded again, with torch
        assert report.embedded_chunks == len(store.labels())
        shas = set(store.label_shas().values())
        assert set(store.cached(TORCH_ID, shas)) == shas
        assert v.engine.embedding.vectors.labels() == store.labels()
        assert [h.path for h in v.search("who fixes vessels", k=1)] == ["people/kim.md"]
        assert [h.path for h in v.search("bread baking", k=1)] == ["people/ana.md"]


@pytest.mark.model
@pytest.mark.slow
def test_the_fp32_precision_gives_pytorchs_vectors_without_torch(
    torch_model: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    emb = load_onnx_embedder(IndexSettings(model_cache=str(tmp_path), onnx_precision="fp32"))
    assert emb.model_id == f"{TORCH_ID}+onnx-fp32-v1"
    assert emb.model_file.name == f"all-MiniLM-L6-v2-{BUNDLED_SHA256[:12]}-onnx-fp32-v1.onnx"
    manifest = json.loads(emb.model_file.with_suffix(".json").read_text())
    assert manifest["kept_fp32"] == [] and manifest["bytes"] > 80e6
    cosines = (emb.embed(TEXTS) * torch_model.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
