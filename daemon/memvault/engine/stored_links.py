"""A few links resolved by the store's indexed link keys (``index/link_keys.py``), with
``LinkIndex``'s answers, for a process that holds no link index (a `memvault add`, `log`,
a memory tool's write with no daemon): a map of every file built for one note's links
cost 0.28 s at 100,000 notes (issue 27), a lookup costs the keys a link can reach.

How: ``LinkIndex.resolve`` looks a target up under a few keys only (its path with and
without ``.md``, joined to the source's folder, its last name, the target as an alias;
``wanted_keys``). The store gives every file filed under one of them, and a
``LinkIndex`` of those files answers as the vault's does: each key it looks at holds in
it every file the vault's holds under that key (twins of one key, every file of a name,
every owner of an alias), and the files it holds besides are the vault's too, under keys
it does not look at. The same code resolves, so no rule is written twice.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from memvault.core.text import js_trim
from memvault.core.wikilinks import LinkIndex, Resolution, key
from memvault.index.link_keys import ALIAS, PATH
from memvault.index.rows import LinkRow
from memvault.index.store import Store


class LinkLookup(Protocol):
    """What the users of a link index in a sync ask of it (``LinkIndex``, ``StoredLinks``)."""

    def resolve(self, target: str, source: str) -> Resolution: ...

    def __contains__(self, path: str) -> bool: ...

    def aliases_of(self, path: str) -> tuple[str, ...]: ...


def wanted_keys(target: str, source: str) -> set[str]:
    """Every key ``LinkIndex.resolve(target, source)`` looks a file up under (as path,
    last name or alias)."""
    t = js_trim(unicodedata.normalize("NFC", target))
    if not t:
        return set()
    t = t.lstrip("/")
    variants = [t] if t.lower().endswith(".md") else [t + ".md", t]
    folder = posixpath.dirname(source)
    keys = set()
    for v in variants:
        keys.add(key(v))
        joined = posixpath.normpath(posixpath.join(folder, v))
        if not joined.startswith(".."):
            keys.add(key(joined))
        keys.add(key(v.rsplit("/", 1)[-1]))
    if "/" not in t:
        keys.add(key(t))
    return keys


class StoredLinks:
    """``LinkIndex``'s answers (``resolve``, membership, ``aliases_of``) from the store's
    link keys, for the files the store holds and ``extra`` (notes on disk not in the
    store yet, with no aliases: a sync's, about to be indexed). Reads the store as it is
    at each call."""

    def __init__(self, store: Store, extra: Iterable[str] = ()) -> None:
        self._store = store
        extra = list(dict.fromkeys(extra))
        # those the store holds already (spelt so, NFC aside: ``LinkIndex.with_files``'s)
        found = self._by_key({key(p) for p in extra})
        self._more = tuple(p for p in extra if not _spelt_among(p, found))
        self._more_by_key: dict[str, set[str]] = {}  # (twins of one key: each a file)
        for p in self._more:
            self._more_by_key.setdefault(key(p), set()).add(p)

    def _by_key(self, keys: set[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for k, kind, path in self._store.keyed(keys) if keys else ():
            if kind == PATH:
                out.setdefault(k, set()).add(path)
        return out

    def index_for(self, pairs: Iterable[tuple[str, str]]) -> LinkIndex:
        """A ``LinkIndex`` answering ``resolve`` as the vault's for each (target, source)
        of ``pairs`` (one query for them all); not for other targets."""
        keys: set[str] = set()
        for target, source in pairs:
            keys |= wanted_keys(target, source)
        files: set[str] = set(self._more)
        owners: set[str] = set()  # of an alias under one of ``keys``
        for _, kind, path in self._store.keyed(keys) if keys else ():
            files.add(path)
            if kind == ALIAS:
                owners.add(path)
        # their aliases as written (``LinkIndex`` keys them): a key is not always its own
        return LinkIndex(files, self._store.aliases_held(owners) if owners else {})

    def resolve(self, target: str, source: str) -> Resolution:
        """Where a link written in ``source`` leads (``LinkIndex.resolve``)."""
        return self.index_for([(target, source)]).resolve(target, source)

    def __contains__(self, path: str) -> bool:
        """``LinkIndex.__contains__``: whether ``path``, spelt so (NFC aside), is a file."""
        if _spelt_among(path, self._more_by_key):
            return True
        return _spelt_among(path, self._by_key({key(path)}))

    def aliases_of(self, path: str) -> tuple[str, ...]:
        """The aliases of the note at ``path`` as its row holds them (none: ``()``)."""
        return self._store.aliases_held([path]).get(path, ())

    def targets_of(self, source: str) -> set[str]:
        """The targets of the links ``source`` holds as indexed."""
        return {r.target for r in self._store.links(source)}

    def with_files(self, files: Iterable[str]) -> StoredLinks:
        """These answers with ``files`` (no aliases) among the files (``LinkIndex``'s)."""
        return StoredLinks(self._store, (*self._more, *files))


def answering(links: LinkLookup, pairs: Iterable[tuple[str, str]]) -> LinkLookup:
    """What resolves these (target, source) ``pairs``: ``StoredLinks``' index of them all
    (one query, not one a link: a round trip each on PostgreSQL), else ``links``."""
    return links.index_for(pairs) if isinstance(links, StoredLinks) else links


def leads(links: LinkLookup, rows: Sequence[LinkRow]) -> Iterator[tuple[LinkRow, Resolution]]:
    """Each of these link rows (a note's, as stored) with where it leads now, looked up
    together (``answering``)."""
    ask = answering(links, [(r.target, r.source) for r in rows])
    for r in rows:
        yield r, ask.resolve(r.target, r.source)


def resolver_of(links: LinkLookup, source: str) -> Callable[[str], str | None]:
    """``target -> path`` for links written in ``source`` (aliases count; None if not),
    each target asked once (MEMORY.md's lines are read twice). ``StoredLinks`` looks up
    the links ``source`` holds as indexed at once (one query, not one a link: a round
    trip each on PostgreSQL); another target, alone."""
    seen: dict[str, str | None] = {}
    ahead: LinkIndex | None = None
    asked: set[str] = set()
    if isinstance(links, StoredLinks) and (asked := links.targets_of(source)):
        ahead = links.index_for((t, source) for t in asked)

    def resolve(target: str) -> str | None:
        if target not in seen:
            on = ahead if ahead is not None and target in asked else links
            res = on.resolve(target, source)
            seen[target] = res.path if res.verdict in ("resolved", "alias") else None
        return seen[target]

    return resolve


def _spelt_among(path: str, by_key: dict[str, set[str]]) -> bool:
    nfc = unicodedata.normalize("NFC", path)
    return any(unicodedata.normalize("NFC", p) == nfc for p in by_key.get(key(path), ()))


__all__ = ["LinkLookup", "StoredLinks", "answering", "leads", "resolver_of", "wanted_keys"]
