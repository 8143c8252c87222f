"""The name Claude Code gives a project's folder under ``~/.claude/projects/``.

Claude Code keeps a project's auto memory, when no ``autoMemoryDirectory`` names a
folder, in ``~/.claude/projects/<name>/memory/``, ``<name>`` made from the project's
path: each UTF-16 code unit not an ASCII letter or digit a dash (a character past
U+FFFF, an emoji, is two), and past 200 characters the first 200, a dash and a hash of
the whole path (JavaScript's ``(h << 5) - h + code unit`` on 32 bits, its absolute
value in base 36). Read from Claude Code's CLI bundle (it is not documented): the same
in the native builds of 2.1.223 and 2.1.224 (``Gw``, run in node on long paths:
tests/test_cli_connect.py). What 2.1.224 changed is how it lists a project's session
folders past 200 characters (of the folders sharing the first 200, only those where a
transcript was of this path), not the name of the folder its auto memory is in.
"""

from __future__ import annotations

_LONGEST = 200
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def project_dir_name(path: str) -> str:
    """The folder name under ``~/.claude/projects/`` of the project at ``path``."""
    units = _utf16_units(path)
    name = "".join(chr(u) if _ascii_alnum(u) else "-" for u in units)
    if len(name) <= _LONGEST:
        return name
    h = 0
    for u in units:
        h = ((h << 5) - h + u) & 0xFFFFFFFF  # JavaScript's `| 0`: 32 bits, signed
    if h >= 1 << 31:
        h -= 1 << 32
    return f"{name[:_LONGEST]}-{_base36(abs(h))}"


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _ascii_alnum(unit: int) -> bool:
    return 48 <= unit <= 57 or 65 <= unit <= 90 or 97 <= unit <= 122


def _base36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _DIGITS[r] + out
        if not n:
            return out
