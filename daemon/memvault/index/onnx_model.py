"""Build the ONNX model ahead of time (at install), and say where it is.

    python -m memvault.index.onnx_model [--vault PATH]

Reads ``index`` settings from the vault at PATH (default: the current
folder; defaults when it holds no ``.memvault/config.toml``) and the
environment, builds the int8 model into the cache folder if it is not there
yet, and prints its path, size and sha256. Exit status 0 when the ONNX
backend is ready, 7 (the CLI's "model cannot be loaded") when it cannot run
here, with the reason and the fix.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from memvault.config import VaultConfig
from memvault.errors import ConfigError, ModelError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memvault.index.onnx_model", description=__doc__
    )
    parser.add_argument("--vault", type=Path, default=Path.cwd(), help="read its config")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        settings = VaultConfig.load(args.vault).index
    except ConfigError as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return 3
    from memvault.index.embedder_onnx import load_onnx_embedder

    try:
        emb = load_onnx_embedder(settings)
    except ModelError as exc:
        print(f"memvault: the ONNX backend cannot run here: {exc}", file=sys.stderr)
        return 7
    manifest = json.loads(emb.model_file.with_suffix(".json").read_text(encoding="utf-8"))
    print(
        json.dumps(
            {
                "model_id": emb.model_id,
                "path": str(emb.model_file),
                "bytes": manifest.get("bytes"),
                "sha256": manifest.get("sha256"),
                "built_at": manifest.get("built_at"),
                "min_cosine_to_pytorch": manifest.get("min_cosine"),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
