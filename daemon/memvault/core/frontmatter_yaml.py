"""Frontmatter YAML, loaded within bounds.

YAML aliases let a few hundred bytes stand for billions of values (nine anchors,
each a list of nine aliases of the one before: 9^9 strings), and nesting can be
deep enough to overflow libyaml's C stack. A note's frontmatter is composed into
its node graph first — aliases stay shared, nothing is expanded — and measured:

- aliases may add at most ``MAX_ALIAS_NODES`` values and ``MAX_ALIAS_CHARS``
  characters beyond what is written (merge keys ``<<`` count as aliases);
- an alias that contains itself is refused;
- nesting deeper than ``MAX_DEPTH`` is refused.

Refused frontmatter raises ``FrontmatterRejected`` with the reason, in time and
memory proportional to its length. Text whose nesting the cheap line scan cannot
bound is composed by PyYAML's pure-Python parser, which stops at Python's
recursion limit instead of overflowing the C stack; text that bound puts past
a few thousand levels is refused without parsing.

Scalars follow YAML 1.2: no timestamps (``2024-01-01`` stays a string), no
sexagesimals (``10:00`` stays ``"10:00"``), no yes/no/on/off booleans.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_DEPTH = 64
MAX_ALIAS_NODES = 10_000
MAX_ALIAS_CHARS = 1_000_000
_BRACKET = re.compile(r"[\[\]{}]")
_C_PARSER_DEPTH = 200  # a nesting bound under this is safe for libyaml's recursive composer
_PARSER_DEPTH = 2_000  # past this bound even the Python parser is slow (quadratic in depth)

_RESOLVERS = (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN\0"),
    (
        "tag:yaml.org,2002:int",
        r"^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+|0o[0-7]+)$",
        "-+0123456789",
    ),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*|[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
)


def _yaml12(base: type) -> type:
    cls = type(f"Yaml12{base.__name__}", (base,), {"yaml_implicit_resolvers": {}})
    for tag, regex, first in _RESOLVERS:
        cls.add_implicit_resolver(tag, re.compile(regex), list(first))  # type: ignore[attr-defined]
    cls.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])  # type: ignore[attr-defined]
    return cls


# libyaml's parser when PyYAML has it (~8x faster), the pure-Python one for deep text
FastLoader = _yaml12(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
SafeLoader = _yaml12(yaml.SafeLoader)


class FrontmatterRejected(ValueError):
    """The frontmatter is valid-looking YAML that would cost too much to load."""


def load(raw: str) -> Any:
    """The YAML document in ``raw``, within the bounds of the module docstring.

    Raises ``yaml.YAMLError`` for text that is not YAML and
    ``FrontmatterRejected`` for YAML past the bounds.
    """
    bound = _nesting_bound(raw)
    if bound > _PARSER_DEPTH:
        raise FrontmatterRejected(f"nested deeper than {MAX_DEPTH} levels")
    loader = (FastLoader if bound <= _C_PARSER_DEPTH else SafeLoader)(raw)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise FrontmatterRejected(f"nested deeper than {MAX_DEPTH} levels") from None
        if node is None:
            return None
        _measure(node)
        try:
            return loader.construct_document(node)
        except RecursionError:
            raise FrontmatterRejected(f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def _nesting_bound(raw: str) -> int:
    """An upper bound on how deep the YAML in ``raw`` nests, from one pass over it.

    Block nesting needs a deeper indent or an indicator (``- ``, ``? ``, ``: ``)
    per level on a line; flow nesting needs a bracket per level. Brackets in
    quoted text make the bound loose, never wrong.
    """
    worst = flow = deepest_flow = 0
    for line in raw.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        marks = line.count("- ") + line.count("? ") + line.count(": ") + 2
        worst = max(worst, indent + marks)
        for m in _BRACKET.finditer(line):  # only brackets move the flow depth
            ch = m.group(0)
            if ch in "[{":
                flow += 1
                deepest_flow = max(deepest_flow, flow)
            elif ch in "]}" and flow:
                flow -= 1
    return worst + deepest_flow


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _measure(root: yaml.Node) -> None:
    """Refuse a node graph whose aliases expand past the bounds, loop, or nest too deep.

    One depth-first pass over the distinct nodes: each node's expanded size
    (values, characters) is computed once, from its children's.
    """
    size: dict[int, tuple[int, int]] = {}  # id -> expanded (nodes, chars)
    on_path: set[int] = set()
    written_nodes = written_chars = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        ident = id(node)
        if done:
            on_path.discard(ident)
            nodes, chars = 1, len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            for child in _children(node):
                c_nodes, c_chars = size[id(child)]
                nodes, chars = nodes + c_nodes, chars + c_chars
            size[ident] = (nodes, chars)
            if nodes - written_nodes > MAX_ALIAS_NODES or chars - written_chars > MAX_ALIAS_CHARS:
                raise FrontmatterRejected(
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} values or "
                    f"{MAX_ALIAS_CHARS:,} characters (an alias bomb?)"
                )
            continue
        if ident in on_path:
            raise FrontmatterRejected("an alias refers to a value that contains it")
        if ident in size:
            continue  # an alias of a value already measured
        if depth > MAX_DEPTH:
            raise FrontmatterRejected(f"nested deeper than {MAX_DEPTH} levels")
        written_nodes += 1
        if isinstance(node, yaml.ScalarNode):
            written_chars += len(node.value)
        on_path.add(ident)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in reversed(_children(node)))
