#!/usr/bin/env python3
"""Export the encoder bench_pytorch.py times to ONNX, for the ONNX Runtime peer (bench/bench_ort.js).

usage: /usr/bin/python3 bench/export_onnx.py OUT_DIR

Writes into OUT_DIR:
  encoder.onnx    torch.onnx.export (PyTorch 1.13, opset 14) of article 000's TransformerEncoder
                  at BERT-base sizes with the weights of torch.manual_seed(0), in eval mode
                  (bench_pytorch.build_model): input "ids" int64 (B,T), output "hidden" float
                  (B,T,768), B and T dynamic
  check.json, check_ids.bin, check_out.bin
                  the check the peer must pass once: ids (2,16) (int64, little-endian) and
                  PyTorch's output for them (float32); traced at (1,5), checked at (2,16), so
                  the check also covers the dynamic B and T
  export.json     what the export was made from (sha256 of the sources, torch version): when
                  it matches, nothing is exported again (an export takes ~30 s and ~440 MB)
"""
import hashlib
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [os.path.join(HERE, "export_onnx.py"), os.path.join(HERE, "bench_pytorch.py"),
           os.path.join(HERE, "..", "tests", "twins", "article000.py"),
           os.path.join(HERE, "..", "tests", "twins", "twinlib.py")]
OPSET = 14
CHECK_SHAPE = (2, 16)


def fingerprint(torch_version):
    h = hashlib.sha256()
    for path in SOURCES:
        with open(path, "rb") as f:
            h.update(f.read())
    return {"sources_sha256": h.hexdigest(), "torch": torch_version, "opset": OPSET}


def main():
    if len(sys.argv) != 2:
        print("usage: /usr/bin/python3 bench/export_onnx.py OUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    import torch
    from bench_pytorch import build_model

    stamp_path = os.path.join(out, "export.json")
    want = fingerprint(torch.__version__)
    try:
        with open(stamp_path) as f:
            if json.load(f) == want and os.path.exists(os.path.join(out, "encoder.onnx")):
                print(f"export_onnx: {out}/encoder.onnx is up to date", file=sys.stderr)
                return 0
    except (OSError, ValueError):
        pass

    model = build_model()
    g = torch.Generator().manual_seed(99)
    # ids (2,16): the check's input; out (2,16,768): PyTorch's answer
    ids = torch.randint(0, 30522, CHECK_SHAPE, generator=g)
    with torch.inference_mode():
        ref = model(ids)
    onnx_path = os.path.join(out, "encoder.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about python ints (the head size): constant here
        with torch.no_grad():
            kw = dict(opset_version=OPSET, input_names=["ids"], output_names=["hidden"],
                      dynamic_axes={"ids": {0: "B", 1: "T"}, "hidden": {0: "B", 1: "T"}})
            try:  # torch >= 2.9 exports through dynamo by default (needs onnxscript): the tracing exporter here
                torch.onnx.export(model, (ids[:1, :5],), onnx_path, dynamo=False, **kw)
            except TypeError:  # torch < 2.5 has no dynamo argument
                torch.onnx.export(model, (ids[:1, :5],), onnx_path, **kw)
    ids.numpy().astype("<i8").tofile(os.path.join(out, "check_ids.bin"))
    ref.numpy().astype("<f4").tofile(os.path.join(out, "check_out.bin"))
    with open(os.path.join(out, "check.json"), "w") as f:
        json.dump({"ids_shape": list(ids.shape), "out_shape": list(ref.shape),
                   "out_max_abs": float(ref.abs().max())}, f)
    with open(stamp_path, "w") as f:
        json.dump(want, f)
    print(f"export_onnx: wrote {onnx_path} ({os.path.getsize(onnx_path) / 1e6:.0f} MB, opset {OPSET}, "
          f"torch {torch.__version__})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
