"""Vault-relative paths from outside: validated, cleaned, joined without leaving the vault.

Every path that comes from outside (a CLI argument, an HTTP request, an MCP
tool call, a link) reaches the disk through ``safe_join``; ``normalize_rel``
refuses traversal, absolute and Windows forms, hidden folders, names the
kernel would refuse as too long (ENAMETOOLONG) and names that are not UTF-8.
Names read from the disk that are not UTF-8 are shown with ``display_path``.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
import urllib.parse
from pathlib import Path

from memvault.core.wikilinks import key
from memvault.errors import UnsafePath

_WINDOWS_ABS = re.compile(r"^(?:[A-Za-z]:|\\\\|//)")
# Longer names make the kernel answer ENAMETOOLONG: refuse them as bad paths up front.
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4000
PATH_MAX = 4096  # Linux's limit for a whole path, the vault's folder included
NOT_UTF8 = "the name is not valid UTF-8 (rename it to have it indexed)"


def normalize_rel(rel: str) -> str:
    """Validate a vault-relative path from outside and return its clean posix form.

    Refuses absolute paths, ``..``, NUL, backslashes, Windows drive and UNC
    forms, percent-encoded escapes and hidden (dot) folders such as
    ``.memvault`` or ``.git``.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise UnsafePath("empty path")
    for form in {rel, urllib.parse.unquote(rel)}:
        if "\x00" in form:
            raise UnsafePath("path contains a NUL byte")
        if "\\" in form:
            raise UnsafePath(f"backslashes are not allowed in vault paths: {rel!r}")
        if form.startswith("/") or _WINDOWS_ABS.match(form):
            raise UnsafePath(f"absolute paths are not allowed: {rel!r}")
        parts = form.split("/")
        if any(p == ".." for p in parts):
            raise UnsafePath(f"'..' is not allowed in vault paths: {rel!r}")
        if any(p.startswith(".") and p != "." for p in parts):
            raise UnsafePath(f"hidden files and folders are not reachable: {rel!r}")
    if urllib.parse.unquote(rel) != rel and re.search(r"%(?:2e|2f|5c|00)", rel, re.IGNORECASE):
        raise UnsafePath(f"percent-encoded path separators are not allowed: {rel!r}")
    if not is_utf8(rel):
        raise UnsafePath(f"the path is not valid UTF-8: {display_path(rel)!r}")
    clean = _clean(rel)
    if len(clean.encode("utf-8")) > MAX_PATH_BYTES:
        raise UnsafePath(f"the path is too long ({len(clean)} characters): {clean[:60]!r}...")
    for part in clean.split("/"):
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise UnsafePath(
                f"a file or folder name is too long ({len(part.encode('utf-8'))} bytes; "
                f"at most {MAX_NAME_BYTES}): {part[:60]!r}..."
            )
    return unicodedata.normalize("NFC", clean)


def is_note(rel: str) -> bool:
    """Whether memvault reads this file as a note: ``.md``, in lower case, as Obsidian
    does (a file's ``TFile.extension`` is compared with ``"md"`` as the name spells it:
    ``NOTE.MD`` is no note there, docs/VAULT.md); every other file in the vault is an
    attachment: linked, not indexed."""
    return rel.endswith(".md")


def not_a_note_for_obsidian(rel: str, *, beside: bool = False) -> str | None:
    """Why a file named as a note but for its case (``NOTE.MD``, ``a.Md``) is not
    indexed, for ``status`` to list until it is renamed; None for any other name.
    ``beside``: a note of the name in lower case is there too (``NOTE.md``, on a disk
    that tells case), which ``mv NOTE.MD NOTE.md`` would replace: another name is said."""
    if rel[-3:].lower() != ".md" or rel.endswith(".md") or "/" in rel[-3:]:
        return None
    name = rel.rsplit("/", 1)[-1]
    stem = name[:-3]
    to = (
        f"{stem}.md beside it is another note, which a rename onto it would replace: "
        f"give it another name, {stem} 2.md,"
        if beside
        else f"rename it {stem}.md"
    )
    return (
        f"not a note: Obsidian reads only .md in lower case as a note, and this is "
        f".{name[-2:]} ({to} to have it indexed)"
    )


