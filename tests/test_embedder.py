"""embedder.py: the Embedder protocol, the hashing and real embedders, the tokenizer, resolution."""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memvault.config import DEFAULT_MODEL, IndexSettings
from memvault.errors import ModelError
from memvault.index.embedder import (
    Embedder,
    HashEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)
from memvault.index.embedder_torch import _release_freed_memory
from memvault.index.model_files import BUNDLED_SHA256, resolve_model_path, verify_weights
from memvault.index.tokenizer import Tokenizer

DAEMON = Path(__file__).resolve().parents[1] / "daemon"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(DAEMON)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


# --- lazy imports -----------------------------------------------------------------


def test_importing_the_module_and_counting_tokens_does_not_import_torch() -> None:
    result = run_python(
        "import sys, memvault.index.embedder as e, memvault.index.tokenizer as tok\n"
        "assert 'torch' not in sys.modules and 'sentence_transformers' not in sys.modules\n"
        "t = tok.Tokenizer.for_model('all-MiniLM-L6-v2')\n"
        "assert t.count('hello world') == 2\n"
        "e.HashEmbedder().embed(['x'])\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert 'sentence_transformers' not in sys.modules\n"
    )
    assert result.returncode == 0, result.stderr


# --- the hashing embedder -----------------------------------------------------------


def test_hash_embedder_is_deterministic_normalized_and_shaped() -> None:
    texts = ["PostgreSQL replication lag", "", "!!!", "naïve 東京"]
    a = HashEmbedder().embed(texts)
    b = HashEmbedder().embed(texts)
    assert a.shape == (4, 64) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)


def _hash_by_feature(text: str, dim: int) -> np.ndarray:
    """The hash embedder's definition, feature by feature: each lower-cased word
    (weight 1) and its character trigrams (0.5), into signed buckets, L2-normalized."""
    from memvault.index.embedder_hash import _WORD, _bucket

    v = np.zeros(dim, dtype=np.float64)
    for word in _WORD.findall(text.lower()):
        i, sign = _bucket("w:" + word, dim)
        v[i] += sign
        padded = f"<{word}>"
        for j in range(len(padded) - 2):
            i, sign = _bucket("t:" + padded[j : j + 3], dim)
            v[i] += 0.5 * sign
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        v[_bucket("", dim)[0]] = 1.0
        norm = 1.0
    return (v / norm).astype(np.float32)


def test_hash_embedder_batch_is_its_definition_bit_for_bit() -> None:
    # the batch sums one table of the batch's words; a text's vector must not
    # depend on the batch it came in, nor differ from the definition in one bit
    texts = [
        "",
        "PostgreSQL replication lag, replication again",
        "!!!",
        "naïve 東京 naïve",
        "a",
        "the the the",
        "",
        "[[people/Ada]] met Ada at the café on 2024-05-01",
    ]
    for dim in (2, 16, 64):
        batch = HashEmbedder(dim=dim).embed(texts)
        one_by_one = np.stack([HashEmbedder(dim=dim).embed([t])[0] for t in texts])
        expected = np.stack([_hash_by_feature(t, dim) for t in texts])
        assert np.array_equal(batch, expected), dim
        assert np.array_equal(one_by_one, expected), dim


def test_hash_embedder_table_starts_again_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    # the word table is bounded: past its rows it starts again, and the vectors stay
    # the definition's, batch after batch (a batch with more words than the table too)
    import memvault.index.embedder_hash as eh

    monkeypatch.setattr(eh, "_TABLE_ROWS", 4)
    e = HashEmbedder(dim=16)
    batches = [
        ["alpha beta", "gamma"],
        ["alpha delta epsilon", "zeta eta theta iota"],
        ["beta"],
        ["kappa lambda", "alpha"],
    ]
    for texts in batches:
        expected = np.stack([_hash_by_feature(t, 16) for t in texts])
        assert np.array_equal(e.embed(texts), expected), texts
        assert len(e._table) <= max(4, sum(len(t.split()) for t in texts))


