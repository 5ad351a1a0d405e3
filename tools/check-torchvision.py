#!/usr/bin/python3
"""Check that rig loads what torch.onnx.export produces, and computes the same.

Not part of CI. Needs Debian's /usr/bin/python3 with python3-torchvision,
python3-onnx and python3-opencv:

    apt-get install -y python3-torchvision python3-onnx python3-opencv

For each classification and segmentation network of torchvision whose weights
fit in one ONNX file (under protobuf's 2 GiB), at each opset: export it with
torch.onnx.export (default arguments, random weights, eval mode), normalise it
with `rig model normalize`, run it through OpenCV DNN (the cpu device's
runtime) and through PyTorch on the same input, compare
max|rig - torch| / max|torch| over each output (target <= 1e-4), and bench it
on the cpu device briefly (unless --no-bench). Prints one row per network and opset.

    nice -n 15 /usr/bin/python3 tools/check-torchvision.py --rig build/src/cli/rig \
        [--opsets 11,13] [--only resnet18,mobilenet_v2] [--no-bench] [--markdown] \
        [--keep DIR] [--params]

--params prints each network's parameter count and float32 weight size
without exporting anything (which ones are over 2 GiB); --keep DIR keeps the
exported and normalised models there. Every error is reported in full: the
exporter's first line, rig's named error, OpenCV's refusal (the node and the
assertion it failed).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings

import cv2
import numpy as np
import torch
import torchvision

warnings.filterwarnings("ignore")
torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))

# Weights over 2 GiB of float32 do not fit one ONNX file.
TOO_BIG = 2 * 1024**3

SEGMENTATION = [
    "fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
    "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large",
]


def classification_names():
    names = torchvision.models.list_models(module=torchvision.models)
    return sorted(names)


def build(name):
    if name in SEGMENTATION:
        fn = getattr(torchvision.models.segmentation, name)
        model = fn(weights=None, weights_backbone=None, aux_loss=False)
    else:
        model = torchvision.models.get_model(name, weights=None)
    return model.eval()


def input_size(name):
    if name.startswith("inception_v3"):
        return 299
    if name in ("vit_h_14",):
        return 518
    return 224


def outputs_of(result):
    if isinstance(result, dict):
        return [result[k] for k in sorted(result)]
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def opencv_refusal(e):
    """OpenCV's refusal in one line: the importer's 'Node [...] parse error: ...'
    line when there is one (the node and what it failed), else the first line."""
    lines = [l.strip().lstrip(">").strip() for l in str(e).splitlines()]
    lines = [l for l in lines if l]
    if not lines:
        return type(e).__name__
    for l in lines:
        if l.startswith("Node ["):
            return l
    return " ".join(lines)


def first_failing_layer(path, x):
    """' at layer NAME (op)': the first layer whose forward fails, by bisection."""
    names = cv2.dnn.readNetFromONNX(path).getLayerNames()

    def runs_to(i):
        net = cv2.dnn.readNetFromONNX(path)
        net.setInput(x)
        try:
            net.forward(names[i])
            return True
        except Exception:
            return False

    lo, hi = 0, len(names) - 1
    if not names or runs_to(hi):
        return ""
    while lo < hi:
        mid = (lo + hi) // 2
        if runs_to(mid):
            lo = mid + 1
        else:
            hi = mid
    return f" at layer {names[lo]}"


def rig_error(text):
    """rig's named error: its 'rig: error: ...' line (the last line otherwise)."""
    lines = [l for l in text.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("rig: error:"):
            return l
    return lines[-1] if lines else "(no output)"


def run(cmd, timeout=900):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).strip()


_CPU_FORMS = {}


