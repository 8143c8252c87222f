"""The Obsidian plugin (obsidian-plugin/), tested from the project's one test command.

pytest runs the plugin's own suites with Node (20 or newer) after `npm ci` (once per
session, and only when package-lock.json changed since the last install): the unit tests
(the plugin's logic on a stand-in for Obsidian), the integration tests (its client and
views against a real `memvault daemon run`) and the browser tests (the pane, the search
modal and the status view rendered in Debian's headless Chromium). It also checks that
the committed main.js — what the wheel ships — is exactly what the sources build to.
Nothing is skipped: without Node, npm or Chromium these fail and say what to install.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "obsidian-plugin"
STAMP = PLUGIN / "node_modules" / ".memvault-lock-sha256"


def _run(argv: list[str], timeout: float, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    full_env.update(env)
    return subprocess.run(
        argv, cwd=PLUGIN, env=full_env, capture_output=True, text=True, timeout=timeout
    )


def _explain(r: subprocess.CompletedProcess[str]) -> str:
    return f"exit {r.returncode}\n--- stdout ---\n{r.stdout[-12000:]}\n--- stderr ---\n{r.stderr[-6000:]}"


@pytest.fixture(scope="session")
def npm() -> str:
    """npm, with the plugin's locked dependencies installed (`npm ci`, cached by the
    lock file's hash)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(
            "Node.js 20+ and npm are needed to build and test the Obsidian plugin "
            "(Debian: apt-get install -y nodejs npm)",
            pytrace=False,
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    major = int(re.match(r"v(\d+)", version).group(1)) if re.match(r"v(\d+)", version) else 0
    if major < 20:
        pytest.fail(f"the Obsidian plugin needs Node 20 or newer, found {version.strip()}")
    lock = hashlib.sha256((PLUGIN / "package-lock.json").read_bytes()).hexdigest()
    if not (STAMP.exists() and STAMP.read_text().strip() == lock):
        r = _run([npm, "ci", "--no-audit", "--no-fund"], timeout=600)
        assert r.returncode == 0, f"npm ci failed:\n{_explain(r)}"
        STAMP.write_text(lock)
    return npm


def _node_tests(npm: str, script: str, timeout: float, **env: str) -> str:
    r = _run([npm, "run", "--silent", script], timeout=timeout, **env)
    assert r.returncode == 0, f"npm run {script} failed:\n{_explain(r)}"
    passed = re.search(r"^ℹ pass (\d+)$", r.stdout, re.M)
    failed = re.search(r"^ℹ fail (\d+)$", r.stdout, re.M)
    skipped = re.search(r"^ℹ skipped (\d+)$", r.stdout, re.M)
    assert passed and int(passed.group(1)) > 0, f"no test ran:\n{_explain(r)}"
    assert failed and failed.group(1) == "0", _explain(r)
    assert skipped and skipped.group(1) == "0", f"skipped tests are defects:\n{_explain(r)}"
    return r.stdout


def test_the_committed_main_js_is_what_the_sources_build_to(npm: str, tmp_path: Path) -> None:
    out = tmp_path / "main.js"
    r = _run(["node", "scripts/build.mjs", "--out", str(out)], timeout=120)
    assert r.returncode == 0, _explain(r)
    assert out.read_bytes() == (PLUGIN / "main.js").read_bytes(), (
        "obsidian-plugin/main.js is stale: run `npm run build` in obsidian-plugin/ and commit it"
    )


def test_the_plugin_type_checks_against_obsidians_api(npm: str) -> None:
    r = _run([npm, "run", "--silent", "typecheck"], timeout=300)
    assert r.returncode == 0, _explain(r)


def test_plugin_unit_tests(npm: str) -> None:
    out = _node_tests(npm, "test", timeout=600)
    assert "minAppVersion is the newest @since" in out


@pytest.mark.slow
def test_plugin_against_a_real_daemon(npm: str) -> None:
    out = _node_tests(npm, "test:integration", timeout=900, MEMVAULT_PYTHON=sys.executable)
    assert "finds it again when it restarts" in out


@pytest.mark.slow
def test_plugin_in_headless_chromium(npm: str) -> None:
    out = _node_tests(npm, "test:browser", timeout=900, MEMVAULT_PYTHON=sys.executable)
    assert "renders the related pane" in out
