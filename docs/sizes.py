"""Modules past ~600 lines and classes past ~400, and the reason written at their top.

    python docs/sizes.py          # what is over the limits, and why (or "NO REASON")
    python docs/sizes.py --top 15 # and the biggest modules and classes, over or not

STYLE.md: a module past ~600 lines is two modules. Something longer stays one piece
only with a reason: a paragraph of its docstring (the module's, or the class's) that
starts with "Size:" and says why. tests/test_architecture.py fails on one without.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "daemon" / "memvault"
MODULE_LINES = 600
CLASS_LINES = 400
REASON = "Size:"


@dataclass(frozen=True, slots=True)
class Size:
    kind: str  # module | class
    name: str  # memvault.index.store, or memvault.index.store.Store
    lines: int
    reason: str | None  # the docstring's "Size:" paragraph

    @property
    def over(self) -> bool:
        return self.lines > (MODULE_LINES if self.kind == "module" else CLASS_LINES)


def reason(node: ast.Module | ast.ClassDef) -> str | None:
    """The docstring paragraph that starts with "Size:", if there is one."""
    for paragraph in (ast.get_docstring(node) or "").split("\n\n"):
        if paragraph.strip().startswith(REASON):
            return " ".join(paragraph.split())
    return None


def measure(path: Path, package: Path = PACKAGE) -> list[Size]:
    """The module at ``path`` and every class in it (nested ones too)."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    parts = path.relative_to(package.parent).with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    out = [Size("module", module, len(text.splitlines()), reason(tree))]
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            out.append(Size("class", f"{module}.{node.name}", lines, reason(node)))
    return out


def sizes(package: Path = PACKAGE) -> list[Size]:
    """Every module and class of the package, longest first."""
    found = [s for p in sorted(package.rglob("*.py")) for s in measure(p, package)]
    return sorted(found, key=lambda s: (-s.lines, s.name))


def main(argv: list[str]) -> int:
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 0
    everything = sizes()
    print(f"over the limits (modules > {MODULE_LINES} lines, classes > {CLASS_LINES}):")
    over = [s for s in everything if s.over]
    for s in over:
        print(f"  {s.lines:5}  {s.kind:6}  {s.name}\n         {s.reason or 'NO REASON'}")
    if not over:
        print("  none")
    for kind, plural in (("module", "modules"), ("class", "classes")) if top else ():
        print(f"the {top} longest {plural}:")
        for s in [s for s in everything if s.kind == kind][:top]:
            print(f"  {s.lines:5}  {s.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
