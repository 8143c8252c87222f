"""Text helpers shared by the core: decoding, line splitting, hashing.

Only ``\\n`` and ``\\r\\n`` end a line (never a lone ``\\r`` or the Unicode
separators ``str.splitlines`` honours), so line numbers agree with editors and
with git, and a file's own line endings can be kept byte for byte.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Decoded:
    """A file's text with its byte-order mark set aside."""

    text: str
    bom: bool


class NotText(ValueError):
    """The bytes are not UTF-8 text (binary, or another encoding)."""


def decode(data: bytes) -> Decoded:
    """Decode UTF-8 bytes, setting a BOM aside; raise NotText for anything else."""
    if b"\x00" in data[:8192]:
        raise NotText("binary file (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if text.startswith(BOM):
        return Decoded(text[1:], True)
    return Decoded(text, False)


def encode(decoded: Decoded) -> bytes:
    return ((BOM if decoded.bom else "") + decoded.text).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines without their endings (``\\n`` or ``\\r\\n``)."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def lines_with_ends(text: str) -> list[str]:
    """Lines with their endings kept, so ``"".join(result) == text``."""
    out: list[str] = []
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            if start < len(text):
                out.append(text[start:])
            return out
        out.append(text[start : end + 1])
        start = end + 1


def newline_of(text: str) -> str:
    """The file's dominant line ending, for lines the system adds."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