def test_hash_embedder_gives_a_text_whose_features_cancel_the_fixed_vector() -> None:
    # at dim 2, "w105"'s word and trigram features sum to zero (checked below):
    # its row is the fixed vector, a unit vector like every other, beside real rows
    e = HashEmbedder(dim=2)
    fixed = e.embed([""])[0]
    out = e.embed(["real words here", "w105", "w105 w105", ""])
    assert np.array_equal(out[1], fixed) and np.array_equal(out[2], fixed)
    assert np.array_equal(out[3], fixed) and not np.array_equal(out[0], fixed)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert np.array_equal(
        out,
        np.stack([_hash_by_feature(t, 2) for t in ["real words here", "w105", "w105 w105", ""]]),
    )


def test_hash_embedder_is_stable_across_processes() -> None:
    code = "import memvault.index.embedder as e; print(*e.HashEmbedder().embed(['stable text'])[0][:4])"
    result = run_python(code)
    here = HashEmbedder().embed(["stable text"])[0][:4]
    assert result.returncode == 0, result.stderr
    assert np.allclose([float(x) for x in result.stdout.split()], here)


def test_hash_embedder_gives_similar_texts_similar_vectors() -> None:
    v = HashEmbedder(dim=256).embed(
        ["database schema migration", "migrating the database schema", "birthday cake recipe"]
    )
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_hash_embedder_of_nothing_is_an_empty_matrix() -> None:
    out = HashEmbedder(dim=32).embed([])
    assert out.shape == (0, 32) and out.dtype == np.float32


def test_hash_embedder_identity_and_protocol() -> None:
    e = HashEmbedder(dim=32)
    assert e.model_id == "hash-32"
    assert e.max_tokens == 254
    assert e.count_tokens("Hello, world!") == 4
    assert isinstance(e, Embedder)


@pytest.mark.parametrize(("model", "dim"), [("hash", 64), ("hash-16", 16)])
def test_make_embedder_builds_the_hash_embedder(model: str, dim: int) -> None:
    e = make_embedder(IndexSettings(model=model))
    assert isinstance(e, HashEmbedder) and e.dim == dim


# --- the tokenizer ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.for_model(DEFAULT_MODEL)


def test_tokenizer_reads_the_window_from_the_model_folder(tokenizer: Tokenizer) -> None:
    assert tokenizer.window == 256
    assert tokenizer.special_tokens == 2
    assert tokenizer.max_tokens == 254


def test_one_tokenizer_a_model_in_a_process(tmp_path: Path) -> None:
    """The engine's counter (``token_counter_for``), the window and the ONNX embedder's
    counter and ids are one loaded tokenizer: each copy held ~6 MB in the daemon
    (bench/RESULTS.md, "The real-model daemon at 10,000 notes")."""
    from memvault.index.embedder import token_counter_for

    settings = IndexSettings(model=DEFAULT_MODEL)
    counter = token_counter_for(settings)
    assert getattr(counter, "__self__", None) is Tokenizer.for_model(DEFAULT_MODEL)
    folder = resolve_model_path(DEFAULT_MODEL, verify=False)
    assert Tokenizer.from_folder(folder) is Tokenizer.for_model(DEFAULT_MODEL)
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    other = Tokenizer.from_folder(copy)
    assert other is not Tokenizer.for_model(DEFAULT_MODEL)  # another file: its own
    (copy / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
    assert Tokenizer.from_folder(copy).window == 128  # the window changed: loaded again


class _CountedEncodes:
    """A loaded ``tokenizers.Tokenizer`` whose ``encode`` calls are counted."""

    def __init__(self, tokenizer: object) -> None:
        self._tokenizer = tokenizer
        self.encodes = 0

    def encode(self, *args: object, **kwargs: object) -> object:
        self.encodes += 1
        return self._tokenizer.encode(*args, **kwargs)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._tokenizer, name)


