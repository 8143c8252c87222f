"""config.py: defaults < file < environment < flags; bad values are clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memvault.config import VaultConfig
from memvault.errors import ConfigError

TEMPLATE = Path(__file__).resolve().parents[1] / "vault-template"


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".memvault").mkdir(exist_ok=True)
    (tmp_path / ".memvault" / "config.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_the_template_documents_exactly_the_defaults() -> None:
    assert VaultConfig.load(TEMPLATE, env={}) == VaultConfig(root=TEMPLATE.resolve())


def test_every_setting_is_documented_in_the_template() -> None:
    import dataclasses

    text = (TEMPLATE / ".memvault" / "config.toml").read_text(encoding="utf-8")
    cfg = VaultConfig(root=TEMPLATE)
    for section in ("vault", "memory", "index", "search", "context", "daemon"):
        assert f"[{section}]" in text
        for f in dataclasses.fields(getattr(cfg, section)):
            assert f"\n{f.name} = " in text or f.name == "sections", (
                f"{section}.{f.name} undocumented"
            )


def test_precedence_file_env_flags(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        "[daemon]\nport = 1111\n[vault]\nquiet_ms = 50\n[index]\nembed_context = ['title']\n",
    )
    cfg = VaultConfig.load(
        root, env={"MEMVAULT_DAEMON_PORT": "2222"}, overrides={"vault": {"quiet_ms": 7}}
    )
    assert (cfg.daemon.port, cfg.vault.quiet_ms, cfg.index.embed_context) == (
        2222,
        7,
        ("title",),
    )


@pytest.mark.parametrize(
    ("text", "env", "overrides", "expected"),
    [
        ("[daemon]\ndebounce_ms = 40\n", {}, {}, 40),  # a config.toml written before
        ("[daemon]\ndebounce_ms = 40\n[vault]\nquiet_ms = 60\n", {}, {}, 60),  # new wins
        ("", {"MEMVAULT_DAEMON_DEBOUNCE_MS": "30"}, {}, 30),
        ("", {"MEMVAULT_DAEMON_DEBOUNCE_MS": "30", "MEMVAULT_VAULT_QUIET_MS": "20"}, {}, 20),
        ("[vault]\nquiet_ms = 60\n", {}, {"daemon": {"debounce_ms": 5}}, 5),
        ("", {}, {}, 100),
    ],
)
def test_the_quiet_period_is_a_vault_setting_read_under_its_old_name_too(
    tmp_path: Path, text: str, env: dict[str, str], overrides: dict[str, Any], expected: int
) -> None:
    cfg = VaultConfig.load(write(tmp_path, text), env=env, overrides=overrides)
    assert cfg.vault.quiet_ms == expected
    assert not hasattr(cfg.daemon, "debounce_ms")


def test_custom_sections(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        '[[memory.sections]]\nname = "ideas"\ntitle = "Ideas"\nfolder = "ideas/"\n'
        'filter = { status = "open" }\norder = "title"\nlimit = 3\n',
    )
    (rule,) = VaultConfig.load(root, env={}).memory.sections
    assert (rule.name, rule.folder, dict(rule.filter), rule.order, rule.limit) == (
        "ideas",
        "ideas",
        {"status": "open"},
        "title",
        3,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[deamon]\nport = 1\n", "unknown section [deamon]"),
        ("[daemon]\nprot = 1\n", "unknown setting daemon.prot"),
        ("[daemon]\nport = 'x'\n", "daemon.port must be a whole number"),
        ("[daemon]\nport = 70000\n", "daemon.port must be between"),
        ("[daemon]\nhost = '0.0.0.0'\n", "loopback"),
        ("[vault]\nupdate_links_on_rename = 'yes'\n", "must be true or false"),
        ("[index]\nembed_context = ['title', 'colour']\n", "unknown part 'colour'"),
        (
            "[[memory.sections]]\nname = 'x'\ntitle = 'X'\nfolder = 'x'\norder = 'random'\n",
            "order must be one of",
        ),
        ("[[memory.sections]]\nname = 'x'\n", "needs folder, title"),
        ("[index]\nbackend = 'tensorflow'\n", "index.backend must be one of onnx, torch"),
        ("[index]\nonnx_precision = 'int4'\n", "index.onnx_precision must be one of int8, fp32"),
        ("[index]\ndevice = 'cuda'\n", "index.device applies to the torch backend"),
        ("[index]\nmodel_cache = 'models/onnx'\n", "index.model_cache must be an absolute path"),
        ("not toml = = =", "config.toml"),
        # found in a field test: MEMORY.md never written (never quiet enough), and a
        # section's folder outside the vault taken silently
        ("[vault]\nquiet_ms = 99999999999999999999\n", "vault.quiet_ms must be between 0 and"),
        ("[vault]\nquiet_ms = -1\n", "vault.quiet_ms must be between 0 and"),
        (
            "[[memory.sections]]\nname = 'x'\ntitle = 'X'\nfolder = '../outside'\n",
            "folder must be a folder inside the vault",
        ),
        (
            "[[memory.sections]]\nname = 'x'\ntitle = 'X'\nfolder = 'people/./x'\n",
            "folder must be a folder inside the vault",
        ),
        # a field test: a negative limit was taken, and status then called every
        # MEMORY.md over it
        ("[memory]\nmax_lines = -3\n", "memory.max_lines and max_tokens must be positive"),
        ("[memory]\nmax_tokens = 0\n", "memory.max_lines and max_tokens must be positive"),
        ("[search]\nrare_words = 0\n", "search.rare_words >= 1"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    root = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        VaultConfig.load(root, env={})


def test_env_numbers_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MEMVAULT_DAEMON_PORT"):
        VaultConfig.load(tmp_path, env={"MEMVAULT_DAEMON_PORT": "eighty"})


def test_the_backend_is_onnx_unless_configured(tmp_path: Path) -> None:
    assert VaultConfig.load(tmp_path, env={}).index.backend == "onnx"
    root = write(tmp_path, "[index]\nbackend = 'torch'\ndevice = 'cuda'\n")
    index = VaultConfig.load(root, env={}).index
    assert (index.backend, index.device) == ("torch", "cuda")


def test_backend_and_model_cache_come_from_the_environment(tmp_path: Path) -> None:
    env = {"MEMVAULT_INDEX_BACKEND": "torch", "MEMVAULT_INDEX_MODEL_CACHE": "~/models"}
    index = VaultConfig.load(tmp_path, env=env).index
    assert (index.backend, index.model_cache) == ("torch", "~/models")
    with pytest.raises(ConfigError, match=r"index\.backend"):
        VaultConfig.load(tmp_path, env={"MEMVAULT_INDEX_BACKEND": "gpu"})


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MEMVAULT_VAULT_QUIET_MS": "-5"}, "$MEMVAULT_VAULT_QUIET_MS: vault.quiet_ms"),
        ({"MEMVAULT_DAEMON_PORT": "70000"}, "$MEMVAULT_DAEMON_PORT: daemon.port"),
        ({"MEMVAULT_INDEX_BACKEND": "gpu"}, "$MEMVAULT_INDEX_BACKEND: index.backend"),
    ],
)
def test_a_bad_value_from_the_environment_names_the_variable_not_the_file(
    tmp_path: Path, env: dict[str, str], named: str
) -> None:
    """A value out of range from the environment was blamed on config.toml, where the
    person found the setting as it should be and nothing to fix."""
    root = write(tmp_path, "[vault]\nquiet_ms = 100\n")
    with pytest.raises(ConfigError) as caught:
        VaultConfig.load(root, env=env)
    assert str(caught.value).startswith(named), str(caught.value)
    assert "config.toml" not in str(caught.value)
