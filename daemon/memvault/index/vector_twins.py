"""One graph node per distinct vector: the labels whose vector the graph already holds.

hnswlib's graph breaks on copies of one vector. Each copy's neighbour list fills with
other copies (at distance 0 they are nearer than anything), and copies crowd the lists
of the vectors around them: the copies become a clique that few links leave, and a
query that walks into it stays there (our reading of hnswlib's neighbour selection;
the recall is measured). Measured with memvault's settings (bench/vector_copies.py
recall, RESULTS.md): 300 copies of one vector among 3,000 others, recall@10 against
exact search 0.59 where it is 0.96 without them (0.96 with twins); a 5 MB note of one
repeated line hid the vault's nearest chunk from 9 queries in 10. A vault makes copies
where the texts embedded are equal, context header included: notes of one template
that keep its title (28 standups titled "Meeting": 28 copies; bench/vector_copies.py
share), a note copied to another folder, a note that repeats itself. The dev vaults
have none (their results are unchanged).

So the first label given a vector is its **node** in the graph, and every later label
given the same vector (the same text: the cache's vector, byte for byte) is a
**twin** of it, kept here and never inserted: a query's hit on a node is a hit on each
of its twins, at the same similarity. When a node is deleted its oldest twin takes its
place in the graph (the vector read back from the graph). The twins are not saved:
the graph file holds the nodes, and ``open`` finds the twins again as the labels the
file lacks (the digests of the nodes' vectors are taken as the load reads them).

A vector is known by a 64-bit digest of its words (``digests``); a digest match counts only when the
vector the graph holds is the same (cosine distance under ``SAME``), so a collision
costs a duplicate node, never a wrong hit. The digests are sorted arrays plus a small
dict of recent ones (16 bytes a node: 8 MB at 500,000 chunks; a dict of ints would
take ~100 bytes each). A deleted node's digest stays until the next build and is
ignored (its node is no longer live).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the index is vectors.py's (hnswlib is imported there only)
    import hnswlib

SAME = 1e-6  # cosine distance under which a digest match is the same vector
MIN_CAPACITY = 1024  # slots an index starts with, and grows by at least
_MERGE = 4096  # recent digests kept in a dict before they join the sorted arrays


# odd 64-bit multipliers, one per 32-bit word of a vector (a fixed seed: digests are
# only ever compared within one process, but the same ones each run help debugging)
_MIX = np.random.default_rng(0x7477696E).integers(1, 2**63, size=4096, dtype=np.uint64) | 1


def digests(rows: np.ndarray) -> np.ndarray:
    """Each row's 64-bit digest: its float32 words times odd multipliers, summed mod
    2**64 (one vectorized pass; two rows differing in one word always differ, since
    the multiplier is odd). Not a cryptographic hash: a match is checked (``SAME``)."""
    words = np.ascontiguousarray(rows, dtype=np.float32).view(np.uint32).astype(np.uint64)
    width = words.shape[1]
    mix = _MIX[:width] if width <= len(_MIX) else np.resize(_MIX, width)
    return (words * mix).sum(axis=1, dtype=np.uint64)


class Twins:
    """The twins of the graph's nodes, and the digests of the nodes' vectors."""

    def __init__(self) -> None:
        self.of: dict[int, int] = {}  # twin -> its node
        self._twins: dict[int, list[int]] = {}  # node -> its twins, oldest first
        self._key_of: dict[int, int] = {}  # node with twins -> its digest (for an heir)
        self._keys = np.zeros(0, dtype=np.uint64)  # sorted
        self._nodes = np.zeros(0, dtype=np.int64)  # the node of each digest in _keys
        self._recent: dict[int, int] = {}  # digest -> node, not yet in the arrays
        self._loaded: list[tuple[np.ndarray, np.ndarray]] = []  # (digests, nodes) of a load

    def __len__(self) -> int:
        return len(self.of)

    # -- the digest table --------------------------------------------------------

    def load(self, keys: np.ndarray, nodes: Sequence[int]) -> None:
        """The digests of nodes read from a file, sorted in once when first needed."""
        if len(nodes):
            self._loaded.append((keys.astype(np.uint64), np.asarray(nodes, dtype=np.int64)))

    def known(self, key: int, node: int) -> None:
        """``node``'s vector has digest ``key`` (the latest node for a digest wins)."""
        at = self._at(key)
        if at is not None:
            self._nodes[at] = node
            return
        self._recent[key] = node
        if len(self._recent) >= _MERGE:
            self._merge()

    def _node(self, key: int) -> int | None:
        node = self._recent.get(key)
        if node is not None:
            return node
        at = self._at(key)
        return None if at is None else int(self._nodes[at])

    def _at(self, key: int) -> int | None:
        if self._loaded:
            self._settle()
        if not len(self._keys):
            return None
        at = int(np.searchsorted(self._keys, np.uint64(key)))
        return at if at < len(self._keys) and int(self._keys[at]) == key else None

    def _settle(self) -> None:
        """A load's digests into the sorted arrays (before any other: a load comes
        first), the later of equal digests kept."""
        keys = np.concatenate([self._keys, *(k for k, _ in self._loaded)])
        nodes = np.concatenate([self._nodes, *(n for _, n in self._loaded)])
        self._loaded = []
        order = np.argsort(keys, kind="stable")
        keys, nodes = keys[order], nodes[order]
        last = np.append(keys[1:] != keys[:-1], True) if len(keys) else np.zeros(0, bool)
        self._keys, self._nodes = keys[last], nodes[last]

    def _merge(self) -> None:
        keys = np.fromiter(self._recent.keys(), dtype=np.uint64, count=len(self._recent))
        nodes = np.fromiter(self._recent.values(), dtype=np.int64, count=len(self._recent))
        order = np.argsort(keys, kind="stable")
        keys, nodes = keys[order], nodes[order]
        at = np.searchsorted(self._keys, keys)
        self._keys = np.insert(self._keys, at, keys)
        self._nodes = np.insert(self._nodes, at, nodes)
        self._recent = {}

    # -- placing and dropping ----------------------------------------------------

    def place(
        self,
        index: hnswlib.Index,
        labels: Sequence[int],
        array: np.ndarray,
        live: Callable[[int], bool],
    ) -> list[int]:
        """Insert into ``index`` the rows whose vector it has no node for; the others
        become twins. ``live(label)``: the label is live in the index (a node only
        when it is no twin). Returns the labels inserted."""
        fresh: list[int] = []
        rows: list[int] = []
        first: dict[int, int] = {}  # digest -> row, in this batch
        keys = digests(array).tolist()
        for i, label in enumerate(labels):
            key = keys[i]
            row = first.get(key)
            if row is not None and np.array_equal(array[row], array[i]):
                self._join(label, labels[row], key)
                continue
            node = self._node(key)
            if node is not None and self._holds(index, node, array[i], live):
                self._join(label, node, key)
                continue
            first.setdefault(key, i)
            fresh.append(label)
            rows.append(i)
        if fresh:
            grow(index, len(fresh))
            index.add_items(array[rows], np.asarray(fresh, dtype=np.uint64))
            for label, i in zip(fresh, rows, strict=True):
                self.known(keys[i], label)
        return fresh

    def _holds(
        self, index: hnswlib.Index, node: int, row: np.ndarray, live: Callable[[int], bool]
    ) -> bool:
        """``node`` is a live node of ``index`` holding ``row``'s vector."""
        return live(node) and node not in self.of and _same(index, node, row)

    def _join(self, label: int, node: int, key: int) -> None:
        self.of[label] = node
        self._twins.setdefault(node, []).append(label)
        self._key_of[node] = key

    def drop(self, index: hnswlib.Index, label: int) -> int | None:
        """Take a live ``label`` out: a twin leaves its node; a node is marked deleted
        in ``index`` and its oldest twin, if any, inserted in its place. Returns the
        label marked deleted in the graph (None for a twin)."""
        node = self.of.pop(label, None)
        if node is not None:
            rest = self._twins[node]
            rest.remove(label)
            if not rest:
                del self._twins[node]
                self._key_of.pop(node, None)
            return None
        heirs = self._twins.pop(label, None)
        vector = np.asarray(index.get_items([label]), dtype=np.float32) if heirs else None
        index.mark_deleted(label)
        if heirs and vector is not None:
            heir, rest = heirs[0], heirs[1:]
            grow(index, 1)
            index.add_items(vector, np.asarray([heir], dtype=np.uint64))
            del self.of[heir]
            key = self._key_of.pop(label)
            self.known(key, heir)
            if rest:
                self._twins[heir] = rest
                self._key_of[heir] = key
                for twin in rest:
                    self.of[twin] = heir
        return label

    # -- queries -----------------------------------------------------------------

    def admits(self, allowed: Callable[[int], bool] | None) -> Callable[[int], bool] | None:
        """The node filter for a label filter: a node passes when it or a twin does."""
        if allowed is None or not self._twins:
            return allowed
        twins = self._twins
        return lambda node: allowed(node) or any(allowed(t) for t in twins.get(node, ()))

    def spread(
        self,
        hits: Iterable[tuple[int, float]],
        k: int,
        allowed: Callable[[int], bool] | None,
    ) -> list[tuple[int, float]]:
        """Node hits, best first, as label hits: each node, then its twins, at its
        similarity, the labels ``allowed`` only; the first ``k``."""
        out: list[tuple[int, float]] = []
        for node, sim in hits:
            for label in (node, *self._twins.get(node, ())):
                if allowed is None or allowed(label):
                    out.append((label, sim))
            if len(out) >= k:
                break
        return out[:k]


def nodes(live: Iterable[int], twins: Collection[int]) -> list[int]:
    """The live labels that are graph nodes (no twins), in the order given."""
    return [label for label in live if label not in twins] if twins else list(live)


def _same(index: hnswlib.Index, node: int, row: np.ndarray) -> bool:
    stored = np.asarray(index.get_items([node]), dtype=np.float32)[0]  # normalized (cosine)
    norm = float(np.linalg.norm(row))
    return norm > 0 and 1.0 - float(stored @ (row / norm)) < SAME


def grow(index: hnswlib.Index, extra: int) -> None:
    """Room for ``extra`` more: an eighth more each time, not twice as much. Once a
    vector is added, hnswlib holds ~190 bytes for each slot it has room for (its locks,
    levels, visited marks: a 50,000-vector index doubled and given 3 vectors grew by
    8.9 MB, an eighth more by 2.5): the first save after a 100,000-note daemon's start
    doubled its ~500,000 slots."""
    needed = index.get_current_count() + extra  # deleted slots still take room
    capacity = index.get_max_elements()
    if needed > capacity:
        index.resize_index(max(needed, capacity + max(capacity // 8, MIN_CAPACITY)))