def test_a_line_appended_to_a_long_note_counts_only_what_changed() -> None:
    """An agent appending to one note every turn: each sync chunks the whole note again,
    counting every text. With 10,000 lines (more texts than the 4,096 recent counts an
    LRU kept, which then kept none of them) every append encoded all ~10,700 texts
    again, 1.2 s of a daemon's CPU (bench/RESULTS.md, "a year of an agent's writes")."""
    import tokenizers

    from memvault.core.chunks import chunk_note, embed_texts
    from memvault.core.notes import parse_note

    folder = resolve_model_path(DEFAULT_MODEL, verify=False)
    counted = _CountedEncodes(tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")))
    tokenizer = Tokenizer(counted, 256)  # type: ignore[arg-type]
    parts = ["title", "headings", "date"]

    def index(text: str) -> list[str]:
        note = parse_note("notes.md", text)
        chunks = chunk_note(note, tokenizer.count, target_tokens=128, max_tokens=254, parts=parts)
        embedded = embed_texts(
            note, chunks, parts, tokenizer.count, max_tokens=254, overlap_tokens=64
        )
        for c in chunks:  # the indexer counts each chunk's text for its row
            tokenizer.count(c.text)
        return embedded

    text = "# Notes\n\n" + "".join(
        f"- turn {i}: the user asked about deploy window {i % 97}, ticket PAY-{i}\n"
        for i in range(10_000)
    )
    first = index(text)
    assert counted.encodes > 5_000  # a first read counts every text
    counted.encodes = 0
    again = index(text + "- turn 10000: the user prefers tabs\n")
    assert again[:-2] == first[:-2]  # the same cut, but for the end
    assert counted.encodes < 50, counted.encodes
    kept = tokenizer.count(first[5])
    assert kept == len(counted.encode(first[5], add_special_tokens=False).ids)  # and true


def test_model_ids_truncate_as_the_tokenizers_truncation_does(tokenizer: Tokenizer) -> None:
    import tokenizers

    folder = resolve_model_path(DEFAULT_MODEL, verify=False)
    truncating = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    truncating.no_padding()
    truncating.enable_truncation(max_length=tokenizer.window)
    texts = [
        "",
        "Hello, world!",
        "naïve café résumé — 東京 🎉 ERR_CONN_RESET 0x0000dead",
        "word " * 253,
        "word " * 254,
        "word " * 255,
        "word " * 600,
        "QUJD" * 500,
        "a [SEP] in the text " * 80,
    ]
    expected = [e.ids for e in truncating.encode_batch(texts)]
    assert tokenizer.model_ids(texts) == expected
    assert max(len(ids) for ids in expected) == tokenizer.window


@pytest.mark.parametrize(
    ("text", "count"),
    [("", 0), ("hello world", 2), ("Hello, world!", 4), ("unbelievable", 1), ("東京", 2)],
)
def test_tokenizer_counts_word_pieces_without_special_tokens(
    tokenizer: Tokenizer, text: str, count: int
) -> None:
    assert tokenizer.count(text) == count


def test_tokenizer_is_not_truncated_at_the_files_128(tokenizer: Tokenizer) -> None:
    assert tokenizer.count("word " * 1000) == 1000


def test_a_long_text_is_counted_in_blocks_with_the_same_total(tokenizer: Tokenizer) -> None:
    import memvault.index.tokenizer as e

    lines = [
        f"## 2024-01-{d % 28 + 1:02} standup\nWe decided décor-{d} naïvely, 東京 {d}."
        for d in range(9000)
    ]
    text = "\n".join(lines) + "\nno newline at the end " * 50
    assert len(text) > 4 * e._COUNT_BLOCK  # several blocks
    whole = len(tokenizer._tokenizer.encode(text, add_special_tokens=False).ids)
    assert tokenizer.count(text) == whole


# --- resolution ---------------------------------------------------------------------


@pytest.mark.parametrize("model", [DEFAULT_MODEL, "all-MiniLM-L6-v2"])
def test_the_default_id_resolves_to_the_bundled_verified_weights(model: str) -> None:
    path = resolve_model_path(model)
    assert (path / "model.safetensors").is_file()
    assert (path / "tokenizer.json").is_file()


def test_a_model_folder_path_is_used_as_is(tmp_path: Path) -> None:
    assert resolve_model_path(str(tmp_path)) == tmp_path.resolve()


@pytest.mark.parametrize("model", ["/no/such/model", "./no-such-model", "~/no/such/model", "a/b/c"])
def test_a_missing_model_folder_is_a_model_error(model: str) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model_path(model)


def test_a_file_is_not_a_model_folder(tmp_path: Path) -> None:
    file = tmp_path / "model.bin"
    file.write_bytes(b"x")
    with pytest.raises(ModelError, match="is a file"):
        resolve_model_path(str(file))


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("model", ["memvault-tests/no-such-model", "no-such-model-xyz"])
def test_an_unknown_hub_id_is_a_model_error_without_network(
    model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="not installed locally") as info:
        resolve_model_path(model)
    assert model in str(info.value)
    assert "set index.model" in str(info.value)


def test_a_configured_model_that_cannot_be_resolved_never_falls_back() -> None:
    with pytest.raises(ModelError):
        SentenceTransformerEmbedder("/no/such/model")
    with pytest.raises(ModelError):
        make_embedder(IndexSettings(model="/no/such/model"))


def test_verify_weights_accepts_the_bundled_weights() -> None:
    verify_weights(resolve_model_path(DEFAULT_MODEL) / "model.safetensors", BUNDLED_SHA256)


def test_damaged_weights_are_a_model_error_naming_the_file(tmp_path: Path) -> None:
    copy = tmp_path / "model.safetensors"
    shutil.copyfile(resolve_model_path(DEFAULT_MODEL) / "model.safetensors", copy)
    with copy.open("r+b") as f:
        f.seek(1_000_000)
        byte = f.read(1)
        f.seek(1_000_000)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ModelError, match="damaged") as info:
        verify_weights(copy, BUNDLED_SHA256)
    assert str(copy) in str(info.value)


