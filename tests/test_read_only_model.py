"""A reader that cannot write the index (another user's vault, a read-only mount) whose
model is not the one the index was built with — the ONNX backend fell back to PyTorch
for it (its model cache not writable), a config it reads names another — searched,
and died with a traceback: ``sqlite3.OperationalError: attempt to write a readonly
database``, from re-queueing every chunk for its model. It writes nothing and says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.config import VaultConfig
from memvault.engine import Engine
from memvault.errors import ModelError
from memvault.index.embedder import HashEmbedder


def test_a_reader_with_another_model_refuses_meaning_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "people/ana.md", "# Ana\n\nAna runs the data team.\n")
    with open_vault(root) as v:
        v.sync()
    index = root / ".memvault" / "index.db"
    before = index.read_bytes()
    engine = Engine(VaultConfig.load(root, env={}), HashEmbedder(dim=32), read_only=True)
    try:
        with pytest.raises(ModelError) as caught:
            engine.search("data team")
    finally:
        engine.close()
    said = str(caught.value)
    assert "hash-64" in said and "hash-32" in said and "read-only" in said, said
    assert index.read_bytes() == before
    with open_vault(root) as v:  # the index is still the old model's, every vector kept
        assert v.search("data team")[0].path == "people/ana.md"
        assert v.pending_vectors()[0] == 0
