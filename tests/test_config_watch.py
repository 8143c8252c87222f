"""config.toml as the daemon last saw it (service/config_watch.py), on the real
filesystem: a setting changed is said once, a comment is no change, a file that no longer
parses is one; the text is put back only where no file is, and a failure to put it back
never stops the daemon's fresh start."""

from __future__ import annotations

from pathlib import Path

from memvault.service.config_watch import ConfigWatch

TEXT = b"[memory]\nmax_lines = 80\n"


def test_a_changed_setting_is_said_once_and_a_comment_is_no_change(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(TEXT)
    watch = ConfigWatch(path)
    assert not watch.check() and not watch.changed
    path.write_bytes(TEXT + b"# a note to self\n")
    assert not watch.check() and not watch.changed
    path.write_bytes(TEXT.replace(b"80", b"60"))
    assert watch.check() and watch.changed
    path.write_bytes(TEXT.replace(b"80", b"61"))
    assert not watch.check() and watch.changed  # said once, still changed
    path.write_bytes(b"[memory\n")  # no longer parses: the restart would refuse it
    watch.check()
    assert watch.changed
    path.write_bytes(TEXT)
    watch.check()
    assert not watch.changed


def test_the_text_is_put_back_only_where_no_file_is(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(TEXT)
    watch = ConfigWatch(path)
    path.write_bytes(TEXT + b"# mine\n")
    watch.check()
    path.unlink()
    assert watch.restore() and path.read_bytes() == TEXT + b"# mine\n"
    path.write_bytes(b"# someone else's\n")
    assert not watch.restore() and path.read_bytes() == b"# someone else's\n"
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]  # no temp file left


def test_a_restore_that_cannot_write_says_so_and_raises_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    watch = ConfigWatch(folder / "config.toml")
    assert not watch.restore()  # nothing seen: nothing to put back
    (folder / "config.toml").write_bytes(TEXT)
    watch = ConfigWatch(folder / "config.toml")
    (folder / "config.toml").unlink()
    folder.rmdir()  # the whole folder gone: the write fails, quietly
    assert not watch.restore()


def test_new_settings_are_due_once_the_file_rests_and_refused_ones_wait_for_a_change(
    tmp_path: Path,
) -> None:
    from memvault.vault.template import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    path = root / ".memvault" / "config.toml"
    text = path.read_bytes()
    watch = ConfigWatch(path)
    watch.check()
    assert not watch.due()
    path.write_bytes(text.replace(b"max_lines = 80", b"max_lines = 60"))
    assert watch.check() and not watch.due()  # just written: an editor may go on
    watch.check()
    assert watch.due() and watch.usable(root) is None
    path.write_bytes(text.replace(b"max_lines = 80", b"max_lines = [1"))
    watch.check()
    watch.check()
    assert watch.due()
    wrong = watch.usable(root)
    assert wrong is not None and "config.toml" in wrong
    watch.check()
    assert not watch.due()  # refused: said once, waits for the file to change
    path.write_bytes(text.replace(b"max_lines = 80", b"max_lines = 61"))
    watch.check()
    watch.check()
    assert watch.due() and watch.usable(root) is None


def test_new_settings_whose_postgresql_server_does_not_answer_wait_and_are_asked_again(
    tmp_path: Path,
) -> None:
    """A config.toml saved (or pulled) with a mistyped DSN, or while the server is down:
    the daemon started again on it and exited at its open ("cannot reach the index"),
    leaving the vault unwatched. Such settings now wait, the daemon on its own, and
    the server is asked again later (not refused until the file changes)."""
    from memvault.service import config_watch
    from memvault.vault.template import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    path = root / ".memvault" / "config.toml"
    text = path.read_bytes()
    assert b'store = "sqlite"\ndsn = ""' in text
    watch = ConfigWatch(path)
    dsn = b'store = "postgres"\ndsn = "postgresql://memvault@127.0.0.1:1/team"'
    path.write_bytes(text.replace(b'store = "sqlite"\ndsn = ""', dsn))
    watch.check()
    watch.check()
    assert watch.due()
    wrong = watch.usable(root)
    assert wrong is not None and "cannot reach the index" in wrong
    watch.check()
    assert watch.due()  # not refused for good: the server may come back
    assert watch.usable(root) == wrong  # within PROBE_AGAIN: not asked again
    assert config_watch.PROBE_AGAIN >= 10


def test_a_save_made_while_the_daemon_opens_its_vault_is_a_change(tmp_path: Path) -> None:
    """config.toml saved after the vault's settings were read and before the daemon's
    watch first read the file (an editor saving every few seconds, its save landing in
    a restart's open: lock, index, model): the watch took the new text for the one the
    daemon ran on, so it ran on the old settings for good and said nothing. The watch
    now starts from the text the settings were read from (VaultConfig.source)."""
    from memvault.api import Vault
    from memvault.service.daemon import Daemon
    from memvault.vault.template import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    path = root / ".memvault" / "config.toml"
    text = path.read_bytes()
    vault = Vault.open(root, through_daemon=False)
    try:
        assert vault.config.memory.max_lines == 80
        path.write_bytes(text.replace(b"max_lines = 80", b"max_lines = 60"))
        watch = Daemon(vault).config_watch
        watch.check()
        assert watch.changed and watch.due()
    finally:
        vault.close()
    assert not ConfigWatch(path).changed  # no text given: the file's is the one run on
