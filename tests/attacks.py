"""Path-traversal attacks every interface must refuse (CLI, MCP, HTTP, Python).

Each is a string an attacker could pass where a vault-relative note path is
expected. The fixture ``vault_with_secrets`` (see test files) places a file
outside the vault and a symlink leading to it.
"""

ATTACKS = [
    "../secret.md",
    "../../etc/passwd",
    "people/../../secret.md",
    "people/../../../secret.md",
    "/etc/passwd",
    "/tmp/secret.md",
    "//server/share/secret.md",
    "\\\\server\\share\\secret.md",
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "c:secret.md",
    "..\\secret.md",
    "people\\..\\..\\secret.md",
    "%2e%2e/secret.md",
    "%2E%2E/%2E%2E/secret.md",
    "..%2fsecret.md",
    "..%2Fsecret.md",
    "%2e%2e%2fsecret.md",
    "people/%2e%2e/%2e%2e/secret.md",
    "..%5csecret.md",
    "secret.md\x00.txt",
    "people/ana.md\x00",
    "%00",
    ".memvault/daemon.json",
    ".memvault/config.toml",
    ".git/config",
    ".obsidian/app.json",
    "people/.hidden.md",
    "escape/secret.md",  # a symlink inside the vault leading out of it
    "escape-file.md",  # a symlinked file leading out of the vault
    "../vault-evil/secret.md",  # a sibling folder sharing the vault's prefix
    "",
    " ",
    "..",
    ".",
    "./../secret.md",
]
