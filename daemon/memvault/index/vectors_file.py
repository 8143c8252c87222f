"""vectors.bin's bytes: hnswlib 0.8's saved index, checked before hnswlib sees it, and
the graph form memvault keeps on disk (the graph without the vectors cache.db holds).

hnswlib's file (``saveIndex``): a header (``HEADER``), one level-0 record per element
(its link count and flags, its links, its vector as float32, its label), then each
element's upper-level link lists. The vector is ~90 % of a record with the real model
(1,536 of ~1,690 bytes at 384 dimensions), and it is the chunk's cached vector again:
cache.db keeps every live chunk's vector (int8), which is what a damaged vectors.bin
is rebuilt from. So the file memvault writes is the **graph form**:

- the same header, with ``label_offset == data_offset`` (records without a vector)
  and ``size_data_per_element`` to match;
- each level-0 record without its vector; the upper levels as hnswlib wrote them;
- the vectors of the elements marked deleted, in element order (a deleted chunk's
  vector may be gone from the cache, yet the graph still walks through it);
- a footer: the dimension (uint32) and ``GRAPH_MAGIC``.

Loading puts each live element's vector back (``full_file``) from the cache, normalized
as hnswlib normalizes it (float32, summed in order: the same bits it stored, since the
index only ever holds float16-exact vectors: ``vectors._checked``), into a full hnswlib
file handed to ``load_index``. A full file (what memvault wrote before) still loads.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO, NamedTuple

import numpy as np

from memvault.errors import IndexCorrupt

# hnswlib 0.8 HierarchicalNSW::saveIndex header: offsetLevel0, max_elements,
# cur_element_count, size_data_per_element, label_offset, offsetData (size_t),
# maxlevel (int), enterpoint_node (uint32), maxM, maxM0, M (size_t),
# mult (double), ef_construction (size_t).
HEADER = struct.Struct("<QQQQQQiIQQQdQ")
FOOTER = struct.Struct("<I4s")  # the graph form's: dimension, magic
GRAPH_MAGIC = b"MVG1"
_DELETE_MARK = 0x01  # bit of the third byte of an element's level-0 link header
_STEP = 4096  # records converted per step (bounded memory at any size)
_COPY = 1 << 20


@dataclass(frozen=True, slots=True)
class IndexFileInfo:
    """What ``inspect_index_file`` read from a saved index."""

    labels: np.ndarray  # uint64, one per element
    deleted: np.ndarray  # bool, one per element
    m: int
    graph_only: bool = False  # the graph form: the live elements' vectors are not in it


class _Header(NamedTuple):
    offset_level0: int
    max_elements: int
    elements: int
    per_element: int
    label_offset: int
    data_offset: int
    max_level: int
    entry: int
    max_m: int
    max_m0: int
    m: int
    mult: float
    ef_construction: int


def inspect_index_file(data: bytes, dim: int) -> IndexFileInfo:
    """Check a saved index (hnswlib 0.8's file, or memvault's graph form; cosine/ip,
    float32) without loading it.

    Raises IndexCorrupt with the reason when it is not a well-formed index of
    ``dim``-dimensional vectors: every size must agree with the file length,
    and every graph link must name an element that exists at that level
    (hnswlib follows links unchecked: a bad one is a segfault, not an error).
    """
    if len(data) < HEADER.size:
        raise IndexCorrupt(f"vectors file too short ({len(data)} bytes)")
    h = _Header._make(HEADER.unpack_from(data))
    if h.offset_level0 != 0 or not 2 <= h.m <= 4096 or (h.max_m, h.max_m0) != (h.m, 2 * h.m):
        raise IndexCorrupt("vectors file header is not an hnswlib 0.8 index")
    graph = h.label_offset == h.data_offset
    end = len(data)
    if graph:
        if end < FOOTER.size or data[-4:] != GRAPH_MAGIC:
            raise IndexCorrupt("vectors file has no graph footer")
        if FOOTER.unpack_from(data, end - FOOTER.size)[0] != dim:
            raise IndexCorrupt(f"vectors file does not hold {dim}-dimensional float32 vectors")
        end -= FOOTER.size
    if h.data_offset != h.max_m0 * 4 + 4 or (
        not graph and h.label_offset != h.data_offset + dim * 4
    ):
        raise IndexCorrupt(f"vectors file does not hold {dim}-dimensional float32 vectors")
    if h.per_element != h.label_offset + 8 or h.elements > h.max_elements:
        raise IndexCorrupt("vectors file header sizes are inconsistent")
    level0_end = HEADER.size + h.elements * h.per_element
    if level0_end + 4 * h.elements > end:
        raise IndexCorrupt(f"vectors file truncated ({len(data)} bytes for {h.elements} vectors)")
    if h.elements and (h.entry >= h.elements or not 0 <= h.max_level < 64):
        raise IndexCorrupt("vectors file entry point out of range")
    level0 = np.frombuffer(data, np.uint8, h.elements * h.per_element, HEADER.size)
    level0 = level0.reshape(h.elements, h.per_element)
    sizes = level0[:, 0:2].copy().view("<u2").ravel()
    links = level0[:, 4 : h.data_offset].copy().view("<u4")
    used = np.arange(h.max_m0)[None, :] < sizes[:, None]
    if (sizes > h.max_m0).any() or (links[used] >= h.elements).any():
        raise IndexCorrupt("vectors file graph links out of range")
    labels = level0[:, h.label_offset : h.per_element].copy().view("<u8").ravel()
    if len(np.unique(labels)) != h.elements:
        raise IndexCorrupt("vectors file holds duplicate labels")
    deleted = (level0[:, 2] & _DELETE_MARK).astype(bool)
    if graph:
        end -= int(deleted.sum()) * dim * 4  # the deleted elements' vectors
    _check_upper_levels(data, level0_end, end, h)
    return IndexFileInfo(labels=labels, deleted=deleted, m=h.m, graph_only=graph)


def _check_upper_levels(data: bytes, pos: int, end: int, h: _Header) -> None:
    per_level = h.max_m * 4 + 4
    levels = [0] * h.elements
    lists: list[tuple[int, int]] = []  # (element, offset of its level-1 list)
    for element in range(h.elements):
        if pos + 4 > end:
            raise IndexCorrupt("vectors file truncated in the upper graph levels")
        (size,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if size % per_level or size // per_level > h.max_level or pos + size > end:
            raise IndexCorrupt("vectors file upper graph levels are inconsistent")
        if size:
            levels[element] = size // per_level
            lists.append((element, pos))
        pos += size
    if pos != end:
        raise IndexCorrupt("vectors file has trailing bytes")
    if h.elements and levels[h.entry] != h.max_level:
        raise IndexCorrupt("vectors file entry point is not on the top level")
    for element, offset in lists:
        for level in range(1, levels[element] + 1):
            start = offset + (level - 1) * per_level
            (n,) = struct.unpack_from("<H", data, start)
            if n > h.max_m:
                raise IndexCorrupt("vectors file graph links out of range")
            for target in struct.unpack_from(f"<{n}I", data, start + 4):
                if target >= h.elements or levels[target] < level:
                    raise IndexCorrupt("vectors file graph links out of range")


def normalized(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as hnswlib's cosine space does before it stores them
    (``normalize_vector``: the squares summed in order in float32, times 1 / (sqrt + 1e-30))."""
    array = np.asarray(vectors, dtype=np.float32)
    if not len(array):
        return array.reshape(0, array.shape[-1] if array.ndim == 2 else 0)
    sums = np.cumsum(array * array, axis=1, dtype=np.float32)[:, -1]
    scale = np.float32(1.0) / (np.sqrt(sums) + np.float32(1e-30))
    return array * scale[:, None]