def note_beside(
    path: str,
    listed: dict[str, set[str]] | None = None,
    forms: dict[str, dict[str, str]] | None = None,
) -> bool:
    """Whether a note of ``path``'s name in lower-case ``.md`` is beside it (``Plan.md``
    beside ``Plan.MD``: ``not_a_note_for_obsidian``'s ``beside``), as its folder lists
    it: on a disk that folds case the look-up of ``Plan.md`` opens ``Plan.MD`` itself,
    and status told the person to give it another name than the one it should have.
    ``listed``, ``forms``: a scan's or a sync's (``listed_spelling``'s), each folder
    listed once: a folder of 10,000 ``Fact.MD`` files on exFAT was listed once a file
    (its scan took 45 s, not 2 s)."""
    other = path[:-3] + ".md"
    if not os.path.lexists(other):
        return False
    folder, name = os.path.split(other)
    names = folder_names({} if listed is None else listed, folder)
    if names is None or name in names:
        return True
    forms = {} if forms is None else forms
    by = forms.get(folder)
    if by is None:
        by = forms[folder] = _forms(names)
    return unicodedata.normalize("NFC", name) in by  # (its NFC form: a Mac's name)


def is_utf8(name: str) -> bool:
    """Whether a name read from the disk is valid UTF-8 (Python keeps invalid bytes as
    lone surrogates, which SQLite, JSON and terminals refuse)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_path(name: str) -> str:
    """A name that can be printed and stored whatever its bytes: invalid UTF-8 bytes
    are shown as ``\\xff`` escapes."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that did not come from the disk
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _clean(rel: str) -> str:
    clean = "/".join(p for p in rel.split("/") if p not in ("", "."))
    if not clean.strip():
        raise UnsafePath(f"not a file path: {rel!r}")
    return clean


def disk_spelling(root: str, rel: str, *, fresh: bool = False) -> str:
    """``rel`` as spelt on disk when it, or a folder of it, is there only in another
    Unicode form (a name a Mac wrote, decomposed: NFD): a note asked for or written
    there is that file, or goes into that folder, not a twin of the same look beside
    it. A name that is there as spelt, is not there in any form, or is there in two
    other forms is kept as given. ``fresh``: a folder's listing kept while its mtime is
    unchanged is not taken on trust (``_other_forms``), for a disk that folds case:
    exFAT through FUSE leaves a folder's mtime as it was when a name in it is renamed."""
    if rel.isascii() or os.path.lexists(os.path.join(root, rel)):
        return rel  # (ASCII has one form: no stat for it)
    here, parts = root, rel.split("/")
    for i, part in enumerate(parts):
        if not os.path.lexists(os.path.join(here, part)):
            want = unicodedata.normalize("NFC", part)
            if want == unicodedata.normalize("NFD", part):
                break  # a name of one form only (most CJK, Cyrillic, Arabic): no twin
            found = _other_forms(here, part, want, fresh)
            if len(found) != 1:
                break
            parts[i] = found[0]
        here = os.path.join(here, parts[i])
    return "/".join(parts)


def disk_spellings(root: str, rel: str) -> list[str]:
    """Every path on disk that ``rel`` names in some Unicode form: ``[rel]`` itself when
    none is (or it is ASCII). One only, but on a disk that keeps the forms apart (ext4)
    ``Décisions/`` in NFC and in NFD are two folders whose notes have the same keys: a
    scan of the one name walks both, as a scan of the vault does (a scan of one alone
    took the other's notes for deleted)."""
    if rel.isascii():
        return [rel]
    found = [""]
    for part in rel.split("/"):
        want = unicodedata.normalize("NFC", part)
        nxt = []
        for base in found:
            here = os.path.join(root, base)
            names = [part] if os.path.lexists(os.path.join(here, part)) else []
            if want != unicodedata.normalize("NFD", part):  # a name of two forms
                names += [n for n in _other_forms(here, part, want, False) if n not in names]
            nxt += [f"{base}/{n}" if base else n for n in names]
        if not nxt:
            return [rel]  # not there in any form: as given
        found = nxt
    return found


def case_spelling(root: str, rel: str, *, folds: bool = False) -> str | None:
    """``rel`` as the vault spells it where a folder or the file it names is there only
    in another case (``people/ana.md``: ``People/Ana.md``), as far as its parts are
    there (``people/bob.md``: ``People/bob.md``); None when none is. Compared as
    Obsidian compares link paths (``wikilinks.key``; ``spelt_in``); a Mac's or Windows'
    disk takes the two for one name too. A listing of each folder not there as spelt:
    call it for a path not there — or, on a disk that folds case (``folds``: there every
    spelling is there), a listing of each folder of it."""
    here, parts = root, rel.split("/")
    for i, part in enumerate(parts):
        if folds or not os.path.lexists(os.path.join(here, part)):
            found = spelt_in(here, part)
            if found is None:
                break
            parts[i] = found
        here = os.path.join(here, parts[i])
    spelt = "/".join(parts)
    nfc = unicodedata.normalize
    return spelt if nfc("NFC", spelt) != nfc("NFC", rel) else None


