"""rig: the measurement rig's C ABI (librig_c.so) from Python.

Standard library only (ctypes); numpy is used when present, never required.
At import the package reads rig.sigs (the declarative list of the library's
functions) and binds each function from it, then offers:

    dev = rig.Device("cpu")             # or "sim:compute=2ms", "tcp://host:port"
    model = dev.load("model.onnx")      # a path, or the model's bytes
    model.inputs, model.outputs         # [Tensor(name, dtype, shape, bytes)]
    outs = model.run([data])            # any buffer-protocol objects -> memoryviews
    result = rig.bench("model.onnx", "sim:compute=2ms", duration_s=1, repeats=1)

Errors raise rig.Error, carrying .status (the C status code) and .message
(the library's last error text).

Where things are found:
  the library: $RIG_LIBRARY, else librig_c.so next to this package (or in
               the lib/ directory an install puts it in), else the linker's
               search path;
  rig.sigs:    $RIG_SIGS, else next to this package, else the source tree's
               include/rig/rig.sigs.
"""
import ctypes
import ctypes.util
import json
import os
import re
import threading

__all__ = ["Error", "Device", "Model", "Tensor", "bench", "abi_version", "library_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))

_C = ctypes
_TYPES = {
    "void": None,
    "int32_t": _C.c_int32,
    "uint32_t": _C.c_uint32,
    "int64_t": _C.c_int64,
    "uint64_t": _C.c_uint64,
    "size_t": _C.c_size_t,
    "double": _C.c_double,
    "const char*": _C.c_char_p,
    "char*": _C.c_void_p,  # returned strings are freed with rig_string_free
    "const void*": _C.c_void_p,
    "void*": _C.c_void_p,
    "rig_device*": _C.c_void_p,
    "rig_model*": _C.c_void_p,
    "const rig_model*": _C.c_void_p,
    "size_t*": _C.POINTER(_C.c_size_t),
    "const size_t*": _C.POINTER(_C.c_size_t),
    "uint32_t*": _C.POINTER(_C.c_uint32),
    "uint64_t*": _C.POINTER(_C.c_uint64),
    "int64_t*": _C.POINTER(_C.c_int64),
    "const int64_t**": _C.POINTER(_C.POINTER(_C.c_int64)),
    "const char**": _C.POINTER(_C.c_char_p),
    "char**": _C.POINTER(_C.c_void_p),
    "const void**": _C.POINTER(_C.c_void_p),
    "void**": _C.POINTER(_C.c_void_p),
    "rig_device**": _C.POINTER(_C.c_void_p),
    "rig_model**": _C.POINTER(_C.c_void_p),
}

_INPUT, _OUTPUT = 0, 1
_OK = 0


class Error(Exception):
    """A failed call: .status is the C status code (2: invalid argument, ...),
    .message the library's last error text."""

    def __init__(self, status, message):
        super().__init__("rig status %d: %s" % (status, message))
        self.status = status
        self.message = message


def _normalise(t):
    t = re.sub(r"\s+", " ", t.strip())
    return re.sub(r"\s*\*\s*", "*", t)


def parse_sigs(text):
    """{name: (return_type, [arg_types])} from rig.sigs text."""
    sigs = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"(\w+)\((.*)\)\s*->\s*(.+)", line)
        if not m:
            raise ImportError("rig.sigs line %d is not NAME(TYPES) -> TYPE: %r" % (number, raw))
        args = m.group(2).strip()
        arg_types = [_normalise(a) for a in args.split(",")] if args else []
        ret = _normalise(m.group(3))
        for t in arg_types + [ret]:
            if t not in _TYPES:
                raise ImportError("rig.sigs line %d: unknown type %r" % (number, t))
        sigs[m.group(1)] = (ret, arg_types)
    return sigs


def _first_existing(paths):
    for p in paths:
        if p and os.path.isfile(p):
            return p
    return None


def _find_sigs():
    env = os.environ.get("RIG_SIGS")
    if env:
        return env
    found = _first_existing([
        os.path.join(_HERE, "rig.sigs"),
        os.path.join(_HERE, "..", "..", "include", "rig", "rig.sigs"),
    ])
    if not found:
        raise ImportError("rig: rig.sigs not found next to the package; set RIG_SIGS")
    return found