def write_graph(full: BinaryIO, out: BinaryIO, dim: int, size: int) -> None:
    """hnswlib's saved file (``full``, ``size`` bytes) as the graph form, into ``out``."""
    head = full.read(HEADER.size)
    h = _Header._make(HEADER.unpack_from(head))
    vec = dim * 4
    if h.label_offset != h.data_offset + vec or h.per_element != h.label_offset + 8:
        raise ValueError("not an hnswlib file of this dimension")
    out.write(_header(h, h.data_offset, h.data_offset + 8))
    deleted: list[bytes] = []
    for start in range(0, h.elements, _STEP):
        n = min(_STEP, h.elements - start)
        rows = np.frombuffer(full.read(n * h.per_element), np.uint8).reshape(n, h.per_element)
        out.write(np.hstack((rows[:, : h.data_offset], rows[:, h.label_offset :])).tobytes())
        for i in np.flatnonzero(rows[:, 2] & _DELETE_MARK):
            deleted.append(rows[i, h.data_offset : h.label_offset].tobytes())
    rest = size - HEADER.size - h.elements * h.per_element
    while rest > 0:
        block = full.read(min(_COPY, rest))
        if not block:
            raise ValueError("hnswlib's file ended early")
        out.write(block)
        rest -= len(block)
    for block in deleted:
        out.write(block)
    out.write(FOOTER.pack(dim, GRAPH_MAGIC))