def is_dir_entry(entry: os.DirEntry[str]) -> bool:
    """A folder (or a symlink to one); an entry that cannot be looked at (a symlink in
    a loop beside the folders) is none, and never hides the folders beside it: its error
    failed the listing, and ``People/`` was then not there for ``people``."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def spelt_in(folder: str, name: str, *, dirs: bool = False) -> str | None:
    """The entry of ``folder`` (a folder only, with ``dirs``) that ``name`` names, as
    the disk spells it: the one spelt so in NFC, else of those whose names differ from
    it only in case (Obsidian's link key, ``wikilinks.key``), the first in code-point
    order (two only on a disk that keeps case apart, ext4); a dot-name only as spelt.
    None when none is, or the folder cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if not dirs or is_dir_entry(e))
    except OSError:
        return None
    nfc = unicodedata.normalize
    want = nfc("NFC", name)
    same = [n for n in names if nfc("NFC", n) == want]
    if not same:
        want = key(name)
        same = [n for n in names if not n.startswith(".") and key(n) == want]
    return same[0] if same else None


def _other_forms(folder: str, part: str, want: str, fresh: bool) -> list[str]:
    """The names in ``folder`` of ``want``'s NFC form other than ``part`` (not there):
    the composed one is a stat away, the decomposed ones are listed (``_decomposed``).
    ``fresh``: the listing kept may be older than a rename in the folder (exFAT's mtime
    stays as it was: a note renamed ``Café.md`` in NFD was not found, and one made in
    NFC beside it was a twin of the same look), so each name it gives is looked at
    again and the name's NFD form (a Mac's) is looked for: a stat each, not a listing
    for each name a batch asks."""
    composed = want != part and os.path.lexists(os.path.join(folder, want))
    found = ([want] if composed else []) + _decomposed(folder).get(want, [])
    if fresh:
        found = [n for n in found if n == want or os.path.lexists(os.path.join(folder, n))]
        nfd = unicodedata.normalize("NFD", want)
        if nfd != part and nfd not in found and os.path.lexists(os.path.join(folder, nfd)):
            found.append(nfd)
    return found


