#!/usr/bin/python3
"""Check that rig's cpu device runs what torch.onnx.export produces, and computes the same.

Not part of CI. Needs Debian's /usr/bin/python3 with python3-torchvision and
python3-onnx, and a rig build; python3-opencv only for --bisect. On Debian 13
(where rig builds both runtimes of the cpu device; docs/models.md):

    apt-get install -y --no-install-recommends python3-torchvision python3-onnx

For each classification and segmentation network of torchvision whose weights
fit in one ONNX file (under protobuf's 2 GiB), at each opset: export it with
torch.onnx.export (default arguments, random weights, eval mode; a weight the
network initialises to all zeros, such as ViT's head, gets random values, so
that the output is not all zeros; a network whose output hardly moves with
the input under its random weights is flagged, since agreement then says
little), and run it through rig itself, once per runtime of the cpu device:

    rig --no-history run MODEL -d cpu:runtime=RUNTIME,threads=N --input x.npy --output DIR --json J

(the device normalises the model at load, as it does for a user), on the same
input PyTorch gets (written as .npy), and compare each output rig wrote with
PyTorch's: max|rig - torch| / max|torch| (target <= 1e-4). Per runtime it
reports whether the model loads and runs (else rig's named error, which
carries the runtime's own message), and the relative error; "not built" where
the rig given was built without that runtime (ONNX Runtime on Debian 12).
Unless --no-bench, it also benches each runtime briefly with rig bench.
Prints one row per network and opset.

    nice -n 19 /usr/bin/python3 tools/check-torchvision.py --rig build/src/cli/rig \
        [--opsets default,13] [--runtimes ort,opencv] [--threads 1] \
        [--only resnet18,mobilenet_v2] [--timeout 900] [--no-bench] [--markdown] [--keep DIR] \
        [--bisect] [--params]

--opsets: "default" exports without opset_version (the exporter's own
default: 17 for PyTorch 2.6); the row names the opset the model declares.
--params prints each network's parameter count and float32 weight size
without exporting anything (which ones are over 2 GiB); --keep DIR keeps the
exported models, the input and rig's outputs there; --bisect, when the OpenCV
runtime fails at its first inference, finds the first OpenCV layer that fails
in the copy the cpu device loads (`rig model normalize --cpu-forms`) with
python3-opencv (the binding's OpenCV, which should be the one rig links). Every error is reported in full: the exporter's first line,
rig's named error (with the runtime's refusal in it).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
import torchvision

warnings.filterwarnings("ignore")
torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))

# Weights over 2 GiB of float32 do not fit one ONNX file.
TOO_BIG = 2 * 1024**3
TARGET = 1e-4

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


def declared_opset(path):
    """The default-domain opset the exported model declares ("?" without python3-onnx)."""
    try:
        import onnx
        m = onnx.load(path, load_external_data=False)
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                return str(o.version)
    except Exception:
        pass
    return "?"


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
    """' (python3-opencv X: first failing layer NAME)', by bisection over the layers."""
    try:
        import cv2
    except ImportError:
        return " (--bisect needs python3-opencv)"
    try:
        names = cv2.dnn.readNetFromONNX(path).getLayerNames()
    except Exception as e:
        return f" (python3-opencv {cv2.__version__} refuses to import it: {opencv_refusal(e)})"

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
        return f" (python3-opencv {cv2.__version__} runs it)"
    while lo < hi:
        mid = (lo + hi) // 2
        if runs_to(mid):
            lo = mid + 1
        else:
            hi = mid
    return f" (python3-opencv {cv2.__version__}: first failing layer {names[lo]})"


def file_stem(name, index, used):
    """The file rig run --output writes for an output (run_command.cpp's file_stem):
    anything but [A-Za-z0-9._-] becomes '_'; a clash gets '.INDEX'."""
    out = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in name)
    if out in ("", ".", ".."):
        out = f"output{index}"
    if out in used:
        out += f".{index}"
    used.add(out)
    return out


def rig_error(text):
    """rig's named error: its 'rig: error: ...' line (the last line otherwise)."""
    lines = [l for l in text.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("rig: error:"):
            return l
    return lines[-1] if lines else "(no output)"


RUN_TIMEOUT = 900


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return 124, f"rig: error: timeout: the check gave up after {RUN_TIMEOUT} s (--timeout)"
    return p.returncode, (p.stdout + p.stderr).strip()


def fill_zero_weights(model):
    """Gives every all-zero weight matrix or kernel (ndim >= 2) random values.

    Some networks zero-initialise their last layer (vit_*: heads.head), so with
    random weights their output is all zeros, which every runtime reproduces
    exactly whatever it computes before: the comparison would say nothing.
    Returns the names of the tensors filled."""
    filled = []
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.dim() >= 2 and p.is_floating_point() and not torch.any(p):
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                filled.append(n)
    return filled


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def relative_error(got, expected):
    """max over outputs of max|a - b| / max|b|; or a reason the outputs do not compare."""
    if len(got) != len(expected):
        return None, f"{len(got)} outputs from rig, {len(expected)} from torch"
    worst = 0.0
    for a, b in zip(got, expected):
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        if a.shape != b.shape:
            return None, f"output sizes differ: {a.size} from rig, {b.size} from torch"
        if not np.all(np.isfinite(a)):
            return None, "rig's output has non-finite values"
        if b.size > 1 and float(np.ptp(b)) == 0.0:
            return None, "torch's output is constant: the comparison would say nothing"
        scale = float(np.max(np.abs(b))) or 1.0
        worst = max(worst, float(np.max(np.abs(a - b))) / scale)
    return worst, ""


def run_runtime(rig, runtime, threads, raw, xfile, expected, workdir, bench, bisect, x):
    """One runtime's cell: {loads, agrees, error, bench, normalised, device}."""
    cell = {"loads": "no", "agrees": "", "error": "", "bench": "", "normalised": "", "device": ""}
    spec = f"cpu:runtime={runtime},threads={threads}"
    outdir = os.path.join(workdir, f"out-{runtime}")
    shutil.rmtree(outdir, ignore_errors=True)
    jfile = os.path.join(workdir, f"run-{runtime}.json")
    if os.path.exists(jfile):
        os.remove(jfile)
    t0 = time.time()
    rc, text = run([rig, "--no-history", "run", raw, "-d", spec, "--input", xfile,
                    "--output", outdir, "--json", jfile, "-q"])
    cell["seconds"] = time.time() - t0
    if rc != 0:
        err = rig_error(text)
        if not text:
            err = (f"rig run was killed by signal {-rc}, with no message" if rc < 0 else
                   f"rig run exited {rc}, with no message")
        if "is not built" in err:
            cell["loads"] = "not built"
            cell["error"] = err
            return cell
        cell["error"] = err
        if bisect and runtime == "opencv" and "inference failed" in err:
            norm = os.path.join(workdir, "cpu-forms.onnx")
            nrc, ntext = run([rig, "--no-history", "model", "normalize", raw, "-o", norm,
                              "--cpu-forms"])
            cell["error"] += (first_failing_layer(norm, x) if nrc == 0 else
                              " (rig model normalize: " + rig_error(ntext) + ")")
        return cell
    with open(jfile) as f:
        result = json.load(f)
    cell["loads"] = "yes"
    dev = result.get("environment", {}).get("device", {})
    cell["device"] = dev.get("description", "")
    norm = result.get("model", {}).get("normalization", {})
    if norm.get("ran"):
        rw = norm.get("rewrites", {})
        cell["normalised"] = (f"nodes {norm.get('nodes_before')} -> {norm.get('nodes_after')}, " +
                              ("rewrites: " + ", ".join(f"{k} {v}" for k, v in sorted(rw.items()))
                               if rw else "no rewrites"))
    got = []
    used = set()
    for i, out in enumerate(result.get("outputs", [])):
        path = os.path.join(outdir, file_stem(out["name"], i, used) + ".npy")
        if not os.path.exists(path):
            cands = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
            cell["agrees"] = "no"
            cell["error"] = f"rig wrote no {path} (it wrote {', '.join(cands) or 'nothing'})"
            return cell
        got.append(np.load(path))
    worst, why = relative_error(got, expected)
    if worst is None:
        cell["agrees"] = "no"
        cell["error"] = why
        return cell
    cell["agrees"] = f"{'yes' if worst <= TARGET else 'NO'} ({worst:.1e})"
    if bench:
        rc, text = run([rig, "--no-history", "bench", raw, "-d", spec, "--duration", "0.5s",
                        "--repeats", "1", "--latency-samples", "3", "--min-inferences", "3", "-q"])
        if rc in (0, 1):
            rate = [l for l in text.splitlines() if "rate (median" in l]
            cell["bench"] = "yes" + (" (" + rate[0].split(")")[1].strip().split()[0] + "/s)"
                                     if rate else "")
        else:
            cell["bench"] = "no: " + rig_error(text)
    return cell


def summary(cell):
    """One table cell per runtime."""
    if cell["loads"] == "not built":
        return "not built"
    if cell["loads"] != "yes":
        return "no: " + cell["error"]
    text = cell["agrees"] if cell["agrees"] else "runs"
    if cell["agrees"] == "no":
        text = "runs, does not compare: " + cell["error"]
    if cell["bench"]:
        text += "; bench " + cell["bench"]
    return text


def check(name, opset, args, workdir, runtimes):
    row = {"network": name, "opset": opset, "exports": "no", "normalised": "", "error": "",
           "note": ""}
    for rt in runtimes:
        row[rt] = ""
    model = build(name)
    params = parameters(model)
    if params * 4 >= TOO_BIG:
        row["error"] = f"weights {params * 4 / 2**30:.2f} GiB ({params} parameters): over protobuf's 2 GiB"
        return row
    filled = fill_zero_weights(model)
    if filled:
        row["note"] = "random values in the all-zero " + ", ".join(filled)
    size = input_size(name)
    torch.manual_seed(0)
    x = torch.rand(1, 3, size, size)
    raw = os.path.join(workdir, f"{name}-{opset}.onnx")
    try:
        # Exported as a user would, outside torch.no_grad(): under no_grad,
        # nn.MultiheadAttention in eval mode takes its fused fast path
        # (aten::_native_multi_head_attention), which PyTorch 1.13 cannot export.
        kw = {} if opset == "default" else {"opset_version": int(opset)}
        torch.onnx.export(model, x, raw, **kw)
        with torch.no_grad():
            expected = [t.numpy() for t in outputs_of(model(x))]
            other = [t.numpy() for t in outputs_of(model(torch.rand(1, 3, size, size)))]
    except Exception as e:  # an export failure is the exporter's, recorded as such
        lines = [l for l in str(e).splitlines() if l.strip()]
        row["error"] = "export: " + (lines[0] if lines else type(e).__name__)
        return row
    del model
    row["exports"] = "yes"
    # With some random initialisations the activations vanish and the output is
    # about the last bias whatever the input: agreement would then say little.
    spread, _ = relative_error(other, expected)
    if spread is not None and spread < 100 * TARGET:
        row["note"] = ((row["note"] + "; ") if row["note"] else "") + (
            f"torch's output hardly depends on the input with these random weights "
            f"(another input moves it by {spread:.1e} relative): an agreement not well "
            f"below that says little")
    if opset == "default":
        row["opset"] = declared_opset(raw) + " (default)"
    xfile = os.path.join(workdir, "x.npy")
    xn = np.ascontiguousarray(x.numpy(), dtype=np.float32)
    np.save(xfile, xn)
    for rt in runtimes:
        cell = run_runtime(args.rig, rt, args.threads, raw, xfile, expected, workdir,
                           not args.no_bench, args.bisect, xn)
        row[rt] = summary(cell)
        row[rt + "_cell"] = cell
        if cell["normalised"] and not row["normalised"]:
            row["normalised"] = cell["normalised"]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rig", default="build/src/cli/rig")
    ap.add_argument("--opsets", default="default",
                    help="comma-separated; 'default': the exporter's own default opset")
    ap.add_argument("--runtimes", default="ort,opencv", help="runtimes of the cpu device to run")
    ap.add_argument("--threads", type=int, default=1, help="threads= of each runtime")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=900, help="seconds each rig command may take")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--bisect", action="store_true",
                    help="when OpenCV's first inference fails, find the layer (python3-opencv)")
    ap.add_argument("--keep", default="", help="keep the exported models and outputs here")
    ap.add_argument("--params", action="store_true",
                    help="print parameter counts and float32 weight sizes only; export nothing")
    args = ap.parse_args()
    global RUN_TIMEOUT
    RUN_TIMEOUT = args.timeout
    names = [n for n in args.only.split(",") if n] or classification_names() + SEGMENTATION
    if args.params:
        for name in names:
            n = parameters(build(name))
            over = " over 2 GiB: skipped" if n * 4 >= TOO_BIG else ""
            print(f"{name}\t{n}\t{n * 4 / 2**30:.2f} GiB{over}", flush=True)
        return 0
    runtimes = [r for r in args.runtimes.split(",") if r]
    opsets = [o.strip() for o in args.opsets.split(",") if o.strip()]
    cols = ["network", "opset", "exports", "normalised"] + runtimes + ["error", "note"]
    print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}, rig {args.rig}, "
          f"-d cpu:runtime=R,threads={args.threads}, target {TARGET:g}", flush=True)
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + " --- |" * len(cols))
    with tempfile.TemporaryDirectory(prefix="rig-tv-") as tmp:
        for name in names:
            for opset in opsets:
                workdir = os.path.join(args.keep, name) if args.keep else tmp
                os.makedirs(workdir, exist_ok=True)
                t0 = time.time()
                try:
                    row = check(name, opset, args, workdir, runtimes)
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
                for rt in runtimes:
                    dev = row.get(rt + "_cell", {}).get("device")
                    if dev:
                        print(f"#   {name} {rt}: {dev}, rig run "
                              f"{row[rt + '_cell']['seconds']:.1f}s", flush=True)
                if not args.keep:
                    for f in os.listdir(tmp):
                        p = os.path.join(tmp, f)
                        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)


if __name__ == "__main__":
    sys.exit(main())
