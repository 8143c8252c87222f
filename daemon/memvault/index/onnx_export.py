"""Build the int8 ONNX embedding model from sentence-transformers weights (run as a child process).

    python -m memvault.index.onnx_export SOURCE_FOLDER OUT_FILE REPORT_JSON [int8|fp32]

The only memvault module that imports torch for the ONNX backend, and it runs
in a process of its own (``onnx_cache.build`` starts it): torch and the
PyTorch model cost ~450 MB that a Python process never hands back, and the
embedding process stays torch-free for its whole life. A crash or a kill of
this process leaves only a temporary folder, which the next build removes.

Steps (the recipe ``onnx_cache.recipe()`` names; bump its version when they change):

1. the BERT encoder with mean pooling over the attention mask, exported by
   ``torch.onnx.export`` (TorchScript exporter, opset 17) with "eager"
   attention: the graph onnxruntime's BERT optimizer knows how to fuse;
2. onnxruntime's BERT optimizer: embedding + layer norms, attention, GELU fused;
3. ``quantize_dynamic``: int8 weights, **per channel** (per tensor costs
   ~0.04 of mean cosine to the PyTorch vectors: 0.95 instead of 0.99), except
   the first layer's FFN output projection, the most sensitive matrix found:
   kept in float32 it lifts the mean cosine to PyTorch from 0.9934
   to 0.9947 and LoCoMo recall @2000 from -0.009 to -0.004 of PyTorch's, at no
   measurable speed cost (bench/RESULTS.md). Precision ``fp32`` quantizes nothing;
4. a self-check: the runtime's own code (``OnnxEmbedder``) against
   ``SentenceTransformer.encode`` on probe texts, short and past the window.
   Below ``MIN_COSINE`` the build fails: never silently wrong vectors.

The L2 normalisation stays outside the graph (numpy, in the embedder).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

OPSET = 17
MIN_COSINE = 0.95  # measured: min 0.98 on LoCoMo chunks; a broken export gives < 0.5
PROBES = (
    "hello",
    "The quarterly review moved to Thursday because the auditors are late.",
    "We chose PostgreSQL over MySQL for the user service: JSONB, partial indexes "
    "and a team that knows it.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. "
    "Melanie: That's amazing, what happened there?",
    "naïve café in 東京, 2024-01-05 — ümlauts and emoji 🙂 too",
    # past the 256 word-piece window: truncation must match sentence-transformers
    " ".join(f"item{i} went to the market and bought apples, pears and figs." for i in range(60)),
)


def _die_with_parent() -> None:
    """On Linux, get SIGKILL when the parent dies (kill -9 of the parent stops the build)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return


def export(source: Path, out: Path, work: Path, precision: str = "int8") -> dict[str, Any]:
    """Export, fuse and quantize the model in ``source`` to ``out``; return what was done."""
    import torch

    os.environ["ORT_DISABLE_TELEMETRY"] = "1"  # onnx_cache.no_telemetry: before the import
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained(source, local_files_only=True)
    bert = AutoModel.from_pretrained(source, local_files_only=True, attn_implementation="eager")
    bert.eval()

    class MeanPooled(torch.nn.Module):
        """The encoder and sentence-transformers' mean pooling (the mask decides what counts)."""

        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    fp32, fused = work / "fp32.onnx", work / "fused.onnx"
    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    started = time.perf_counter()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's tracer and deprecation notes
        torch.onnx.export(
            MeanPooled(bert),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "embedding": {0: "batch"},
            },
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    exported = time.perf_counter() - started
    optimized = optimize_model(
        str(fp32),
        model_type="bert",
        num_heads=int(config.num_attention_heads),
        hidden_size=int(config.hidden_size),
    )
    fusion = {k: v for k, v in optimized.get_fused_operator_statistics().items() if v}
    optimized.save_model_to_file(str(fused))
    fp32.unlink()
    if precision == "fp32":
        fused.replace(out)
        return {"export_seconds": round(exported, 1), "fusion": fusion, "kept_fp32": []}
    # the first layer's FFN output projection (".../output/dense/MatMul", not the
    # attention's); the graph is in topological order, so the first one found
    keep = [n.name for n in optimized.model.graph.node if _ffn_output(n.name)][:1]
    quantize_dynamic(
        str(fused),
        str(out),
        per_channel=True,
        weight_type=QuantType.QInt8,
        nodes_to_exclude=keep,
        # the fused operators are in the com.microsoft domain, which ONNX shape
        # inference does not know: their outputs are float32
        extra_options={"DefaultTensorType": 1},
    )
    fused.unlink()
    return {"export_seconds": round(exported, 1), "fusion": fusion, "kept_fp32": keep}


def _ffn_output(name: str) -> bool:
    return name.endswith("/output/dense/MatMul") and "/attention/" not in name


def self_check(source: Path, model: Path) -> dict[str, float]:
    """Cosine of the runtime's vectors to ``SentenceTransformer.encode``'s on the probes."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from memvault.index.embedder_onnx import OnnxEmbedder

    reference = SentenceTransformer(str(source), device="cpu", local_files_only=True).encode(
        list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    ours = OnnxEmbedder(model, source, model_id="self-check", batch_size=4).embed(PROBES)
    cosines = (np.asarray(reference, dtype=np.float32) * ours).sum(axis=1)
    return {
        "min_cosine": round(float(cosines.min()), 4),
        "mean_cosine": round(float(cosines.mean()), 4),
    }


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def main(argv: list[str]) -> int:
    _die_with_parent()
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] not in ("int8", "fp32")):
        print(__doc__, file=sys.stderr)
        return 2
    source, out, report_file = Path(argv[0]), Path(argv[1]), Path(argv[2])
    precision = argv[3] if len(argv) == 4 else "int8"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    started = time.perf_counter()
    report = export(source, out, out.parent, precision)
    check = self_check(source, out)
    report.update(check, versions=versions(), build_seconds=round(time.perf_counter() - started, 1))
    report_file.write_text(json.dumps(report, indent=1), encoding="utf-8")
    if check["min_cosine"] < MIN_COSINE:
        print(
            f"self-check failed: cosine to sentence-transformers min {check['min_cosine']} "
            f"< {MIN_COSINE} (mean {check['mean_cosine']})",
            file=sys.stderr,
        )
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