def cpu_forms(rig):
    if rig not in _CPU_FORMS:
        _, text = run([rig, "model", "normalize", "--help"])
        _CPU_FORMS[rig] = ["--cpu-forms"] if "--cpu-forms" in text else []
    return _CPU_FORMS[rig]


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def check(name, opset, rig, workdir, bench):
    row = {"network": name, "opset": opset, "exports": "no", "normalised": "", "loads": "no",
           "agrees": "", "benches": "", "error": ""}
    model = build(name)
    params = parameters(model)
    if params * 4 >= TOO_BIG:
        row["error"] = f"weights {params * 4 / 2**30:.2f} GiB ({params} parameters): over protobuf's 2 GiB"
        return row
    size = input_size(name)
    torch.manual_seed(0)
    x = torch.rand(1, 3, size, size)
    raw = os.path.join(workdir, f"{name}-{opset}.onnx")
    norm = os.path.join(workdir, f"{name}-{opset}.norm.onnx")
    try:
        # Exported as a user would, outside torch.no_grad(): under no_grad,
        # nn.MultiheadAttention in eval mode takes its fused fast path
        # (aten::_native_multi_head_attention), which PyTorch 1.13 cannot export.
        torch.onnx.export(model, x, raw, opset_version=opset)
        with torch.no_grad():
            expected = [t.numpy() for t in outputs_of(model(x))]
    except Exception as e:  # an export failure is the exporter's, recorded as such
        lines = [l for l in str(e).splitlines() if l.strip()]
        row["error"] = "export: " + (lines[0] if lines else type(e).__name__)
        return row
    row["exports"] = "yes"
    # The model OpenCV reads here is the copy the cpu device loads: with the
    # rewrites only OpenCV needs (--cpu-forms; rigs before it applied them always).
    rc, text = run([rig, "model", "normalize", raw, "-o", norm] + cpu_forms(rig))
    if rc != 0:
        row["error"] = "normalize: " + rig_error(text)
        return row
    first = text.splitlines()[0]
    row["normalised"] = first.split(": ", 1)[1] if ": " in first else first
    try:
        net = cv2.dnn.readNetFromONNX(norm)
    except Exception as e:
        row["error"] = "opencv: " + opencv_refusal(e)
        return row
    try:
        net.setInput(x.numpy())
        names = net.getUnconnectedOutLayersNames()
        got = net.forward(names)
    except Exception as e:
        # The importer took it; a layer fails when the network first runs.
        # OpenCV does not say which: find the first layer that fails.
        row["error"] = ("opencv imports it, its first forward fails" +
                        first_failing_layer(norm, x.numpy()) + ": " + opencv_refusal(e))
        return row
    row["loads"] = "yes"
    worst = 0.0
    if len(got) != len(expected):
        row["agrees"] = "no"
        row["error"] = f"{len(got)} outputs from OpenCV, {len(expected)} from torch"
        return row
    for a, b in zip(got, expected):
        a = np.asarray(a).reshape(-1)
        b = np.asarray(b).reshape(-1)
        if a.shape != b.shape:
            row["agrees"] = "no"
            row["error"] = f"output sizes differ: {a.size} vs {b.size}"
            return row
        scale = float(np.max(np.abs(b))) or 1.0
        worst = max(worst, float(np.max(np.abs(a - b))) / scale)
    row["agrees"] = f"{'yes' if worst <= 1e-4 else 'NO'} ({worst:.1e})"
    if bench:
        rc, text = run([rig, "bench", raw, "-d", "cpu", "--duration", "0.5s", "--repeats", "1",
                        "--latency-samples", "3", "--min-inferences", "3", "-q"])
        if rc in (0, 1):
            rate = [l for l in text.splitlines() if "rate (median" in l]
            row["benches"] = "yes" + (" (" + rate[0].split(")")[1].strip().split()[0] + "/s)"
                                      if rate else "")
        else:
            row["benches"] = "no"
            row["error"] = "bench: " + rig_error(text)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rig", default="build/src/cli/rig")
    ap.add_argument("--opsets", default="11,13")
    ap.add_argument("--only", default="")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--keep", default="", help="keep the exported and normalised models here")
    ap.add_argument("--params", action="store_true",
                    help="print parameter counts and float32 weight sizes only; export nothing")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or classification_names() + SEGMENTATION
    if args.params:
        for name in names:
            n = parameters(build(name))
            over = " over 2 GiB: skipped" if n * 4 >= TOO_BIG else ""
            print(f"{name}\t{n}\t{n * 4 / 2**30:.2f} GiB{over}", flush=True)
        return 0
    cols = ["network", "opset", "exports", "normalised", "loads", "agrees", "benches", "error"]
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    with tempfile.TemporaryDirectory(prefix="rig-tv-") as tmp:
        workdir = args.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        for name in names:
            for opset in [int(o) for o in args.opsets.split(",")]:
                t0 = time.time()
                try:
                    row = check(name, opset, args.rig, workdir, not args.no_bench)
                except Exception as e:
                    row = {c: "" for c in cols}
                    lines = [l for l in str(e).splitlines() if l.strip()]
                    row.update(network=name, opset=opset,
                               error=type(e).__name__ + ": " + (lines[0] if lines else ""))
                if args.markdown:
                    print("| " + " | ".join(str(row[c]).replace("|", "/") for c in cols) + " |",
                          flush=True)
                else:
                    print("\t".join(str(row[c]) for c in cols) + f"\t{time.time() - t0:.0f}s",
                          flush=True)
                if not args.keep:
                    for f in os.listdir(workdir):
                        os.remove(os.path.join(workdir, f))


if __name__ == "__main__":
    sys.exit(main())
