#!/usr/bin/env python3
"""Writes test/fixtures/fast_cases.h: what MLX 0.31.1's CPU build returns
for mx.fast.rms_norm, layer_norm, rope (int and array offsets, base or
freqs, traditional or not, dims below the last axis) and
scaled_dot_product_attention (no mask, causal, boolean and additive masks
of broadcast shapes, sinks, grouped-query heads, Lq != Lk), in float32,
float16, bfloat16 and float64 where MLX allows; and the vjp of each
through mx.vjp with a fixed cotangent. test/test_fast.c rebuilds the
inputs from the same values (exact in every input dtype) and compares.

Needs MLX's CPU wheel in a venv CI never depends on:
    python3 -m venv /work/venv-mlx
    /work/venv-mlx/bin/pip install 'mlx[cpu]==0.31.1' numpy
Run (from the repository root):
    /work/venv-mlx/bin/python scripts/make_fast_fixtures.py
"""
import os

import mlx.core as mx
import numpy as np

assert mx.__version__ == "0.31.1", mx.__version__
OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "fast_cases.h")

DT = {"bool": 0, "int32": 7, "float16": 9, "float32": 10, "float64": 11, "bfloat16": 12}
MX = {"bool": mx.bool_, "int32": mx.int32, "float16": mx.float16, "float32": mx.float32,
      "float64": mx.float64, "bfloat16": mx.bfloat16}
OPS = {"rms_norm": 0, "layer_norm": 1, "rope": 2, "rope_dynamic": 3, "sdpa": 4}
# tolerances (relative, absolute) by output dtype: our float32 accumulation
# order differs from MLX's, and the half types round once at the end in
# attention where MLX rounds its scores and probabilities; MLX's CPU softmax
# is only float32-accurate for float64 (1.5e-7 from numpy's float64 attention)
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-6, 1e-6), "float16": (1e-2, 2e-3),
       "bfloat16": (3e-2, 3e-2)}

rng = np.random.RandomState(11)
pool = []
cases = []
SIZES = {}


def put(values):
    off = len(pool)
    pool.extend(float(v) for v in np.asarray(values, dtype=np.float64).ravel())
    return off


def rand(shape, dtype, lo=-2.0, hi=2.0):
    """An MLX array of dtype whose values are exact in every float dtype we use."""
    v = rng.uniform(lo, hi, shape).astype(np.float32)
    a = mx.array(v).astype(mx.bfloat16).astype(mx.float16).astype(MX[dtype])
    return a


def arr_input(a, dtype=None):
    dt = dtype or str(a.dtype).split(".")[-1].replace("bool_", "bool")
    return {"dtype": DT[dt], "shape": list(a.shape), "off": put(np.array(a.astype(mx.float64)))}


def case(name, op, inputs, out, params, grad=None, cot=None, tol_dt=None):
    if cot is not None and not isinstance(cot, int):
        cot = put(np.array(cot.astype(mx.float64)))
    c = {"name": name, "op": OPS[op], "in": inputs, "params": params, "grad": -1 if grad is None else grad,
         "cot": cot if cot is not None else 0,
         "out_dtype": DT[str(out.dtype).split(".")[-1]], "out_shape": list(out.shape),
         "out": put(np.array(out.astype(mx.float64))), "tol": TOL[tol_dt]}
    if op in ("rms_norm", "layer_norm", "rope", "rope_dynamic") and tol_dt == "float64":
        # MLX normalises float64 in float32 (we keep float64: MLX is the less exact
        # one) and takes rope's angles in float32, as we do
        c["tol"] = TOL["float32"]
    cases.append(c)
    SIZES[name] = len(pool)


def grads(fn, primals, out_dt, name, op, inputs, params, which):
    out = fn(*primals)
    cot = rand(out.shape, out_dt)
    _, vjps = mx.vjp(lambda *a: fn(*a), list(primals), [cot])
    cot = put(np.array(cot.astype(mx.float64)))
    for i in which:
        case(f"{name}_vjp{i}", op, inputs, vjps[i], params, grad=i, cot=cot, tol_dt=out_dt)


NONE = {"present": 0}

# ---- norms ----
for dt in ("float32", "float16", "bfloat16", "float64"):
    for shape, hw, hb in (((3, 7), True, True), ((2, 3, 33), False, False), ((4, 64), True, False),
                          ((5,), False, True)):
        x = rand(shape, dt)
        w = rand((shape[-1],), dt) if hw else None
        b = rand((shape[-1],), dt) if hb else None
        eps = 1e-5
        nm = f"{dt}_{'x'.join(map(str, shape))}"
        ins = [arr_input(x), arr_input(w) if hw else NONE]
        case(f"rms_norm_{nm}", "rms_norm", ins, mx.fast.rms_norm(x, w, eps), {"eps": eps}, tol_dt=dt)
        ins3 = [arr_input(x), arr_input(w) if hw else NONE, arr_input(b) if hb else NONE]
        case(f"layer_norm_{nm}", "layer_norm", ins3, mx.fast.layer_norm(x, w, b, eps), {"eps": eps}, tol_dt=dt)
        if dt in ("float32", "float64") and hw:
            grads(lambda x_, w_: mx.fast.rms_norm(x_, w_, eps), [x, w], dt, f"rms_norm_{nm}", "rms_norm", ins,
                  {"eps": eps}, (0, 1))
            if hb:
                grads(lambda x_, w_, b_: mx.fast.layer_norm(x_, w_, b_, eps), [x, w, b], dt, f"layer_norm_{nm}",
                      "layer_norm", ins3, {"eps": eps}, (0, 1, 2))