def test_missing_weights_are_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="missing"):
        verify_weights(tmp_path / "model.safetensors", BUNDLED_SHA256)


# --- the real model ------------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.mark.model
def test_real_embedder_identity_and_window(model: SentenceTransformerEmbedder) -> None:
    assert model.dim == 384
    assert model.max_tokens == 254
    assert model.model_id == f"{DEFAULT_MODEL}@{BUNDLED_SHA256[:12]}"
    assert SentenceTransformerEmbedder("all-MiniLM-L6-v2").model_id == model.model_id
    assert isinstance(model, Embedder)


@pytest.mark.model
def test_real_embedder_returns_normalized_float32_rows(model: SentenceTransformerEmbedder) -> None:
    out = model.embed(["one", "two words", "a somewhat longer third sentence"])
    assert out.shape == (3, 384) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_real_embedder_of_nothing_is_an_empty_matrix(model: SentenceTransformerEmbedder) -> None:
    out = model.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32


@pytest.mark.model
def test_real_embedder_places_close_sentences_closer(model: SentenceTransformerEmbedder) -> None:
    v = model.embed(
        [
            "We chose PostgreSQL as the main database.",
            "Postgres was picked for our data store.",
            "My cat likes to sleep in the sun.",
        ]
    )
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


@pytest.mark.model
def test_real_embedder_rows_follow_input_order(model: SentenceTransformerEmbedder) -> None:
    texts = ["a much longer sentence about the database migration plan", "short", "mid length"]
    together = model.embed(texts)
    alone = np.vstack([model.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


@pytest.mark.model
def test_token_counts_match_the_models_own_tokenizer(model: SentenceTransformerEmbedder) -> None:
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(model.path), device="cpu", local_files_only=True).tokenizer
    tokenizer = Tokenizer.for_model(DEFAULT_MODEL)
    texts = [
        "",
        "Hello, world!",
        "naïve café résumé — 東京 🎉 ERR_CONN_RESET 0x0000dead",
        "```python\nx = {'a': [1, 2]}\n```",
        "word " * 600,
        "QUJD" * 500,
    ]
    for text in texts:
        expected = len(reference(text, add_special_tokens=False)["input_ids"])
        assert tokenizer.count(text) == expected
        assert model.count_tokens(text) == expected


@pytest.mark.model
def test_a_folder_that_is_not_a_model_is_a_model_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="cannot load"):
        SentenceTransformerEmbedder(str(tmp_path))


