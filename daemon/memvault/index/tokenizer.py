"""The model's word-piece tokenizer (``tokenizer.json`` through the ``tokenizers``
library, no torch), for chunking and token budgets: counting never loads the model."""

from __future__ import annotations

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
        self._count_short = lru_cache(maxsize=_COUNT_CACHE)(self._count)

    @classmethod
    def from_folder(cls, folder: Path) -> Tokenizer:
        """Load ``folder/tokenizer.json``; the window comes from sentence_bert_config.json."""
        import tokenizers

        file = folder / "tokenizer.json"
        try:
            tok = tokenizers.Tokenizer.from_file(str(file))
        except Exception as exc:  # missing or unreadable: one message
            raise ModelError(f"cannot load the tokenizer {file}: {exc}") from None
        return cls(tok, window_of(folder))

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