def write_full(
    graph: bytes,
    info: IndexFileInfo,
    dim: int,
    vectors_of: Callable[[Sequence[int]], np.ndarray],
    out: BinaryIO,
) -> None:
    """The graph form (checked: ``inspect_index_file``) as hnswlib's file, into ``out``:
    each live element's vector is ``vectors_of(labels)`` (rows for those labels, already
    float16-exact: ``vectors._checked``), normalized; a deleted element's is the one kept in the file."""
    h = _Header._make(HEADER.unpack_from(graph))
    vec = dim * 4
    per = h.data_offset + vec + 8
    out.write(_header(h, h.data_offset + vec, per))
    kept = iter(_deleted_vectors(graph, info, dim))
    for start in range(0, len(info.labels), _STEP):
        stop = min(start + _STEP, len(info.labels))
        rows = np.frombuffer(
            graph, np.uint8, (stop - start) * h.per_element, HEADER.size + start * h.per_element
        ).reshape(stop - start, h.per_element)
        full = np.zeros((stop - start, per), np.uint8)
        full[:, : h.data_offset] = rows[:, : h.data_offset]
        full[:, h.data_offset + vec :] = rows[:, h.data_offset :]
        data = np.zeros((stop - start, dim), np.float32)
        live = np.flatnonzero(~info.deleted[start:stop])
        if len(live):
            data[live] = normalized(vectors_of([int(x) for x in info.labels[start + live]]))
        for i in np.flatnonzero(info.deleted[start:stop]):
            data[i] = next(kept)
        full[:, h.data_offset : h.data_offset + vec] = data.view(np.uint8)
        out.write(full.tobytes())
    level0_end = HEADER.size + len(info.labels) * h.per_element
    out.write(graph[level0_end : len(graph) - FOOTER.size - int(info.deleted.sum()) * vec])


def _deleted_vectors(graph: bytes, info: IndexFileInfo, dim: int) -> Iterable[np.ndarray]:
    count = int(info.deleted.sum())
    start = len(graph) - FOOTER.size - count * dim * 4
    block = np.frombuffer(graph, "<f4", count * dim, start).reshape(count, dim)
    return iter(block.astype(np.float32))


def _header(h: _Header, label_offset: int, per_element: int) -> bytes:
    return HEADER.pack(*h._replace(label_offset=label_offset, per_element=per_element))


__all__ = [
    "FOOTER",
    "GRAPH_MAGIC",
    "HEADER",
    "IndexFileInfo",
    "inspect_index_file",
    "normalized",
    "write_full",
    "write_graph",
]