@pytest.mark.model
def test_threads_sets_torchs_thread_count(model: SentenceTransformerEmbedder) -> None:
    import torch

    before = torch.get_num_threads()
    try:
        one = SentenceTransformerEmbedder(threads=1)
        assert torch.get_num_threads() == 1
        assert np.allclose(one.embed(["same text"]), model.embed(["same text"]), atol=1e-5)
    finally:
        torch.set_num_threads(before)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_heap_memory_is_handed_back() -> None:
    """What embed() does after a large batch: freed heap pages go back to the system."""

    def resident_mb() -> float:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    blocks = [bytearray(20_000) for _ in range(10_000)]  # ~200 MB in malloc'd pieces
    keep = blocks[::100]  # a few survivors, so the heap cannot simply shrink from the top
    del blocks
    before = resident_mb()
    _release_freed_memory()
    after = resident_mb()
    assert before - after > 100, (before, after)
    del keep


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the mmap threshold is glibc's")
def test_the_daemon_maps_big_blocks_apart_even_after_a_bigger_one_was_freed() -> None:
    """heap.configure (the daemon's start) fixes glibc's mmap threshold: a 1 MB block is
    its own mapping (unmapped when freed) even after a 20 MB one was freed, which
    raises glibc's own threshold to 20 MB (then the 1 MB would stay in the heap)."""
    code = (
        "import ctypes, sys\n"
        "class MI2(ctypes.Structure):\n"
        "    _fields_ = [(n, ctypes.c_size_t) for n in ('arena', 'ordblks', 'smblks', "
        "'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
        "libc = ctypes.CDLL('libc.so.6')\n"
        "libc.mallinfo2.restype = MI2\n"
        "big = bytearray(20_000_000)\n"
        "del big\n"
        "from memvault.service import heap\n"
        "assert heap.configure()\n"
        "n = libc.mallinfo2().hblks\n"
        "block = bytearray(1_000_000)\n"
        "print(libc.mallinfo2().hblks - n)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1", result.stdout


def test_hash_embedder_is_its_definition_feature_by_feature() -> None:
    """Issue 27: the hash embedder sums each word's features once (cached) and adds a
    word times its count; its vectors stay exactly those of its definition (every word
    +-1, every character trigram +-0.5, L2-normalized), so no index changes."""
    import random

    from memvault.index.embedder_hash import _bucket

    def reference(text: str, dim: int) -> np.ndarray:
        v = np.zeros(dim, dtype=np.float64)
        for word in re.findall(r"\w+", text.lower()):
            i, sign = _bucket("w:" + word, dim)
            v[i] += sign
            padded = f"<{word}>"
            for j in range(len(padded) - 2):
                i, sign = _bucket("t:" + padded[j : j + 3], dim)
                v[i] += 0.5 * sign
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[_bucket("", dim)[0]] = 1.0
            norm = 1.0
        return (v / norm).astype(np.float32)

    rng = random.Random(27)
    words = ["Kiln", "kiln", "drying", "dé", "x1", "the", "of", "schedule", "naïve", "ok"]
    texts = ["", "!!! ...", "word"] + [
        " ".join(rng.choice(words) + rng.choice(["", ",", "."]) for _ in range(rng.randint(1, 400)))
        for _ in range(60)
    ]
    for dim in (64, 17):
        got = HashEmbedder(dim).embed(texts)
        assert np.array_equal(got, np.stack([reference(t, dim) for t in texts]))
