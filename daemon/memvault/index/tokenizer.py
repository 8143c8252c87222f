"""The model's word-piece tokenizer (``tokenizer.json`` through the ``tokenizers``
library, no torch), for chunking and token budgets: counting never loads the model.

One ``Tokenizer`` per model folder in a process (``from_folder`` keeps it): the
engine's counter, the ONNX embedder's counter and the ids it runs the model on are
the same object. Each ``tokenizers.Tokenizer`` loaded holds ~6 MB (the vocabulary,
its tries) and each ``Tokenizer`` its cache of recent counts: a daemon held two or
three (bench/RESULTS.md, "The real-model daemon at 10,000 notes")."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.errors import ModelError
from memvault.index.model_files import resolve_model_path, window_of

if TYPE_CHECKING:
    import tokenizers

_COUNT_BLOCK = 64 * 1024  # characters per encode() when counting a long text
# Chunking counts the same short texts more than once (a paragraph, the chunk it
# lands in, the chunk again for its row): recent counts of texts this short are kept.
_COUNT_CACHE = 4096
_CACHED_CHARS = 2048
_LOADED: dict[tuple[str, int, int, int], Tokenizer] = {}  # tokenizer.json, mtime, size, window
_LOADING = threading.Lock()


class Tokenizer:
    """The model's word-piece tokenizer, loaded without torch."""

    def __init__(self, tokenizer: tokenizers.Tokenizer, window: int) -> None:
        tokenizer.no_truncation()  # tokenizer.json ships truncation/padding at 128
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        processor = tokenizer.post_processor
        self.special_tokens = processor.num_special_tokens_to_add(False) if processor else 0
        self.window = window
        self.max_tokens = window - self.special_tokens  # 254 for all-MiniLM-L6-v2
        # special tokens the template puts after a text ([SEP]): kept at a truncated end
        mask = tokenizer.encode("a", add_special_tokens=True).special_tokens_mask
        self._tail = sum(1 for _ in itertools.takewhile(bool, reversed(mask)))
        self._count_short = lru_cache(maxsize=_COUNT_CACHE)(self._count)

    @classmethod
    def from_folder(cls, folder: Path) -> Tokenizer:
        """``folder/tokenizer.json``, loaded once a process (the same file unchanged: the
        same object); the window comes from sentence_bert_config.json."""
        import tokenizers

        file = folder / "tokenizer.json"
        try:
            stat, window = file.stat(), window_of(folder)
            key = (str(file.resolve()), stat.st_mtime_ns, stat.st_size, window)
            with _LOADING:
                kept = _LOADED.get(key)
                if kept is None:
                    kept = cls(tokenizers.Tokenizer.from_file(str(file)), window)
                    _LOADED[key] = kept
        except ModelError:
            raise
        except Exception as exc:  # missing or unreadable: one message
            raise ModelError(f"cannot load the tokenizer {file}: {exc}") from None
        return kept

    @classmethod
    def for_model(cls, model: str) -> Tokenizer:
        """The tokenizer of a configured model (resolved like the model, weights not hashed)."""
        return cls.from_folder(resolve_model_path(model, verify=False))

    def count(self, text: str) -> int:
        """Word pieces in ``text``, special tokens not counted.

        A long text is counted a block of lines at a time: one encoding of a
        4 MB dump holds ids, offsets and masks for a million tokens (~700 MB);
        a line break is a word boundary, so the sum is the same.
        """
        if len(text) <= _CACHED_CHARS:
            return self._count_short(text)
        return self._count(text)

    def model_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids the model runs on: special tokens added, truncated at the window as
        ``tokenizers``' own truncation does (the text's first ``max_tokens`` pieces,
        then the closing special token), by this untruncated tokenizer."""
        out = []
        for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=True):
            ids = e.ids
            if len(ids) > self.window:
                ids = ids[: self.window - self._tail] + ids[len(ids) - self._tail :]
            out.append(ids)
        return out

    def _count(self, text: str) -> int:
        if len(text) <= _COUNT_BLOCK:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        total, start = 0, 0
        while start < len(text):
            end = text.find("\n", start + _COUNT_BLOCK)
            end = len(text) if end < 0 else end + 1
            total += len(self._tokenizer.encode(text[start:end], add_special_tokens=False).ids)
            start = end
        return total
