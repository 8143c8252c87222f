"""The link indexes a relink of a few moves resolves by: the files under the keys its
links look up, read from the store's link keys (``index/link_keys.py``), not a map of
every file of the vault (issue 27: a rename of one note with no daemon built two, before
and after, 2 x 0.3 s at 100,000 notes).

``relink_note`` asks its ``before`` and ``after`` indexes of a note that did not move only
the links whose last name is a moved file's (``moved_names``), and MEMORY.md's alike
(``linker._relink_in_style``); a moved note's every link. ``KeyedLinks`` is a
``LinkIndex`` of the files filed under the keys it was asked about so far: each lookup
(``resolve``, ``name_matches``, membership) first reads the files under the keys it looks
at that it has not read yet (``stored_links.wanted_keys``), so each key it looks at holds
every file the vault's index holds under it, and it answers as the vault's
(``StoredLinks``' argument). Made before the renames' transaction it reads the store as
it was (``before``) with the keys of the moved names and of the moved notes' stored
links read at once; a key asked after (a link a moved note gained since it was indexed)
reads the store with the moves undone (``Catalogue.link_index_before``'s view), as a
relink the journal finishes reads it (``journalled``).

Many moves (a folder of 500 notes, a pull) or a daemon holding the map: the map.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from memvault.core.relink import moved_names
from memvault.core.wikilinks import LinkIndex, Resolution, key
from memvault.engine.stored_links import wanted_keys
from memvault.index.link_keys import ALIAS, PATH, key_rows
from memvault.index.store import Store

RELINK_ONE_BY_ONE = 64  # moves relinked by stored lookups; more: the map of every file

Files = tuple[set[str], dict[str, tuple[str, ...]]]  # files, and their owners' aliases


def stored(store: Store) -> Callable[[set[str]], Files]:
    """The files filed under some keys as the store holds them now, with the aliases of
    those filed under one as an alias."""

    def fetch(keys: set[str]) -> Files:
        files: set[str] = set()
        owners: set[str] = set()
        for _, kind, path in store.keyed(keys) if keys else ():
            files.add(path)
            if kind == ALIAS:
                owners.add(path)
        return files, store.aliases_held(owners) if owners else {}

    return fetch


def undone(
    store: Store,
    moves: Mapping[str, str],
    came: Collection[str] = (),
    went: Collection[str] = (),
) -> Callable[[set[str]], Files]:
    """``stored``, the files of ``moves`` (old -> new, done in the store) back at their
    old paths, aliases with them (``Catalogue.link_index_before``'s view); with the
    attachments the same transaction recorded undone too (``came``: new ones, gone
    again; ``went``: gone ones, back): the store as the renames' transaction found it,
    which the map of every file a sync holding one reads "before" from."""
    back = {new: old for old, new in moves.items()}
    now = stored(store)
    gone = set(came)
    there: list[set[str]] = []  # the moves' new paths the store holds (read once)

    def fetch(keys: set[str]) -> Files:
        files, aliases = now(keys)
        files = {p for p in files if p not in back and p not in gone}
        aliases = {p: a for p, a in aliases.items() if p not in back}
        held = store.aliases_held(back)
        if not there:  # a journalled move whose file went since: nothing to put back
            there.append({p for _, kind, p in store.keyed({key(n) for n in back}) if kind == PATH})
        for new, old in back.items():
            if new not in there[0]:
                continue
            rows = key_rows(old, held.get(new, ()), 1)
            if any(k in keys for k, _, _, _ in rows):
                files.add(old)
                if new in held and any(k in keys and kind == ALIAS for k, kind, _, _ in rows):
                    aliases[old] = held[new]
        files |= {p for p in went if any(k in keys for k, _, _, _ in key_rows(p, (), 0))}
        return files, aliases

    return fetch


class KeyedLinks(LinkIndex):
    """A ``LinkIndex`` of the files under the keys asked about so far, read by ``fetch``
    (the module doc): the vault's answers for ``resolve``, ``name_matches``,
    ``link_text`` and membership, not for ``aliases_of`` of a file no alias brought."""

    def __init__(
        self,
        fetch: Callable[[set[str]], Files],
        keys: Iterable[str] = (),
        more: Iterable[str] = (),
    ) -> None:
        self._fetch = fetch
        self._asked: set[str] = set()
        self._files: set[str] = set()
        self._held: dict[str, tuple[str, ...]] = {}
        self._extra = tuple(dict.fromkeys(more))  # ``with_files``'s (no aliases)
        # attachments the renames' transaction records: (came, went) (``before_moves``)
        self.batch: tuple[Collection[str], Collection[str]] = ((), ())
        super().__init__(self._extra)
        self._cover(set(keys))

    def read_by(self, fetch: Callable[[set[str]], Files]) -> None:
        """Keys not asked yet are read by ``fetch`` from now on (the store changed)."""
        self._fetch = fetch

    def _cover(self, keys: set[str]) -> None:
        new = keys - self._asked
        if not new:
            return
        files, aliases = self._fetch(new)
        self._asked |= new
        came = files - self._files
        held = {p: a for p, a in aliases.items() if self._held.get(p) != a}
        self._files |= came
        if held:  # an alias came: built again (``with_files`` adds files without)
            self._held.update(held)
            super().__init__((*self._files, *self._extra), self._held)
        elif came:  # a key at a time, each adding a file or two (a moved note's links
            # it gained in the batch, 2,000 of them: 5.4 s rebuilt each time): added
            vars(self).update(vars(LinkIndex.with_files(self, sorted(came))))

    def resolve(self, target: str, source: str) -> Resolution:
        self._cover(wanted_keys(target, source))
        return super().resolve(target, source)

    def name_matches(self, name: str) -> list[str]:
        self._cover({key(name), key(name + ".md")})
        return super().name_matches(name)

    def __contains__(self, path: str) -> bool:
        self._cover({key(path)})
        return super().__contains__(path)

    def with_files(self, files: Iterable[str]) -> KeyedLinks:
        out = KeyedLinks(self._fetch, (), (*self._extra, *files))
        out._cover(self._asked)
        return out


def names_keys(names: Iterable[str]) -> set[str]:
    """The keys a link whose last name (``link_name``) is one of ``names`` looks up, the
    exotic ones aside (``[[folder/]]``: ``.md``), which ``KeyedLinks`` reads when asked."""
    return {k for n in names for k in (n, n + ".md")} | {".md"}


def few(moves: Mapping[str, str], passed: Sequence[tuple[str, str]], held: bool) -> bool:
    """Whether a relink of these is done by ``KeyedLinks`` (no map held, a few moves)."""
    return not held and len(moves) + len(passed) <= RELINK_ONE_BY_ONE


def before_moves(
    store: Store,
    moves: Mapping[str, str],
    passed: Sequence[tuple[str, str]],
    seen: Iterable[str] = (),
    gone: Iterable[str] = (),
) -> KeyedLinks:
    """The "before" index of a relink of ``moves``, read before the renames' transaction:
    the moved names' keys and those of the moved notes' stored links (from their old
    folder and their new one: what "after" asks) read at once. ``seen`` and ``gone``:
    the attachments the transaction records (new or changed, and gone), so a key read
    after it reads them as they were (``after_moves``)."""
    every = {**dict(passed), **moves}
    keys = names_keys(moved_names(every)) | _moved_links_keys(store, moves, done=False)
    out = KeyedLinks(stored(store), keys)
    seen = set(seen)  # those the store has not filed yet came in this batch
    known = {p for _, kind, p in store.keyed({key(p) for p in seen}) if kind == PATH}
    out.batch = (seen - known, tuple(gone))
    return out


def _moved_links_keys(store: Store, moves: Mapping[str, str], *, done: bool) -> set[str]:
    """The keys the moved notes' stored links look up from where they were and are (read
    under their new paths once the renames are ``done``): read at once, not a query and a
    new index each (a moved note of 4,000 links: 23 s, each key's files added to the
    index built again)."""
    keys: set[str] = set()
    for old, new in moves.items():
        for r in store.links(new if done else old):
            keys |= wanted_keys(r.target, old) | wanted_keys(r.target, new)
    return keys


def journalled(store: Store, moves: Mapping[str, str]) -> KeyedLinks:
    """The "before" index of a relink finished later (``relink_journal.resume``: the
    renames long done), the store read with ``moves`` undone, the moved names' keys and
    the moved notes' links' at once (``Catalogue.link_index_before``'s answers)."""
    keys = names_keys(moved_names(moves)) | _moved_links_keys(store, moves, done=True)
    return KeyedLinks(undone(store, moves), keys)


def now(store: Store, moves: Mapping[str, str] | None = None) -> KeyedLinks:
    """The index of the store as it is, read a key at a time as asked; the keys a relink
    of ``moves`` done asks (``journalled``'s) at once."""
    if not moves:
        return KeyedLinks(stored(store))
    keys = names_keys(moved_names(moves)) | _moved_links_keys(store, moves, done=True)
    return KeyedLinks(stored(store), keys)


def after_moves(store: Store, moves: Mapping[str, str], before: KeyedLinks) -> KeyedLinks:
    """The "after" index (the renames done), reading the keys ``before`` asked; ``before``
    reads any other key with the moves undone from now on."""
    before.read_by(undone(store, moves, *before.batch))
    after = KeyedLinks(stored(store))
    after._cover(before._asked)
    return after


__all__ = [
    "RELINK_ONE_BY_ONE",
    "KeyedLinks",
    "after_moves",
    "before_moves",
    "few",
    "journalled",
    "names_keys",
    "now",
]
