"""memvault under each Python that pyproject.toml's ``requires-python`` admits (README,
"Supported Pythons": 3.11, 3.12 and 3.13 run). What differs between them is checked in
the Python that runs the suite: a name it deprecates, a warning it adds, a dependency
with no build for it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version

from packaging.requirements import Requirement

from helpers import DAEMON_DIR

ROOT = DAEMON_DIR.parent

IMPORT_ALL = """
import importlib, pkgutil, memvault
names = [m.name for m in pkgutil.walk_packages(memvault.__path__, "memvault.")]
for name in names:
    if not name.endswith(".__main__"):  # that one runs the CLI
        importlib.import_module(name)
print(len(names))
"""


def test_every_module_imports_and_exits_without_a_warning() -> None:
    """Every module imported in a fresh process where any warning is an error, and the
    process ends saying nothing: Python 3.12 deprecates ``importlib.abc.Traversable``
    (3.14 removes it: ``memvault`` would not import), 3.13 warns of an SQLite
    connection never closed, even as the process ends (a module's own, kept for its
    life)."""
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", IMPORT_ALL],
        cwd=ROOT,
        env={"PYTHONPATH": str(DAEMON_DIR), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert int(done.stdout) > 150  # every module, not none


def test_the_test_extra_is_installed_in_this_python() -> None:
    """README's ``pip install ".[test]"`` installs on this Python: each requirement of
    the extra that applies here (its marker) is installed. pgserver has wheels for
    Python 3.9-3.12 and no source: on 3.13 an unconditional one made pip refuse the
    whole extra."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["test"]
    missing = []
    for line in extra:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": "test"}):
            continue
        try:
            found = version(req.name)
        except PackageNotFoundError:
            missing.append(line)
            continue
        assert req.specifier.contains(found, prereleases=True), (line, found)
    assert missing == [], f"not installed for Python {sys.version.split()[0]}: {missing}"