def _decomposed(folder: str) -> dict[str, list[str]]:
    """The names in ``folder`` not in NFC (a Mac's), by their NFC form: read once while
    the folder is unchanged (its inode and mtime), so a batch of a thousand deleted or
    renamed notes in a folder of 50,000 lists it once, not a thousand times."""
    try:
        st = os.stat(folder)
    except OSError:
        return {}  # a folder not there: nothing below it is
    return _decomposed_at(folder, st.st_ino, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _decomposed_at(folder: str, _ino: int, _mtime_ns: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if not name.isascii() and (nfc := unicodedata.normalize("NFC", name)) != name:
            out.setdefault(nfc, []).append(name)
    return out


def safe_join(root: Path, rel: str, real_root: str | None = None) -> Path:
    """``root / rel``, refusing anything that leaves the vault (symlinks included).
    ``real_root``: ``os.path.realpath(root)``, when the caller knows it (a vault open
    for a while: ``VaultFS``); the path's own realpath is taken each time."""
    normalize_rel(rel)  # validates
    clean = _clean(rel)  # joined as given: the name on disk may be NFD
    real_root = os.path.realpath(root) if real_root is None else real_root
    candidate = os.path.join(real_root, *clean.split("/"))
    if len(os.fsencode(candidate)) >= PATH_MAX:
        raise UnsafePath(f"the path is too long for this system: {clean[:60]!r}...")
    real = os.path.realpath(candidate)
    if os.path.commonpath([real_root, real]) != real_root:
        raise UnsafePath(f"{rel!r} leads outside the vault")
    return Path(candidate)


def glob_regex(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """gitignore-like globs: ``**`` crosses folders, a pattern without ``/``
    matches a name anywhere, a trailing ``/`` means the folder and below; ``*`` and
    ``?`` stop at a ``/``; ``[`` and ``]`` are themselves (no character classes); a
    backslash makes the character after it itself, as in gitignore (``\\*``: a ``*``;
    ``glob_literal`` writes a name so; a vault path holds no backslash). Case
    matters as it does on the vault's filesystem (``ignore_case`` on a disk that
    folds case, as macOS and Windows do): on Linux ``archive/**`` is memvault's
    ``archive/``, not a person's ``Archive/``."""
    pat = pattern.strip().lstrip("/")
    anywhere = "/" not in pat.rstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "\\" and i + 1 < len(pat):  # the next character as itself
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    prefix = "(?:.*/)?" if anywhere else ""
    return re.compile(f"^{prefix}{body}(?:/.*)?$", re.IGNORECASE if ignore_case else 0)


def glob_literal(name: str) -> str:
    """``name`` as a ``glob_regex`` pattern matching exactly it: its ``*``, ``?`` and
    backslashes escaped (a Templater folder named ``Drafts*`` ignored without
    ``Drafts-2024/``)."""
    return re.sub(r"([\\*?])", r"\\\1", name)


def folds_case(root: Path) -> bool:
    """Whether the filesystem holding ``root`` takes ``A`` and ``a`` for one name
    (APFS and NTFS by default, exFAT; not ext4): a name with letters, looked up in the
    other case, is there, yet its folder lists it only as spelt. (Not ``samefile``:
    exFAT through FUSE gives each spelling its own inode number.) False when nothing
    there has a letter to try."""
    for folder, name in (
        *((root, n) for n in (".memvault", ".obsidian", "MEMORY.md")),
        (root.parent, root.name),
    ):
        if name.swapcase() == name or not (folder / name).exists():
            continue
        try:
            return (folder / name.swapcase()).exists() and name.swapcase() not in os.listdir(folder)
        except OSError:
            return False
    return False


def spelt_as_on_disk(root: str, rel: str, listed: dict[str, set[str]] | None = None) -> bool:
    """Whether each name of ``rel`` is spelt as its folder lists it (Unicode form
    aside): on a disk that folds case (``folds_case``) ``people/Ana.md`` opens
    ``People/ana.md``, and only a listing tells the two apart. A listing of each folder
    of ``rel``, kept in ``listed`` (a batch's paths list a folder once: 3,000 notes of
    one folder cost 2.7 s listed for each)."""
    listed = {} if listed is None else listed
    here = root
    for part in rel.split("/"):
        names = folder_names(listed, here)
        if names is None or not named_in(names, part):
            return False
        here = os.path.join(here, part)
    return True


def named_in(names: set[str], name: str) -> bool:
    """Whether a folder listing ``names`` has ``name`` as spelt (Unicode form aside)."""
    if name in names:
        return True
    want = unicodedata.normalize("NFC", name)
    return any(unicodedata.normalize("NFC", n) == want for n in names)


def folder_names(listed: dict[str, set[str]], folder: str) -> set[str] | None:
    """``folder``'s names, listed once and kept in ``listed``; None when it cannot be."""
    names = listed.get(folder)
    if names is None:
        try:
            names = listed[folder] = set(os.listdir(folder))
        except OSError:
            return None
    return names


def listed_spelling(
    root: str, rel: str, listed: dict[str, set[str]], forms: dict[str, dict[str, str]]
) -> str | None:
    """``rel`` as its folders list it: each name as spelt (Unicode form aside), else
    the first listed that differs from it only in case (``spelt_in``); None when a name
    is in none. Each folder listed once (``listed``), its names by their NFC form and
    by their ``key`` once (``forms``): a batch of 3,000 deleted notes of one folder
    looks each up, never compares it with the 3,000 names left."""
    here, parts = root, rel.split("/")
    for i, part in enumerate(parts):
        names = folder_names(listed, here)
        if names is None:
            return None
        if part not in names:
            by = forms.get(here)
            if by is None:
                by = forms[here] = _forms(names)
            found = by.get(unicodedata.normalize("NFC", part)) or by.get("/" + key(part))
            if found is None:
                return None
            parts[i] = found
        here = os.path.join(here, parts[i])
    return "/".join(parts)


def _forms(names: set[str]) -> dict[str, str]:
    """A folder's names by their NFC form, and (a "/" before it: no name has one) by
    their link key, the first in code-point order; a dot-name only as spelt."""
    by: dict[str, str] = {}
    for n in sorted(names):
        by.setdefault(unicodedata.normalize("NFC", n), n)
        if not n.startswith("."):
            by.setdefault("/" + key(n), n)
    return by


__all__ = [
    "MAX_NAME_BYTES",
    "NOT_UTF8",
    "PATH_MAX",
    "case_spelling",
    "display_path",
    "folder_names",
    "folds_case",
    "glob_literal",
    "glob_regex",
    "is_dir_entry",
    "is_utf8",
    "listed_spelling",
    "named_in",
    "normalize_rel",
    "note_beside",
    "safe_join",
    "spelt_as_on_disk",
    "spelt_in",
]
