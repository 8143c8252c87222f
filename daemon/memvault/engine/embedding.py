"""Meaning: the embedding model, what it is given to read, and the vector index.

``Embedding`` owns everything that needs (or may need) the model: loading it
on first use, its identity (a different model than the index was built with
means a full re-embed, said out loud), the exact text each chunk is embedded
as, the hnswlib index (opened and reconciled with the store on first use,
saved, compacted) and re-embedding chunks whose cached vectors were lost.
Counting tokens and knowing the model's window never load the model (the
tokenizer is read on its own), so the structure lane never waits for it.

The vector lane (DESIGN.md, "Two lanes") is ``embed_pending``: the structure
lane queues new chunks in the store's pending table with their exact text;
each step takes a bounded batch off it, embeds what the cache lacks *without*
the engine's lock, then, briefly under the lock, puts the vectors of the
chunks still pending into the index. A kill at any point leaves the queue as
it was: the next step (or the next start) takes it up again.

The vector index itself, as this process holds it (opened in full, or read cold for a
search with no daemon), is ``engine/held_vectors.py``'s ``HeldVectors``: ``Embedding``
owns one (``held``), shares its lock with it and drops it on a model change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from memvault.config import VaultConfig
from memvault.core.chunks import Chunk, embed_texts, model_text
from memvault.core.excerpts import unit_texts
from memvault.core.notes import Note
from memvault.core.text import sha256_text
from memvault.engine.held_vectors import HeldVectors, Unsaved, vector_file
from memvault.errors import ModelAway, ModelError
from memvault.index.embedder import (
    Embedder,
    make_embedder,
    model_id_for,
    token_counter_for,
    window_for,
)
from memvault.index.rows import ChunkRow, NoteRow
from memvault.index.seam import VectorSearch
from memvault.index.store import Store

log = logging.getLogger("memvault")

# Line vectors kept in memory (float16, ~0.8 KB each: ~25 MB): reading ~1,000 of them
# from cache.db for every context took ~15 ms of a ~40 ms call. Keyed by content hash,
# so they never go stale.
LINE_VECTORS_KEPT = 32_768
PENDING_BATCH = 32  # chunks per vector-lane step: a step is ~0.5 s of model time, not minutes


@dataclass(frozen=True, slots=True)
class VectorStep:
    """What one step of the vector lane did."""

    embedded: int  # chunk texts the model embedded (the rest came from the cache)
    indexed: int  # chunks whose vectors went into the index
    remaining: int  # chunks still pending after it


def _cached(
    store: Store, model: str, shas: Sequence[str], loaded: Embedder | None
) -> dict[str, np.ndarray]:
    """The cache's vectors of ``shas``; a row of another dimension than the index's
    (a row memvault did not write: one search stacking it with the question's vector
    failed) is a miss, embedded again (over it) by the next sync. The dimension is the
    one recorded, else the ``loaded`` model's: the model is never loaded for it."""
    have = store.cached(model, shas)
    if not have:
        return have
    recorded = store.meta("dim")
    dim = int(recorded) if recorded else loaded.dim if loaded is not None else None
    return have if dim is None else {s: v for s, v in have.items() if v.shape == (dim,)}


