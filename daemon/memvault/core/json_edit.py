"""Edit one key of a JSON settings file as text: every other byte stays as it was.

``memvault connect`` adds a key to a client's settings (Claude Code's
``.claude/settings.local.json``, ``.mcp.json``, Claude Desktop's config), files a
person also edits. Loading and dumping them would re-indent, re-escape and re-order
what is theirs; here the object's members are located in the text and only the
span of the key set or removed is rewritten: a new member goes after the last one,
indented like its siblings, and removing it again gives back the original bytes.
Pure: text in, text out; ``JsonEditError`` (with the line) for a file that is not a
JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_WS = " \t\r\n"


class JsonEditError(ValueError):
    """The text is not JSON (the message says at which line), or not an object where
    a key must go."""


@dataclass(frozen=True, slots=True)
class _Member:
    key: str
    start: int  # the key's opening quote
    value_start: int
    value_end: int


@dataclass(frozen=True, slots=True)
class _Object:
    open: int  # "{"
    close: int  # "}"
    members: tuple[_Member, ...]


def check(text: str, name: str) -> Any:
    """The decoded JSON, or ``JsonEditError`` naming the line and column."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonEditError(
            f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def get(text: str, path: Sequence[str], name: str = "the text") -> Any:
    """The value at ``path`` (None when a key is missing); ``name``: the file, for the
    error when the text is not JSON."""
    value: Any = check(text, name)
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def set_key(text: str, path: Sequence[str], value: Any, name: str = "the file") -> str:
    """``text`` with the value at ``path`` (object keys) set to ``value``; a missing
    object on the way is added. Unchanged when it already holds that value."""
    data = check(text, name)
    if not isinstance(data, dict):
        raise JsonEditError(f"{name} holds a JSON {type(data).__name__}, not an object")
    if not text.strip():  # an empty file: an empty object
        text = "{}\n"
    if get(text, path) == value and _has(data, path):
        return text
    obj = _parse_object(text, _skip(text, 0))
    for depth, key in enumerate(path):
        member = next((m for m in obj.members if m.key == key), None)
        rest = path[depth + 1 :]
        if member is None:
            for k in reversed(rest):
                value = {k: value}
            return _insert(text, obj, key, value)
        if not rest:
            indent = _indent_of(text, member.start)
            new = _dumps(value, indent, "\r\n" if "\r\n" in text else "\n")
            return text[: member.value_start] + new + text[member.value_end :]
        if text[member.value_start] != "{":
            shown = ".".join(path[: depth + 1])
            raise JsonEditError(f"{name}: {shown} is not a JSON object; left untouched")
        obj = _parse_object(text, member.value_start)
    return text


def remove_key(text: str, path: Sequence[str], name: str = "the file") -> str:
    """``text`` without the key at ``path``; an object left empty by it goes too (the
    one ``set_key`` added). Unchanged when the key is not there."""
    data = check(text, name)
    if not isinstance(data, dict) or not _has(data, path):
        return text
    chain = [_parse_object(text, _skip(text, 0))]
    members = []
    for key in path:
        member = next(m for m in chain[-1].members if m.key == key)
        members.append(member)
        if text[member.value_start] == "{":
            chain.append(_parse_object(text, member.value_start))
    # drop the deepest key, or its parent when that leaves the parent empty
    level = len(path) - 1
    while level > 0 and len(chain[level].members) == 1:
        level -= 1
    obj, member = chain[level], members[level]
    i = obj.members.index(member)
    if len(obj.members) == 1:
        return text[: obj.open + 1] + text[obj.close :]
    if i + 1 < len(obj.members):  # up to the next member's key
        return text[: member.start] + text[obj.members[i + 1].start :]
    return text[: obj.members[i - 1].value_end] + text[member.value_end :]


def _has(data: Any, path: Sequence[str]) -> bool:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True


def _insert(text: str, obj: _Object, key: str, value: Any) -> str:
    nl = "\r\n" if "\r\n" in text else "\n"  # a file saved on Windows keeps its CRLF
    if obj.members:
        last = obj.members[-1]
        indent = _indent_of(text, obj.members[0].start)
        member = f"{json.dumps(key, ensure_ascii=False)}: {_dumps(value, indent, nl)}"
        sep = "," + (nl + indent if "\n" in text[obj.open : obj.members[0].start] else " ")
        return text[: last.value_end] + sep + member + text[last.value_end :]
    outer = _indent_of(text, obj.open)
    indent = outer + "  "
    member = f"{json.dumps(key, ensure_ascii=False)}: {_dumps(value, indent, nl)}"
    return text[: obj.open + 1] + f"{nl}{indent}{member}{nl}{outer}" + text[obj.close :]


def _dumps(value: Any, indent: str, nl: str = "\n") -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", nl + indent)


def _indent_of(text: str, at: int) -> str:
    """The whitespace that starts the line ``at`` is on."""
    line = text.rfind("\n", 0, at) + 1
    end = line
    while end < at and text[end] in " \t":
        end += 1
    return text[line:end]


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _value_end(text: str, i: int) -> int:
    c = text[i]
    if c == '"':
        return _string_end(text, i)
    if c in "{[":
        depth = 0
        while True:
            c = text[i]
            if c == '"':
                i = _string_end(text, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    while i < len(text) and text[i] not in ",}]" + _WS:
        i += 1
    return i


def _parse_object(text: str, i: int) -> _Object:
    """The members of the object at ``text[i]`` (valid JSON: ``check`` passed)."""
    if text[i] != "{":
        raise JsonEditError("the file holds a JSON value that is not an object")
    start = i
    members = []
    i = _skip(text, i + 1)
    while text[i] != "}":
        key_end = _string_end(text, i)
        key = json.loads(text[i:key_end])
        colon = _skip(text, key_end)
        value_start = _skip(text, colon + 1)
        value_end = _value_end(text, value_start)
        members.append(_Member(key, i, value_start, value_end))
        i = _skip(text, value_end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return _Object(start, i, tuple(members))


__all__ = ["JsonEditError", "check", "get", "remove_key", "set_key"]
