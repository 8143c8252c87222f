"""The model's word-piece tokenizer (``tokenizer.json`` through the ``tokenizers``
library, no torch), for chunking and token budgets: counting never loads the model.

One ``Tokenizer`` per model folder in a process (``from_folder`` keeps it): the
engine's counter, the ONNX embedder's counter and the ids it runs the model on are
the same object. Each ``tokenizers.Tokenizer`` loaded holds ~6 MB (the vocabulary,
its tries) and each ``Tokenizer`` its cache of recent counts: a daemon held two or
three (bench/RESULTS.md, "The real-model daemon at 10,000 notes").

The counts are kept by the text's digest, in two generations of ``_COUNT_CACHE``
(``_Counts``): a sync of a note counts each of its texts again, and a long note an
agent appends to every turn has more of them than an LRU of 4,096 held, which then
kept none (the texts come in the same order each time): every append to a note of
10,000 lines encoded ~10,700 texts again, 1.2 s of the model's tokenizer
(bench/RESULTS.md, "a year of an agent's writes")."""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.errors import ModelError
from memvault.index.model_files import resolve_model_path, window_of

if TYPE_CHECKING:
    import tokenizers

_COUNT_BLOCK = 64 * 1024  # characters per encode() when counting a long text
# Chunking counts the same texts more than once (a paragraph, the chunk it lands in,
# the chunk again for its row), and a sync of a changed note all its texts again:
# the counts of this many texts are kept a generation (a note of 2 MB, the most
# vault.max_note_bytes indexes by default, has ~27,000), by a digest (~100 bytes each:
# 6.8 MB the two generations full, measured with tracemalloc).
_COUNT_CACHE = 32_768
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
        self._counts = _Counts(_COUNT_CACHE)

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
        if len(text) > _COUNT_BLOCK:  # a dump, counted once
            return self._count(text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        n = self._counts.get(key)
        if n is None:
            n = self._count(text)
            self._counts.put(key, n)
        return n

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


class _Counts:
    """Counts by digest in two generations of ``size``: a count is looked up in the
    newer, then the older (and copied into the newer); a full newer one becomes the
    older. A working set of up to ``size`` texts counted over and over in the same
    order (a long note synced again) is kept whole, where an LRU that size kept none
    of a set a little bigger. Races between threads lose a count at worst (it is
    counted again), never give a wrong one."""

    __slots__ = ("_new", "_old", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._new: dict[bytes, int] = {}
        self._old: dict[bytes, int] = {}

    def get(self, key: bytes) -> int | None:
        n = self._new.get(key)
        if n is None:
            n = self._old.get(key)
            if n is not None:
                self.put(key, n)
        return n

    def put(self, key: bytes, n: int) -> None:
        if len(self._new) >= self._size:
            self._old, self._new = self._new, {}
        self._new[key] = n