class KeptLines:
    """Line vectors kept in memory, by the model's id and their text's sha256 (float16,
    the oldest let go past ``LINE_VECTORS_KEPT``). Reads run on many threads: the kept
    vectors are read and evicted under a lock (the cache read is not)."""

    def __init__(self) -> None:
        self._kept: tuple[str, dict[str, np.ndarray]] | None = None  # (model, sha -> vec)
        self._lock = threading.Lock()

    def get(
        self, model: str, shas: Sequence[str], read: Callable[[list[str]], dict[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        """The vectors of ``shas`` kept, the others ``read`` (and kept); missing left out."""
        with self._lock:
            kept = self._kept
            if kept is None or kept[0] != model:
                kept = self._kept = (model, {})
            memory = kept[1]
            out = {sha: memory[sha] for sha in shas if sha in memory}
        missing = [sha for sha in dict.fromkeys(shas) if sha not in out]
        if missing:
            found = {sha: vec.astype(np.float16) for sha, vec in read(missing).items()}
            out.update(found)
            with self._lock:
                memory.update(found)
                while len(memory) > LINE_VECTORS_KEPT:  # insertion order: oldest first
                    del memory[next(iter(memory))]
        return out

    def clear(self) -> None:
        with self._lock:
            self._kept = None


def _model_and_loader(
    embedder: Embedder | Callable[[], Embedder] | None, config: VaultConfig, apart: bool
) -> tuple[Embedder | None, Callable[[], Embedder]]:
    """The model given (or None), and how to load one on first use: the caller's (the
    MCP server shares one across the vaults it opens), else the configured one, here."""
    if embedder is not None and not hasattr(embedder, "embed"):
        return None, embedder
    return embedder, lambda: make_embedder(config.index, apart=apart)  # type: ignore[return-value]


class Embedding:
    """The model and the vectors of one vault; each opened on first use, thread-safe
    (the vectors held by ``held``: engine/held_vectors.py)."""

    def __init__(
        self,
        config: VaultConfig,
        store: Store,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        *,
        read_only: bool = False,  # a reader of the vault: it queues nothing
        model_apart: bool = False,  # a daemon's: the model in a process of its own
        cold_reads: bool = False,  # no daemon's: a search reads the saved graph (``searching``)
    ):
        self.config = config
        self._store = store
        self._read_only = read_only or store.read_only
        self._embedder, self._load = _model_and_loader(embedder, config, model_apart)
        self._owned = embedder is None  # loaded here: may be let go (``release_model``)
        self._apart = model_apart
        self._used = time.monotonic()  # the model's last use
        # Lazy opening has its own lock, so searches are never stuck behind a long
        # sync that holds the engine's.
        self._open_lock = threading.RLock()
        self._tokenizer: Callable[[str], int] | None = None
        self._window: int | None = None
        self._model_id: str | None = None
        self._lines = KeptLines()
        self.held = HeldVectors(config, store, self, self._open_lock, cold_reads=cold_reads)
        self.unsaved: Unsaved = self.held.unsaved  # the vector index's changes since its save
        # told when a model change queued every chunk again (the daemon's vector lane,
        # which may be waiting: the change can come from a search's reload of the model)
        self.on_requeue: Callable[[], None] | None = None

    # -- the model -------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded once, on first use (seconds: only when needed)."""
        if self._embedder is None:
            with self._open_lock:
                if self._embedder is None:
                    emb = self._load()
                    expected, self._embedder = self._model_id, emb
                    if expected is not None and expected != emb.model_id:
                        # the configured backend could not run (ONNX fell back to torch):
                        # vectors of the expected model must never meet this one's
                        self.held.drop()
                        self._tokenizer = self._window = None  # this model's, from now
                        self.check_model()
                    # a reader's index is another's (PostgreSQL's writer elsewhere, a
                    # file this user cannot write: backends.open_backend)
                    if not self._read_only and self._store.meta("dim") != str(emb.dim):
                        self._store.set_meta("dim", str(emb.dim))
        self._used = time.monotonic()
        return self._embedder

    def query_vector(self, text: str) -> np.ndarray | None:
        """A query's vector; None while the model's process is away (``ModelAway``:
        stopped, silent, killed and resting: index/child_watch.py), said on the log: a
        search then answers by keywords alone, rather than wait or fail."""
        try:
            return self.embedder.embed([text])[0]
        except ModelAway as exc:
            log.warning("searching by keywords alone: %s", exc)
            return None

    def process_info(self) -> dict[str, object] | None:
        """The model's process's restarts (/status), while one is loaded and runs apart."""
        info = getattr(self._embedder, "process_info", None)
        return None if info is None else info()

    def kill_process(self) -> None:
        """Kill the model's process now, not waiting for a call in flight: a daemon
        exiting without its lane's step (a stopped child would outlive it)."""
        getattr(self._embedder, "kill", lambda: None)()

    def unused_for(self) -> float | None:
        """Seconds since the model was last used; None when it is not loaded."""
        return None if self._embedder is None else time.monotonic() - self._used

    def release_model(self, idle_seconds: float) -> bool:
        """Let the model go once nothing has used it for ``idle_seconds``, with the line
        vectors kept in memory: what an idle daemon holds for nothing (the runtime's
        session, ~30-50 MB). The next use loads it again, checked against the identity
        it had. A model given to the engine (a caller's own, the tests') is kept. True
        when it was let go."""
        with self._open_lock:
            emb = self._embedder
            if not self._owned or emb is None or time.monotonic() - self._used < idle_seconds:
                return False
            self._model_id = emb.model_id  # what a reload must be (``embedder``)
            self._embedder = None
            self._tokenizer = None  # it may be the model's own counter: the tokenizer's now
        getattr(emb, "close", lambda: None)()  # the model's own process, if any, ends
        self._lines.clear()
        return True

    def count_tokens(self, text: str) -> int:
        """Word pieces of the embedding model, counted without loading the model."""
        if self._tokenizer is None:
            if self._embedder is not None:
                self._tokenizer = self._embedder.count_tokens
            else:
                self._tokenizer = token_counter_for(self.config.index)
        return self._tokenizer(text)

    @property
    def max_tokens(self) -> int:
        """The model's window in word pieces, known without loading the model."""
        if self._embedder is not None:
            return self._embedder.max_tokens
        if self._window is None:
            self._window = window_for(self.config.index)
        return self._window

    def dim(self) -> int:
        """The vectors' dimension: recorded in the store once the model has loaded."""
        recorded = self._store.meta("dim")
        return int(recorded) if recorded else self.embedder.dim

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (no call here ever loads it)."""
        return self._embedder is not None

    def model_id(self) -> str:
        """The embedding model's identity, known without loading the model."""
        if self._embedder is not None:
            return self._embedder.model_id
        if self._model_id is None:
            self._model_id = model_id_for(self.config.index)
        return self._model_id

    @property
    def indexed_with(self) -> str | None:
        """The model the index was built with (None before the first embedding)."""
        return self._store.meta("model_id")

    def check_model(self) -> str | None:
        """A different model than the index was built with means a full re-embed, said
        out loud. Keyword search never stops for it: every chunk keeps its row and its
        keyword row and is queued for the vector lane with the text the new model
        embeds; only the old model's vectors go, and only the notes the new model's
        tokenizer would cut differently are read again (by the next sync: the one that
        called this cuts them at once). Returns the warning."""
        model, previous = self.model_id(), self.indexed_with
        if previous == model or (previous is None and self._read_only):
            return None
        if previous is None:
            self._store.set_meta("model_id", model)
            return None
        if self._read_only:  # a reader re-queues nothing: the index is the writer's
            raise ModelError(_not_this_model(previous, model))
        with self._open_lock:
            self.held.drop()
            queued, recut = self._requeue_all(f"{previous} -> {model}")
        message = _model_changed(previous, model, queued, recut)
        log.warning("%s", message)
        return message

    def _requeue_all(self, reason: str) -> tuple[int, int]:
        """Every chunk queued for the vector lane (``Store.requeue_all``), the vector
        file deleted (the index opens empty), the lane told."""
        done = self._store.requeue_all(self._requeue_texts, self.model_id(), reason, time.time())
        vector_file(self.config.state_dir).unlink(missing_ok=True)
        if self.on_requeue is not None:
            self.on_requeue()
        return done

    def _requeue_texts(self, row: NoteRow, chunks: list[ChunkRow]) -> tuple[list[str], bool]:
        """The texts the current model embeds for a note's stored chunks, and whether its
        tokenizer cuts the note differently (a chunk of another size in its word pieces,
        or what the model reads of it past its window, ``chunks.model_text``: a drawing's
        chunk with its block ids may pass it as written): then the note is cut again."""
        window = min(self.config.index.max_chunk_tokens, self.max_tokens)
        sizes = [self.count_tokens(c.text) for c in chunks]
        again = any(
            n != c.tokens or (n > window and self.count_tokens(model_text(c.text)) > window)
            for n, c in zip(sizes, chunks, strict=True)
        )
        return self._stored_texts(row, chunks), again

    def texts_for(self, note: Note, chunks: Sequence[Chunk]) -> list[str]:
        """The exact texts embedded for a note's chunks (context header + overlap)."""
        settings = self.config.index
        return embed_texts(
            note,
            chunks,
            settings.embed_context,
            self.count_tokens,
            max_tokens=min(settings.max_chunk_tokens, self.max_tokens),
            overlap_tokens=settings.context_overlap_tokens,
        )

    def line_texts(self, chunk_texts: Iterable[str]) -> dict[str, str]:
        """sha256 -> text of each line embedded alone (core/excerpts); {} if line_vectors is off."""
        on = self.config.index.line_vectors
        return {sha256_text(t): t for text in chunk_texts for t in unit_texts(text)} if on else {}

    def embed_new(self, texts: dict[str, str]) -> set[str]:
        """Embed the texts (by sha256) the cache lacks, in one model call, and cache
        them; return the shas that were embedded. The model loads only if one is new."""
        model = self.model_id()
        have = _cached(self._store, model, list(texts), self._embedder)
        need = [s for s in texts if s not in have]
        if need:
            emb = self.embedder
            if emb.model_id != model:  # the model that loaded is not the one expected
                have = _cached(self._store, emb.model_id, list(texts), emb)
                need = [s for s in texts if s not in have]
        if need:
            vectors = emb.embed([texts[s] for s in need])
            self._store.put_embeddings(emb.model_id, dict(zip(need, vectors, strict=True)))
        return set(need)

    def embed_pending(
        self,
        lock: AbstractContextManager[object],
        limit: int = PENDING_BATCH,
        *,
        add_outside: bool = False,
    ) -> VectorStep:
        """One step of the vector lane: embed up to ``limit`` pending chunks (and their
        lines) outside ``lock`` — the engine's, so the structure lane never waits for the
        model — then index those still pending, under it. ``add_outside``: under the lock
        they only leave the queue; hnswlib takes them after it is released (the lane
        beside a sync's structure lane: hnswlib's inserts, a third of the lane's time at
        100,000 notes, then run beside it too). A chunk deleted in between (``forget``)
        is deleted from the index once it is in."""
        batch = self._store.pending(limit)
        if not batch:
            return VectorStep(0, 0, 0)
        wanted = self.line_texts(p.text for p in batch)
        wanted.update((p.sha, p.embed_text) for p in batch)
        embedded = len(self.embed_new(wanted) & {p.sha for p in batch})
        with lock:
            if self.indexed_with != self.model_id():
                self.check_model()  # a first embedding: the index is for this model now
            # opened (and reconciled) before the queue changes; None: left out of the
            # graph in a process that is no daemon (held_vectors.LEFT_OUT_MOST)
            vi = self.held.adding(len(batch))
            done = self._store.finish_pending(
                [p.label for p in batch], {p.label: p.sha for p in batch}, reclaim=False
            )
            self.held.take(done, add_outside=add_outside, left_out=vi is None)
        if add_outside and done and vi is not None:
            self.held.add_outside(vi, done)
        remaining, _ = self._store.pending_state()
        if done and not remaining:  # the queue's pages back, outside the engine's lock: a
            self._store.reclaim()  # save waits one of its steps, not all (100k: 25 s)
        return VectorStep(embedded, len(done), remaining)

    def line_vectors(self, shas: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of lines by the sha256 of their embedded text: from memory, else from
        the cache (a line not embedded yet is left out)."""
        model = self.model_id()
        return self._lines.get(
            model, shas, lambda missing: _cached(self._store, model, missing, self._embedder)
        )

    # -- the vectors -----------------------------------------------------------------

    @property
    def vectors(self) -> VectorSearch:
        """The vector index, opened (and reconciled with the db) on first use."""
        return self.held.full

    @property
    def searching(self) -> VectorSearch:
        """What a search reads: the index once open; before, in a process that is no
        daemon (``cold_reads``), the saved graph read cold (index/vectors_cold.py)."""
        return self.held.searching

    def cache_lost(self, label: int) -> bool:
        """Whether every cached vector is gone (cache.db deleted, or rebuilt after damage):
        then every chunk is queued for the lane, as for a new model (keyword search
        meanwhile), not re-embedded inside the open while each search waits. One chunk's
        vector looked up first; the cache is counted only when it is missing."""
        model = self.model_id()
        sha = self._store.chunk_shas([label]).get(label)
        if self._read_only or sha is None or self._store.cached(model, [sha]):
            return False  # (a reader queues nothing: the writer's work)
        if self._store.cache_count(model):
            return False
        queued, _ = self._requeue_all("the embedding cache was lost")
        log.warning("the embedding cache was lost: %d chunks queued to embed again", queued)
        return True

    def vectors_for(self, labels: Sequence[int]) -> np.ndarray:
        """Cached vectors of these chunks, a row for each label in order; lost ones are
        re-embedded from the stored text. A chunk deleted since the labels were read (a
        sync's commit while the index opens: its ``forget`` waits for the open) has
        neither: its row is a placeholder (a unit vector) that sync's ``forget`` deletes;
        its label, never given again, leads to no chunk, so a search skips it (an open
        that raised instead left the vector lane with no index at all)."""
        dim = self.dim()
        found, matrix = self._store.vectors_for(self.model_id(), labels, dim)
        if len(found) != len(labels):
            missing = sorted(set(labels) - set(found))
            # (a chunk a sync deleted meanwhile has no row: nothing lost, nothing said)
            if rows := self._store.chunk_rows(missing):
                log.warning("re-embedding %d chunks whose cached vectors are gone", len(rows))
                self._embed_notes({r.path for r in rows.values()})
                found, matrix = self._store.vectors_for(self.model_id(), labels, dim)
        if len(found) == len(labels):
            return matrix
        out = np.zeros((len(labels), dim), dtype=np.float32)
        out[:, 0] = 1.0
        at = {label: i for i, label in enumerate(labels)}
        for row, label in zip(matrix, found, strict=True):
            out[at[label]] = row
        return out

    def _stored_texts(self, row: NoteRow, chunks: Sequence[ChunkRow]) -> list[str]:
        """The texts this model embeds for a note's chunks as the index holds them
        (the note rebuilt from its row: what the embedded texts need of it)."""
        note = note_of(row)
        return self.texts_for(
            note, [Chunk(c.ord, c.heading, c.line_start, c.line_end, c.text) for c in chunks]
        )

    def _embed_notes(self, paths: Iterable[str]) -> None:
        for path in paths:
            row = self._store.note(path)
            chunks = self._store.chunks_of(path)
            if row is None or not chunks:
                continue
            texts = self._stored_texts(row, chunks)
            wanted = {sha256_text(t): t for t in texts}
            wanted.update(self.line_texts(c.text for c in chunks))
            self.embed_new(wanted)

    def add(self, labels: Sequence[int]) -> None:
        """Put these new chunks' cached vectors into the index."""
        self.held.add(labels)

    def forget(self, labels: Sequence[int]) -> None:
        """Take deleted chunks out of the index (nothing to do before the first embedding)."""
        if labels and self.indexed_with:
            self.held.forget(labels)

    @property
    def last_save(self) -> float:
        return self.unsaved.last_save

    def save_when_due(self) -> bool:
        """Save the vector index when a save is due (``Unsaved.due``); True if it saved."""
        return self.held.save_when_due()

    def save(self) -> None:
        """Save the vector index if it changed, recording its hash in the store."""
        self.held.save()

    def maybe_compact(self) -> None:
        """Rebuild the index from the cache once deleted slots pass ``compact_ratio``."""
        self.held.maybe_compact()


def note_of(row: NoteRow) -> Note:
    """A note rebuilt from its row: what its embedded texts and ``about_text`` read of it
    (title, summary, frontmatter, tags, aliases), no body."""
    return Note(
        row.path, row.title, row.summary, row.frontmatter, row.tags, row.aliases,
        (), (), "", 1,
    )  # fmt: skip


def _model_changed(previous: str, model: str, queued: int, recut: int) -> str:
    return (
        f"embedding model changed from {previous} to {model}: re-embedding every note "
        f"({queued} chunks queued for the new model; keyword search works meanwhile"
        + (f"; {recut} notes cut again for its tokenizer" if recut else "")
        + ")"
    )


def _not_this_model(previous: str, model: str) -> str:
    return (
        f"the index was built with {previous}; this process would search it with {model} "
        "(said above, when a fallback chose it) and cannot re-embed it: the index is "
        "read-only to it. Search here with the index's model, or through the vault's "
        "daemon (memvault up)"
    )


__all__ = ["Embedding", "KeptLines", "Unsaved", "note_of", "vector_file"]
