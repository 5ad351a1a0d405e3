#!/usr/bin/python3
"""Checks that include/rig/rig.sigs, include/rig/rig.h and the functions
librig_c.so exports agree: every function in one is in the others, with the
same argument and return types, and the library exports nothing else.

  check_sigs.py --sigs rig.sigs --header rig.h --library librig_c.so

Exits 1 listing every disagreement. The functions are also imported by
sigs_test.py, which feeds them broken inputs."""
import argparse
import re
import subprocess
import sys

# The closed set of types rig.sigs may use (its header comment lists them).
TYPES = {
    "void", "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t", "double",
    "const char*", "char*", "const void*", "void*",
    "rig_device*", "rig_model*", "const rig_model*",
    "size_t*", "const size_t*", "uint32_t*", "uint64_t*", "int64_t*",
    "const int64_t**", "const char**", "char**", "const void**", "void**",
    "rig_device**", "rig_model**",
}

# Symbols every shared library defines, not functions of its own.
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def normalise_type(text):
    """'const char *' -> 'const char*'"""
    t = re.sub(r"\s+", " ", text.strip())
    t = re.sub(r"\s*\*\s*", "*", t)
    return t


def parse_sigs(text):
    """{name: (return_type, [arg_types])}; raises ValueError on a bad line."""
    sigs = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"(\w+)\((.*)\)\s*->\s*(.+)", line)
        if not m:
            raise ValueError("rig.sigs line %d is not NAME(TYPES) -> TYPE: %r" % (number, raw))
        name, args, ret = m.group(1), m.group(2).strip(), normalise_type(m.group(3))
        arg_types = [normalise_type(a) for a in args.split(",")] if args else []
        for t in arg_types + [ret]:
            if t not in TYPES:
                raise ValueError("rig.sigs line %d: type %r is not in the closed set" % (number, t))
        if "void" in arg_types:
            raise ValueError("rig.sigs line %d: void is a return type only" % number)
        if name in sigs:
            raise ValueError("rig.sigs line %d: %s is listed twice" % (number, name))
        sigs[name] = (ret, arg_types)
    return sigs


def parse_header(text):
    """{name: (return_type, [arg_types])} of every RIG_API declaration."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    decls = {}
    for m in re.finditer(r"\bRIG_API\s+([^;(]+?)\s*\b(\w+)\s*\(([^)]*)\)\s*;", text):
        ret, name, params = normalise_type(m.group(1)), m.group(2), m.group(3).strip()
        arg_types = []
        if params and params != "void":
            for p in params.split(","):
                p = normalise_type(p)
                # Drop the parameter name: the last identifier after the type.
                pm = re.fullmatch(r"(.*?[\s*])(\w+)", p)
                t = normalise_type(pm.group(1)) if pm and pm.group(1).strip() else p
                arg_types.append(t)
        decls[name] = (ret, arg_types)
    return decls


def exported_symbols(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1].split("@")[0]
        if kind == "A" or name in LINKER_SYMBOLS:
            continue
        symbols.add(name)
    return symbols


def disagreements(sigs, header, exported):
    problems = []
    for name in sorted(sigs):
        if name not in header:
            problems.append("%s is in rig.sigs but not declared in rig.h" % name)
        elif header[name] != sigs[name]:
            problems.append("%s differs: rig.sigs says %s, rig.h says %s" %
                            (name, describe(sigs[name]), describe(header[name])))
        if exported is not None and name not in exported:
            problems.append("%s is in rig.sigs but the library does not export it" % name)
    for name in sorted(header):
        if name not in sigs:
            problems.append("%s is declared in rig.h but missing from rig.sigs" % name)
    if exported is not None:
        for name in sorted(exported):
            if name not in sigs and name not in header:
                problems.append("the library exports %s, which neither rig.sigs nor rig.h declares"
                                % name)
    return problems


def describe(sig):
    ret, args = sig
    return "(%s) -> %s" % (", ".join(args), ret)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sigs", required=True)
    ap.add_argument("--header", required=True)
    ap.add_argument("--library")
    a = ap.parse_args()
    with open(a.sigs) as f:
        sigs = parse_sigs(f.read())
    with open(a.header) as f:
        header = parse_header(f.read())
    exported = exported_symbols(a.library) if a.library else None
    problems = disagreements(sigs, header, exported)
    for p in problems:
        print("check_sigs: " + p)
    if problems:
        return 1
    print("check_sigs: %d functions agree in rig.sigs, rig.h%s" %
          (len(sigs), " and the library's exports" if exported is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