# a weight of another dtype promotes
x = rand((3, 8), "float16")
w = rand((8,), "float32")
case("rms_norm_promote", "rms_norm", [arr_input(x), arr_input(w)], mx.fast.rms_norm(x, w, 1e-6), {"eps": 1e-6},
     tol_dt="float32")

# ---- rope ----
for dt in ("float32", "float16", "bfloat16", "float64"):
    for shape, dims, trad, base, scale, off, freqs in (
            ((2, 3, 5, 16), 16, False, 10000.0, 1.0, 0, False),
            ((2, 3, 5, 16), 16, True, 10000.0, 1.0, 3, False),
            ((1, 4, 6, 12), 8, False, 500.0, 0.5, 7, False),
            ((1, 4, 6, 12), 8, True, None, 1.0, 2, True),
            ((2, 7, 10), 6, False, 10000.0, 2.0, 1, False),
            ((1, 2, 2, 3, 8), 8, True, 10000.0, 1.0, 0, False)):
        x = rand(shape, dt)
        f = mx.array(rng.uniform(1.0, 50.0, dims // 2).astype(np.float32)) if freqs else None
        out = mx.fast.rope(x, dims, traditional=trad, base=base, scale=scale, offset=off, freqs=f)
        p = {"dims": dims, "trad": int(trad), "has_base": int(base is not None), "base": base or 0.0,
             "scale": scale, "offset": off}
        nm = f"rope_{dt}_{'x'.join(map(str, shape))}_d{dims}_{'t' if trad else 'n'}_o{off}{'_f' if freqs else ''}"
        ins = [arr_input(x), arr_input(f, "float32") if freqs else NONE]
        case(nm, "rope", ins, out, p, tol_dt=dt)
        if dt == "float32":
            grads(lambda x_: mx.fast.rope(x_, dims, traditional=trad, base=base, scale=scale, offset=off, freqs=f),
                  [x], dt, nm, "rope", ins, p, (0,))
    # an offset per batch entry
    x = rand((3, 2, 4, 8), dt)
    offs = mx.array([0, 5, 11], dtype=mx.int32)
    out = mx.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0, offset=offs)
    case(f"rope_dynamic_{dt}", "rope_dynamic",
         [arr_input(x), NONE, {"dtype": DT["int32"], "shape": [3], "off": put([0, 5, 11])}], out,
         {"dims": 8, "trad": 0, "has_base": 1, "base": 10000.0, "scale": 1.0, "offset": 0}, tol_dt=dt)

# ---- attention ----
SDPA = [
    # B, Hq, Hkv, Lq, Lk, D, Dv, mode, mask (None, "bool", "add"), mask shape, sinks
    (1, 2, 2, 5, 5, 8, 8, "", None, None, False),
    (2, 4, 2, 7, 9, 16, 8, "", None, None, False),
    (1, 2, 1, 70, 260, 4, 4, "causal", None, None, False),
    (1, 2, 2, 9, 5, 8, 8, "causal", None, None, False),
    (1, 1, 1, 3, 520, 4, 4, "causal", None, None, False),
    (2, 4, 2, 6, 70, 4, 4, "array", "bool", (2, 1, 6, 70), False),
    (1, 2, 2, 6, 6, 8, 8, "array", "bool", (6, 6), False),
    (1, 3, 3, 5, 9, 8, 8, "array", "add", (1, 3, 5, 9), False),
    (2, 2, 1, 3, 270, 4, 3, "array", "add", (270,), False),
    (1, 4, 2, 5, 7, 8, 8, "", None, None, True),
    (1, 4, 2, 66, 20, 4, 4, "causal", None, None, True),
    (1, 2, 2, 3, 4, 8, 8, "array", "allfalse", (3, 4), False),
]
for dt in ("float32", "float16", "bfloat16", "float64"):
    for i, (B, Hq, Hkv, Lq, Lk, D, Dv, mode, mk, mshape, sk) in enumerate(SDPA):
        if dt == "float64" and i not in (1, 3, 7, 9):
            continue
        if dt in ("float16", "bfloat16") and i not in (0, 1, 5, 10):
            continue
        q = rand((B, Hq, Lq, D), dt)
        k = rand((B, Hkv, Lk, D), dt)
        v = rand((B, Hkv, Lk, Dv), dt)
        scale = float(1.0 / np.sqrt(D)) if i % 2 == 0 else 0.7
        mask = None
        if mk in ("bool", "allfalse"):
            mb = rng.rand(*mshape) < 0.7
            if mk == "allfalse":
                mb[1, :] = False
            mask = mx.array(mb)
        elif mk == "add":
            mask = rand(mshape, dt, -3.0, 1.0)
        sinks = rand((Hq,), dt, -1.0, 1.0) if sk else None
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=("causal" if mode == "causal" else mask),
                                                   sinks=sinks)
        ins = [arr_input(q), arr_input(k), arr_input(v),
               (arr_input(mask, "bool") if mk in ("bool", "allfalse") else arr_input(mask)) if mask is not None else NONE,
               arr_input(sinks) if sk else NONE]
        p = {"mode": mode, "scale": scale}
        nm = f"sdpa_{dt}_{i}_{mode or 'none'}{'_' + mk if mk else ''}{'_sinks' if sk else ''}"
        case(nm, "sdpa", ins, out, p, tol_dt=dt)
        if dt == "float32" and Lq * Lk < 100000:
            def f(q_, k_, v_, *rest):
                m_ = mask
                s_ = sinks
                r = list(rest)
                if mk == "add":
                    m_ = r.pop(0)
                if sk:
                    s_ = r.pop(0)
                return mx.fast.scaled_dot_product_attention(
                    q_, k_, v_, scale=scale, mask=("causal" if mode == "causal" else m_), sinks=s_)
            prim = [q, k, v] + ([mask] if mk == "add" else []) + ([sinks] if sk else [])
            which = list(range(len(prim)))
            out_ = f(*prim)
            cot = rand(out_.shape, dt)
            _, vjps = mx.vjp(f, prim, [cot])
            cot = put(np.array(cot.astype(mx.float64)))
            for j in which:
                idx = j if j < 3 else (3 if (mk == "add" and j == 3) else 4)
                case(f"{nm}_vjp{idx}", "sdpa", ins, vjps[j], p, grad=idx, cot=cot, tol_dt=dt)