def _find_library():
    env = os.environ.get("RIG_LIBRARY")
    if env:
        return env
    try:  # an install writes where the library went (cmake/RigInstall.cmake)
        from . import _location
        installed = os.path.join(_HERE, _location.LIBRARY_DIR, "librig_c.so")
    except ImportError:
        installed = None
    found = _first_existing([
        installed,
        os.path.join(_HERE, "librig_c.so"),
        os.path.join(_HERE, "..", "librig_c.so"),
    ])
    return found or ctypes.util.find_library("rig_c") or "librig_c.so"


def _bind():
    path = _find_library()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("rig: cannot load %s (%s); set RIG_LIBRARY to librig_c.so" % (path, e))
    with open(_find_sigs()) as f:
        sigs = parse_sigs(f.read())
    functions = {}
    for name, (ret, args) in sigs.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError("rig: %s lacks %s, which rig.sigs lists" % (path, name))
        fn.restype = _TYPES[ret]
        fn.argtypes = [_TYPES[a] for a in args]
        functions[name] = fn
    return path, functions


library_path, _fn = _bind()


def _check(status):
    if status != _OK:
        raise Error(status, _fn["rig_last_error"]().decode("utf-8", "replace"))


def abi_version():
    return _fn["rig_abi_version"]()


class _Buffer:
    """A pointer to the bytes of any buffer-protocol object, kept alive."""

    def __init__(self, obj, writable=False):
        if isinstance(obj, bytes) and not writable:
            self.keep = obj
            self.size = len(obj)
            self.pointer = ctypes.cast(ctypes.c_char_p(obj), ctypes.c_void_p)
            return
        view = memoryview(obj)
        if view.nbytes and not view.c_contiguous:
            if writable:
                raise ValueError("rig: an output buffer must be C-contiguous")
            view = memoryview(view.tobytes())
        view = view.cast("B") if view.nbytes else view
        if view.readonly:
            if writable:
                raise ValueError("rig: an output buffer must be writable")
            data = bytes(view)
            self.keep = data
            self.size = len(data)
            self.pointer = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
            return
        self.size = view.nbytes
        array = (ctypes.c_char * max(self.size, 1)).from_buffer(view) if self.size else None
        self.keep = (view, array)
        self.pointer = ctypes.cast(array, ctypes.c_void_p) if array is not None else \
            ctypes.c_void_p(None)


class Tensor:
    """One input or output: name, dtype (NumPy's spelling), shape, bytes."""

    def __init__(self, name, dtype, shape, nbytes):
        self.name, self.dtype, self.shape, self.bytes = name, dtype, tuple(shape), nbytes

    def __repr__(self):
        return "Tensor(%r, %r, %r, bytes=%d)" % (self.name, self.dtype, self.shape, self.bytes)