def num(v):
    if not np.isfinite(v):
        return "-1e308*10" if v < 0 else "1e308*10"
    if float(np.float32(v)) == v:
        t = "%.9g" % v
        return t
    return repr(v)


def cstr(s):
    return '"' + s + '"'


with open(OUT, "w") as fh:
    fh.write("/* Generated by scripts/make_fast_fixtures.py from MLX %s: do not edit. */\n" % mx.__version__)
    fh.write("#ifndef TEST_FIXTURES_FAST_CASES_H\n#define TEST_FIXTURES_FAST_CASES_H\n\n#include <stddef.h>\n\n")
    fh.write("typedef struct fast_input {\n    int present, dtype, ndim, shape[5];\n    size_t off;\n} fast_input;\n\n")
    fh.write("typedef struct fast_case {\n    const char *name;\n    int op; /* 0 rms_norm, 1 layer_norm, 2 rope, "
             "3 rope_dynamic, 4 sdpa */\n    fast_input in[5];\n    float eps;\n    int dims, traditional, has_base;\n"
             "    float base, scale;\n    int offset;\n    const char *mask_mode;\n    float sdpa_scale;\n"
             "    int grad; /* -1: the output; else the vjp of input grad with cotangent at cot */\n    size_t cot;\n"
             "    int out_dtype, out_ndim, out_shape[5];\n    size_t out;\n    double rtol, atol;\n} fast_case;\n\n")
    fh.write("static const double fast_pool[] = {\n")
    for i in range(0, len(pool), 6):
        fh.write("    " + ", ".join(num(v) for v in pool[i:i + 6]) + ",\n")
    fh.write("};\n\nstatic const fast_case fast_cases[] = {\n")
    for c in cases:
        ins = []
        for a in c["in"] + [NONE] * (5 - len(c["in"])):
            if not a.get("present", 1):
                ins.append("{0}")
            else:
                sh = a["shape"] + [0] * (5 - len(a["shape"]))
                ins.append("{1, %d, %d, {%s}, %d}" % (a["dtype"], len(a["shape"]), ", ".join(map(str, sh)), a["off"]))
        p = c["params"]
        osh = c["out_shape"] + [0] * (5 - len(c["out_shape"]))
        fh.write("    {%s, %d, {%s}, %r, %d, %d, %d, %r, %r, %d, %s, %r, %d, %d, %d, %d, {%s}, %d, %r, %r},\n" % (
            cstr(c["name"]), c["op"], ", ".join(ins), float(p.get("eps", 0.0)), p.get("dims", 0), p.get("trad", 0),
            p.get("has_base", 0), float(p.get("base", 0.0)), float(p.get("scale", 0.0)), p.get("offset", 0),
            cstr(p.get("mode", "")), float(p.get("scale", 0.0)) if c["op"] == 4 else 0.0, c["grad"], c["cot"],
            c["out_dtype"], len(c["out_shape"]), ", ".join(map(str, osh)), c["out"], c["tol"][0], c["tol"][1]))
    fh.write("};\n\n#endif\n")
print(len(cases), "cases,", len(pool), "values")
prev = 0
big = []
for k_, v_ in SIZES.items():
    big.append((v_ - prev, k_))
    prev = v_
print(sorted(big)[-3:])