class Device:
    """A device opened from a spec: "cpu", "sim:...", "tcp://host:port"."""

    # Thread safety: every method may be called from any thread. A call on
    # the C handle holds self._lock, so close() waits for a load in progress
    # and a load after close() raises Error instead of using a freed handle
    # (the C ABI's contract: a handle is not freed while a call uses it).

    def __init__(self, spec):
        self._lock = threading.Lock()
        self._handle = None
        handle = ctypes.c_void_p()
        _check(_fn["rig_device_open"](spec.encode(), ctypes.byref(handle)))
        self._handle = handle

    def load(self, model, name=None):
        """Loads a model from a path (str or os.PathLike) or its bytes (any
        buffer). A later load on the same device retires the earlier Model."""
        handle = ctypes.c_void_p()
        with self._lock:
            if isinstance(model, (str, os.PathLike)):
                _check(_fn["rig_model_load"](self._require(), os.fsencode(model),
                                             ctypes.byref(handle)))
            else:
                buf = _Buffer(model)
                _check(_fn["rig_model_load_bytes"](self._require(), buf.pointer, buf.size,
                                                    (name or "model").encode(),
                                                    ctypes.byref(handle)))
        return Model(handle)

    def close(self):
        with self._lock:
            if self._handle:
                _fn["rig_device_close"](self._handle)
                self._handle = None

    def _require(self):
        if not self._handle:
            raise Error(2, "the device is closed")
        return self._handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Model:
    """A model loaded on a device. .inputs / .outputs describe its tensors."""

    # Thread safety: run() and free() may be called from any thread. Each C
    # call holds self._lock (the C ABI serialises calls on one device anyway),
    # so free() waits for the runs in flight, and a run after free() raises
    # Error ("the model was freed") rather than passing a freed handle.

    def __init__(self, handle):
        self._lock = threading.Lock()
        self._handle = handle
        self.inputs = self._tensors(_INPUT)
        self.outputs = self._tensors(_OUTPUT)

    def _require(self):
        if not self._handle:
            raise Error(2, "the model was freed (Model.free())")
        return self._handle

    def _tensors(self, kind):
        count = ctypes.c_size_t()
        _check(_fn["rig_model_count"](self._handle, kind, ctypes.byref(count)))
        out = []
        for i in range(count.value):
            name, dtype = ctypes.c_char_p(), ctypes.c_char_p()
            rank, nbytes = ctypes.c_size_t(), ctypes.c_size_t()
            shape = ctypes.POINTER(ctypes.c_int64)()
            _check(_fn["rig_model_tensor"](self._handle, kind, i, ctypes.byref(name),
                                           ctypes.byref(dtype), ctypes.byref(rank),
                                           ctypes.byref(shape), ctypes.byref(nbytes)))
            out.append(Tensor(name.value.decode(), dtype.value.decode(),
                              [shape[d] for d in range(rank.value)], nbytes.value))
        return out

    def run(self, inputs, as_numpy=False):
        """One inference. `inputs`: a list in the model's input order, a dict
        by input name, or one object for a one-input model; each any
        buffer-protocol object of exactly the input's byte size. Returns one
        memoryview per output (numpy arrays of the output's dtype and shape
        with as_numpy=True, which needs numpy)."""
        if isinstance(inputs, dict):
            missing = [t.name for t in self.inputs if t.name not in inputs]
            if missing:
                raise Error(2, "inputs lack %s" % ", ".join(missing))
            inputs = [inputs[t.name] for t in self.inputs]
        elif not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        ins = [_Buffer(x) for x in inputs]
        results = [bytearray(t.bytes) for t in self.outputs]
        outs = [_Buffer(r, writable=True) for r in results]
        n_in, n_out = len(ins), len(outs)
        in_ptrs = (ctypes.c_void_p * max(n_in, 1))(*[b.pointer.value for b in ins])
        in_sizes = (ctypes.c_size_t * max(n_in, 1))(*[b.size for b in ins])
        out_ptrs = (ctypes.c_void_p * max(n_out, 1))(*[b.pointer.value for b in outs])
        out_sizes = (ctypes.c_size_t * max(n_out, 1))(*[b.size for b in outs])
        with self._lock:
            _check(_fn["rig_model_run"](self._require(), in_ptrs, in_sizes, n_in, out_ptrs,
                                        out_sizes, n_out))
        del outs  # releases the exports of `results`
        if as_numpy:
            import numpy
            return [numpy.frombuffer(r, dtype=t.dtype).reshape(t.shape)
                    for r, t in zip(results, self.outputs)]
        return [memoryview(r) for r in results]

    def free(self):
        with self._lock:
            if self._handle:
                _fn["rig_model_free"](self._handle)
                self._handle = None

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass


def bench(model=None, device="cpu", **settings):
    """Runs `rig bench` in process and returns its result document as a dict
    (the schema of rig bench --json). `settings` are the keys of a result's
    settings.effective: duration_s, repeats, depth, latency_samples, ..."""
    doc = dict(settings)
    doc["model"] = os.fspath(model) if model is not None else ""
    doc["device"] = device
    out = ctypes.c_void_p()
    _check(_fn["rig_bench"](json.dumps(doc).encode(), ctypes.byref(out)))
    try:
        return json.loads(ctypes.string_at(out.value).decode("utf-8"))
    finally:
        _fn["rig_string_free"](out)
