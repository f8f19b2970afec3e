"""Turns the result lines of a bench run into docs/benchmarks.md.

Input: a directory of text files holding the lines that the bench
programs and the reference scripts (numpy_ref.py, ml_ref.py, conv_ref.py,
fast_ref.py, quant_ref.py, mm_ext_ref.py, io_ref.py) print ("BENCH side=.. name=.. threads=..
median_ns=..", "INFO key=value") and the "META key=value" lines that
bench/run.sh writes; files named <program>-<round>.txt. A figure measured
in several rounds shows the median of its round medians. A ratio is taken
per round, between the reference and our figure of that round (measured
seconds apart), and the median of those ratios is reported with their
range. Every ratio is reference time / our time (above 1: faster than the
reference), except the thread-scaling row: our 1-thread time / our
2-thread time, and the backward-cost row: our step time / our forward time
(a target that is an upper bound).

Usage: report.py RESULTS_DIR OUTPUT.md
"""
import glob
import os
import re
import statistics
import sys

BYTES_16M_3 = 3 * 16 * 1024 * 1024 * 4  # STREAM add/triad traffic counted


def parse(results_dir):
    figs = {}   # (side, name, threads) -> {"rounds": {round: median}, ..}
    info = {}   # (program, key) -> value
    meta = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "*.txt"))):
        m = re.search(r"-(\d+)\.txt$", path)
        rnd = int(m.group(1)) if m else 0
        program = None
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("META "):
                    k, _, v = line[5:].partition("=")
                    meta[k] = v
                elif line.startswith("INFO "):
                    k, _, v = line[5:].partition("=")
                    if k == "program":
                        program = v
                    info[(program, k)] = v
                elif line.startswith("BENCH "):
                    kv = dict(p.split("=", 1) for p in line[6:].split())
                    key = (kv["side"], kv["name"], int(kv["threads"]))
                    entry = figs.setdefault(key, {"rounds": {}, "status": None,
                                                  "reps": 0, "symbol": None})
                    if "median_ns" in kv:
                        entry["rounds"][rnd] = int(kv["median_ns"])
                        entry["reps"] += int(kv["reps"])
                    else:
                        entry["status"] = kv.get("status", "failed")
                        entry["symbol"] = kv.get("symbol")
    return figs, info, meta


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


FRAMEWORKS = {"jax": "JAX", "mlx": "MLX", "torch": "PyTorch"}


class Report:
    def __init__(self, figs, meta=None):
        self.figs = figs
        self.meta = meta or {}
        self.rows = []   # for the summary of targets

    def time(self, side, name, threads):
        e = self.figs.get((side, name, threads))
        if not e or not e["rounds"]:
            return None
        return statistics.median(e["rounds"].values())

    def ratios(self, ours, ref):
        """Per-round ref/ours ratios, for the rounds that have both."""
        a = self.figs.get(ours, {}).get("rounds", {})
        b = self.figs.get(ref, {}).get("rounds", {})
        return [b[k] / a[k] for k in sorted(a) if k in b and a[k] > 0]

    def state(self, side, name, threads):
        e = self.figs.get((side, name, threads))
        if e is None:
            return "not measured"
        if e["rounds"]:
            return None
        if e["status"] == "unavailable" and e["symbol"] in FRAMEWORKS:
            py = self.meta.get(f"{e['symbol']}_python", "its python")
            return f"not measured: {FRAMEWORKS[e['symbol']]} not installed for `{py}`"
        if e["status"] == "unavailable":
            return f"not available yet (`{e['symbol']}` not exported)"
        return "failed"

    def row(self, label, ours, ref, ref_label, target, note="", at_most=False):
        """ours/ref: (side, name, threads). Returns a markdown table row.
        at_most: the target is an upper bound on the ratio, not a lower one."""
        t_ours = self.time(*ours)
        t_ref = self.time(*ref)
        problem = self.state(*ours) or self.state(*ref)
        per_round = self.ratios(ours, ref)
        ratio = statistics.median(per_round) if per_round else None
        if problem:
            verdict = problem
        elif target is None:
            verdict = "(no target)"
        else:
            ok = ratio <= target if at_most else ratio >= target
            verdict = "met" if ok else "**not met**"
        tgt = (f"{'≤' if at_most else '≥'} {target:g}x" if target is not None
               else "—")
        rtxt = f"{ratio:.2f}x" if ratio is not None else "—"
        spread = (f"{min(per_round):.2f}–{max(per_round):.2f}"
                  if len(per_round) > 1 else "—")
        if target is not None:
            self.rows.append((label, rtxt, tgt, verdict))
        return (f"| {label} | {fmt_time(t_ours)} | {ours[2]} | {ref_label} | "
                f"{fmt_time(t_ref)} | {rtxt} | {spread} | {tgt} | {verdict} |{note}")


HEAD = ("| figure | ours | threads | reference | ref. time | ratio "
        "| per-round range | target | result |\n"
        "|---|---|---|---|---|---|---|---|---|")


def gbs(ns):
    return f"{BYTES_16M_3 / ns:.1f} GB/s" if ns else "—"


CONV_LAYERS = (("conv3x3_56x56x64", "3x3, 56x56x64 -> 64"),
               ("conv3x3_28x28x128", "3x3, 28x28x128 -> 128"),
               ("conv1x1_56x56x64_256", "1x1, 56x56x64 -> 256"),
               ("conv3x3_s2_56x56x64_128", "3x3 stride 2, 56x56x64 -> 128"),
               ("dwconv3x3_56x56x128", "depthwise 3x3, 56x56x128"))


def conv_flops(name):
    """2 * M * N * K of the layer's equivalent GEMM, as bench_conv.c."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import conv_ref
    for layer in conv_ref.LAYERS:
        if layer[0] == name:
            return conv_ref.flops(layer)
    return None


def conv_section(r, w):
    w("## Convolutions (batch 8, channels last, float32)")
    w("")
    w("`bench/bench_conv.c` through `mlx_conv2d` against `cblas_sgemm` on the "
      "equivalent GEMM (M = batch x output pixels, N = output channels, K = "
      "kernel x input channels; 2 OpenBLAS threads, in a process of its own) "
      "and `bench/conv_ref.py`: JAX (`jax.jit` of `lax.conv_general_dilated`), "
      "PyTorch (`conv2d`, `torch.set_num_threads(2)`) and MLX's CPU build "
      "(`mx.conv2d`), 2 threads each, in the same rounds (MLX's in the first "
      "round only: it is slow).")
    w("")
    w(HEAD)
    for name, label in CONV_LAYERS:
        ours = ("lib", name, 2)
        if not name.startswith("dw"):
            w(r.row(f"{label} vs sgemm", ours, ("sgemm", name, 2),
                    "cblas_sgemm, same GEMM", 0.7))
        if name in ("conv3x3_56x56x64", "conv3x3_28x28x128"):
            w(r.row(f"{label} vs im2col", ours, ("direct", name, 2),
                    "our im2col path (Winograd off)", None))
            w(r.row(f"{label} vs F(2x2)", ours, ("wino2", name, 2),
                    "our Winograd F(2x2, 3x3) forced", None))
            w(r.row(f"{label} vs F(4x4)", ours, ("wino4", name, 2),
                    "our Winograd F(4x4, 3x3) forced", None))
        for side, target in (("jax", 0.8), ("torch", 1.5), ("mlx", 2.0)):
            w(r.row(f"{label} vs {FRAMEWORKS[side]}", ours, (side, name, 2),
                    FRAMEWORKS[side], target))
    w("")
    rates = []
    for name, label in CONV_LAYERS:
        t, f = r.time("lib", name, 2), conv_flops(name)
        if t and f:
            rates.append(f"{label}: {f / t:.1f}")
    if rates:
        w("Ours in GFLOP/s (the equivalent GEMM's multiply-adds x 2 per "
          "second): " + "; ".join(rates) + ".")
        w("")


def fast_section(r, w, info):
    w("## fast.h (float32)")
    w("")
    w("`bench/bench_fast.c`: rms_norm and layer_norm of 4096 rows of 4096 "
      "against copying the same 64 MiB (our `mlx_copy` on as many threads, "
      "and one `memcpy`), and scaled_dot_product_attention (batch 1, 32 "
      "heads, L 1024, D 128) against our own unfused composition (matmul, "
      "softmax, matmul) in the same program; `bench/fast_ref.py` runs MLX's "
      "CPU build (`mx.fast.*`) on the same shapes in the same rounds.")
    w("")
    w(HEAD)
    for op, label in (("rms_norm", "rms_norm"), ("layer_norm", "layer_norm")):
        name = f"fast_{op}_4096x4096"
        w(r.row(f"{label} 4096x4096 vs copy", ("mlx", name, 2),
                ("ref", "copy_4096x4096", 2), "`mlx_copy`, same data", 0.8))
        w(r.row(f"{label} vs memcpy", ("mlx", name, 2),
                ("ref", "memcpy_64MiB", 1), "memcpy 64 MiB, 1 thread", None))
        w(r.row(f"{label} vs MLX", ("mlx", name, 2), ("mlxpy", name, 2),
                "MLX `mx.fast`", None))
    for causal, tag in (("", ""), ("causal_", ", causal")):
        name = f"fast_sdpa_{causal}L1024_H32_D128"
        w(r.row(f"sdpa L 1024{tag} vs unfused", ("mlx", name, 2),
                ("ref", f"unfused_sdpa_{causal}L1024_H32_D128", 2),
                "our matmul, softmax, matmul", 2.0))
        w(r.row(f"sdpa L 1024{tag} vs MLX", ("mlx", name, 2),
                ("mlxpy", name, 2), "MLX `mx.fast`", None))
    w("")
    sdpa_bound(r, w)
    mem = info.get((None, "memory")) or info.get(("bench_fast", "memory"))
    w("Attention's memory at L 8192 (batch 1, 32 heads, D 128; target: under "
      "64 MiB beyond its inputs and output), from `bench_fast memory` in a "
      f"fresh process: {mem or 'not measured (a smoke run skips it)'}.")
    w("")


SDPA_FLOPS = 2 * (2 * 1024 * 1024 * 128) * 32  # Q K^T and P V, 32 heads


def sdpa_bound(r, w):
    """Attention's GEMM floor from `bench_fast bound`: cblas_sgemm's rates,
    the unfused composition's pieces and the best fused/unfused ratio."""
    sq = r.time("sgemm", "sgemm_4096x4096x4096", 2)
    if sq is None:
        w("Attention's GEMM floor: not measured (`bench_fast bound`).")
        w("")
        return
    w("Attention's GEMM floor (`bench_fast bound`): the problem is "
      f"{SDPA_FLOPS / 1e9:.1f} GFLOP of GEMM (Q K^T and P V, 2·L²·D each, "
      "32 heads). `cblas_sgemm` alone on the same data, OpenBLAS on 1 and 2 "
      "threads; \"tiles\" are the products of the fused kernel's BLAS path "
      "(float64, or strided or half-type K and V too large to convert per "
      "head): 256 queries x 256 keys, one OpenBLAS thread per worker, heads "
      "split, no softmax. float32 runs the panel path, whose own "
      "register-blocked product (simd/attn_k.c) reads K and V in place.")
    w("")
    w("| GEMM | threads | time | GFLOP/s |\n|---|---|---|---|")
    rows = (("4096³ square (peak)", "sgemm_4096x4096x4096", 2 * 4096 ** 3),
            ("Q K^T, one head (1024x128 · 128x1024)", "sgemm_qkT_1024x1024x128",
             2 * 1024 * 1024 * 128),
            ("P V, one head (1024x1024 · 1024x128)", "sgemm_pv_1024x128x1024",
             2 * 1024 * 1024 * 128),
            ("both, 32 heads, one call sequence", "sgemm_qkT_pv_H32_L1024_D128",
             SDPA_FLOPS),
            ("BLAS path's tiles, 32 heads", "sgemm_tiles_256x256_H32_L1024_D128",
             SDPA_FLOPS))
    best = 0.0
    for label, name, flops in rows:
        for t in (1, 2):
            tm = r.time("sgemm", name, t)
            if tm:
                w(f"| {label} | {t} | {fmt_time(tm)} | {flops / tm:.1f} |")
                # the most generous rate: 2 threads, or 1 thread's twice
                best = max(best, flops / tm * (2 / t))
    w("")
    fused = r.time("mlx", "fast_sdpa_L1024_H32_D128", 2)
    unf = r.time("ref", "unfused_sdpa_L1024_H32_D128", 2)
    pieces = [r.time("ref", n, 2) for n in ("unfused_qkT_matmul_L1024_H32_D128",
                                            "unfused_softmax_L1024_H32",
                                            "unfused_pv_matmul_L1024_H32_D128")]
    tiles = r.time("sgemm", "sgemm_tiles_256x256_H32_L1024_D128", 2)
    if None not in pieces:
        w(f"Unfused composition, 2 threads: Q K^T matmul {fmt_time(pieces[0])}, "
          f"softmax {fmt_time(pieces[1])}, P V matmul {fmt_time(pieces[2])} "
          f"(sum {fmt_time(sum(pieces))}; whole composition {fmt_time(unf)}).")
    if fused and tiles:
        w(f"Fused kernel, 2 threads: {fmt_time(fused)} "
          f"({SDPA_FLOPS / fused:.1f} GFLOP/s, softmax and loads included); "
          f"the BLAS path's tile products alone take {fmt_time(tiles)}.")
    if best and unf:
        floor = SDPA_FLOPS / best
        w(f"Best possible fused time: the GEMM alone (no softmax) at the "
          f"best rate measured for 2 threads (or twice the best 1-thread "
          f"rate, if higher: {best:.1f} GFLOP/s) takes {fmt_time(floor)}, so "
          f"the best fused/unfused ratio is {unf / floor:.2f}x (unfused "
          f"{fmt_time(unf)} / {fmt_time(floor)}); 2x would need "
          f"{2 * SDPA_FLOPS / unf:.1f} GFLOP/s"
          + (f", {fused and unf / fused:.2f}x reached." if fused else "."))
    w("")


# 4-bit affine, group 64: packed weights plus a float32 scale and bias a group
QUANT_SHAPES = (("decode_4096x4096", "decode, x 1x4096, W 4096x4096", 4096, 4096),
                ("decode_11008x4096", "decode, x 1x4096, W 11008x4096", 11008, 4096),
                ("prefill_512_4096x4096", "prefill, x 512x4096, W 4096x4096", 4096, 4096))
# the decode of 4096x4096 again, taking eight copies of W in turn (84 MB, more
# than a last-level cache holds): each call streams its weights from memory
QUANT_COLD = (("decode_cold_4096x4096", "decode, x 1x4096, W 4096x4096, weights not cached", 4096, 4096),)


def quant_section(r, w, figs):
    w("## Quantized matmul (4-bit affine, group 64, float32 activations)")
    w("")
    w("`bench/bench_quant.c`: `mlx_quantized_matmul` against our float32 "
      "matmul of the same shapes and, for the matrix-vector (decode) case, "
      "against the floor memory bandwidth sets: the bytes of the packed "
      "weights, scales and biases over the read bandwidth a float32 sum of "
      "256 MiB reaches in the same program (ratio = floor time / our time). "
      "`bench/quant_ref.py`: MLX's CPU `mx.quantized_matmul` in the same "
      "rounds. Threads: the library's default (shown as 0).")
    w("")
    w(HEAD)
    for name, label, n, k in QUANT_SHAPES:
        ours = ("mlx-cpu", f"qmm_{name}", 0)
        w(r.row(f"{label} vs float32 matmul", ours,
                ("mlx-cpu", f"f32_matmul_{name}", 0), "our float32 matmul", None))
        w(r.row(f"{label} vs MLX", ours, ("mlx", f"qmm_{name}", 0),
                "MLX `quantized_matmul`", None))
    w("")
    w("| figure | ours | bandwidth floor | ratio | per-round range | target | result |")
    w("|---|---|---|---|---|---|---|")
    bw = figs.get(("mlx-cpu", "sum_f32_256MiB", 0), {}).get("rounds", {})
    for name, label, n, k in QUANT_SHAPES + QUANT_COLD:
        if not name.startswith("decode"):
            continue
        ours = figs.get(("mlx-cpu", f"qmm_{name}", 0), {}).get("rounds", {})
        nbytes = n * k / 2 + 2 * n * (k // 64) * 4
        per = [nbytes * bw[rd] / (256 * 2 ** 20) / ours[rd]
               for rd in sorted(ours) if rd in bw and ours[rd]]
        floors = [nbytes * bw[rd] / (256 * 2 ** 20) for rd in sorted(bw)]
        ratio = statistics.median(per) if per else None
        verdict = ("not measured" if ratio is None
                   else "met" if ratio >= 0.7 else "**not met**")
        rtxt = f"{ratio:.2f}x" if ratio is not None else "—"
        spread = f"{min(per):.2f}–{max(per):.2f}" if len(per) > 1 else "—"
        t = r.time("mlx-cpu", f"qmm_{name}", 0)
        fl = statistics.median(floors) if floors else None
        w(f"| {label} | {fmt_time(t)} | {fmt_time(fl)} | {rtxt} | {spread} | ≥ 0.7x | {verdict} |")
        r.rows.append((f"qmm {label} vs bandwidth floor", rtxt, "≥ 0.7x", verdict))
    w("")


def mm_ext_section(r, w):
    w("## gather_mm and block_masked_mm (float32)")
    w("")
    w("`bench/bench_matmul_ext.c`: `mlx_gather_mm` for a mixture-of-experts "
      "layer (8 experts of 1024x1024, 64 tokens, 2 experts each; unsorted and "
      "sorted indices) against the same 128 products as plain matmuls and "
      "against the dense bound (every token through every expert, one "
      "batched matmul, 4x the work); `mlx_block_masked_mm` (1024³, 64-blocks, "
      "half the output blocks masked) against the plain 1024³ matmul. "
      "`bench/mm_ext_ref.py` runs MLX's CPU build on the same shapes in the "
      "same rounds. Threads: the library's default (shown as 0).")
    w("")
    w(HEAD)
    gm = ("ours", "gather_mm_moe_64x2_1024", 0)
    gs = ("ours", "gather_mm_moe_sorted_64x2_1024", 0)
    w(r.row("gather_mm MoE vs matmuls", gm, ("ours", "matmuls_moe_64x2_1024", 0),
            "our 128 matmuls", None))
    w(r.row("gather_mm MoE vs dense", gm, ("ours", "dense_all_experts_64_8x1024", 0),
            "our dense batched matmul", None))
    w(r.row("gather_mm MoE vs MLX", gm, ("mlx", "gather_mm_moe_64x2_1024", 0),
            "MLX `gather_mm`", None))
    w(r.row("gather_mm MoE, sorted, vs MLX", gs,
            ("mlx", "gather_mm_moe_sorted_64x2_1024", 0), "MLX `gather_mm`", None))
    bm = ("ours", "block_masked_mm_1024_half_rows", 0)
    w(r.row("block_masked_mm 1024, half masked, vs matmul", bm,
            ("ours", "matmul_1024", 0), "our matmul 1024", None))
    w(r.row("block_masked_mm 1024, half masked, vs MLX", bm,
            ("mlx", "block_masked_mm_1024_half_rows", 0), "MLX `block_masked_mm`", None))
    w("")


def io_section(r, w, info):
    w("## Loading safetensors")
    w("")
    size = info.get((None, "io_bytes"))
    what = f"a {int(size) / 2 ** 20:.0f} MiB file" if size else "a file"
    w(f"`bench/bench_io.c`: `mlx_load_safetensors` of {what} (eight "
      "float32 tensors, in the page cache) with every array evaluated, against "
      "the floors of reading it: `read()` into one fresh buffer (the copy and "
      "the page faults every loader returning new arrays pays) and into a "
      "reused 1 MiB one; `bench/io_ref.py` loads the same file with numpy "
      "(`np.fromfile`), the safetensors package's numpy loader and MLX "
      "(`mx.load`), in the same rounds.")
    w("")
    w(HEAD)
    load = ("c", "io_load_safetensors", 2)
    w(r.row("load vs read() into fresh memory", load, ("c", "io_floor_read_fresh", 1),
            "read() into a new buffer", None))
    w(r.row("load, buffer cache off, vs read() into fresh memory",
            ("c", "io_load_safetensors_nocache", 2), ("c", "io_floor_read_fresh", 1),
            "read() into a new buffer", None))
    w(r.row("load vs read() into a reused buffer", load, ("c", "io_floor_read_reused", 1),
            "read(), 1 MiB reused", None))
    for name, label in (("io_numpy_fromfile", "numpy `fromfile`"),
                        ("io_safetensors_numpy", "safetensors `load_file`"),
                        ("io_mlx_load", "MLX `mx.load`")):
        w(r.row(f"load vs {label}", load, ("py", name, 1), label, None))
    w("")


def distributed_section(r, w, info):
    w("## Distributed")
    w("")
    w("`bench/bench_distributed.c` under `mpirun -np 2` on this host (Open "
      "MPI, shared memory), once per run: float32 all_sum against "
      "MPI_Allreduce called directly in the same program, each repetition "
      "after a barrier, the slowest rank's time, the variants taking turns "
      "within each repetition; \"no check\" sets MLX_CPU_MPI_CHECK=0 (no "
      "agreement round trip before a large collective; a small all_sum "
      "carries its check in its one exchange either way); the lazy-op row is "
      "the floor of any op's per-call cost (no communication).")
    w("")
    ranks = int(info.get((None, "ranks"), "2"))
    w(HEAD)
    for size in ("1KiB", "1MiB", "64MiB"):
        name = f"all_sum_{size}"
        w(r.row(f"all_sum {size}", ("mlx-cpu", name, ranks),
                ("mpi_allreduce", name, ranks), "MPI_Allreduce", 0.9))
        w(r.row(f"all_sum {size}, no check", ("mlx-cpu", name + "_nocheck", ranks),
                ("mpi_allreduce", name, ranks), "MPI_Allreduce", None))
    w(r.row("one lazy op, no communication (negative 1KiB + eval)",
            ("mlx-cpu", "lazy_op_floor_1KiB", ranks),
            ("mpi_allreduce", "all_sum_1KiB", ranks), "MPI_Allreduce 1KiB", None))
    w("")


def vmap_section(r, w):
    w("## vmap")
    w("")
    w("vmap over a batch of 64 (trace, replace, evaluate per call) against "
      "the loop the per-element rule built before (the function on each "
      "element, stacked), float32, `bench/bench_vmap.c`; ratio = loop / "
      "vmap.")
    w("")
    w(HEAD)
    for label, name in (
            ("take of a (8000, 256) table at (64, 128) ids", "vmap_take_b64"),
            ("rms_norm of (64, 32, 512), weight unbatched", "vmap_rms_norm_b64"),
            ("conv1d of (64, 1, 128, 32), (64, 3, 32) kernel", "vmap_conv1d_b64"),
            ("normal((4096,)) over 64 keys", "vmap_random_normal_b64")):
        w(r.row(label, ("mlx", name, 2), ("loop", name, 2),
                "per-element loop", None))
    w("")


def build(figs, info, meta):
    r = Report(figs, meta)
    out = []
    w = out.append

    w("# Benchmarks")
    w("")
    w("Written by `bench/run.sh` (do not edit by hand; rerun it). Every figure "
      "is a median of repetitions after warm-up, timed with "
      "`clock_gettime(CLOCK_MONOTONIC)`, and every ratio is against a "
      "reference measured **in the same run** on the same machine: numpy "
      "(through `/usr/bin/python3`), a STREAM add/triad loop and direct "
      "`cblas_sgemm` calls in `bench/bench_ops.c`. Ratio = reference time / "
      "our time, so above 1 means faster than the reference (the thread-"
      "scaling row divides our 1-thread time by our 2-thread time, the "
      "backward-cost row our training step by our forward pass). Sizes "
      "are in float32 elements.")
    w("")
    w("## Run")
    w("")
    w(f"- date: {meta.get('date', '?')}")
    w(f"- CPU: {meta.get('cpu', '?')} ({meta.get('cores', '?')} cores online)")
    w(f"- load average (1 min) before / after the run: "
      f"{meta.get('load_before', '?')} / {meta.get('load_after', '?')} on "
      f"{meta.get('cores', '?')} cores. The machine (a VM) is shared with "
      f"other builds and tests, so absolute times are noisy and drift; the "
      f"per-round ratios compare figures taken seconds apart, and their "
      f"range shows how much the noise moved them.")
    commit = meta.get("commit", "?")
    if commit.endswith("-dirty"):
        commit += " (the work tree held uncommitted work in progress)"
    w(f"- library: commit {commit}, "
      f"{meta.get('buildtype', 'release')} build with {meta.get('cc', '?')}, "
      f"SIMD kernels in use (`mlx_cpu_isa()`): "
      f"**{info.get(('bench_ops', 'isa'), '?')}**")
    w(f"- threads: the library's default is "
      f"{info.get(('bench_ops', 'default_threads'), '?')}; each row says the "
      f"count it ran with (`mlx_cpu_set_num_threads`; the library keeps "
      f"OpenBLAS on one thread and splits large products across its own "
      f"workers). numpy's ufuncs and reductions run on 1 thread; its "
      f"matmul on {info.get(('numpy_ref', 'blas_threads'), '?')} OpenBLAS "
      f"threads.")
    w(f"- BLAS: ours links {info.get(('bench_ops', 'openblas_config'), '?')}, "
      f"kernel **{info.get(('bench_ops', 'openblas_core'), '?')}**; numpy "
      f"{info.get(('numpy_ref', 'numpy'), '?')} runs "
      f"{info.get(('numpy_ref', 'blas'), '?')}.")
    w(f"- environment: both the C programs and numpy ran under "
      f"`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` (before the run these "
      f"were: OPENBLAS_CORETYPE={meta.get('env_OPENBLAS_CORETYPE', '?')}, "
      f"OPENBLAS_L2_SIZE={meta.get('env_OPENBLAS_L2_SIZE', '?')}); tests and "
      f"CI keep the environment as it is.")
    w(f"- rounds: {meta.get('rounds', '?')}, each running every program "
      f"and its references in turn with "
      f"{meta.get('reps_scale', '?')} of their nominal repetitions (the "
      f"convolution, fast.h, quantization and io programs in the first "
      f"{meta.get('extra_rounds', '?')}, the attention memory figure and the "
      f"distributed one once); "
      f"{meta.get('seconds', '?')} s of measuring in all. A time shown is the "
      f"median of its round medians; a ratio is the median of the per-round "
      f"ratios (reference and ours measured seconds apart), with their "
      f"range beside it.")
    w("")

    w("## Elementwise, memory-bound (16M float32, output buffer reused from "
      "the cache)")
    w("")
    w(HEAD)
    for op in ("add", "multiply"):
        w(r.row(f"{op} 16M vs STREAM add", ("mlx", f"{op}_16M", 1),
                ("ref", "stream_add_16M", 1), "STREAM add, 1 thread", 0.9))
    for op, sym in (("add", "+"), ("multiply", "*")):
        w(r.row(f"{op} 16M vs numpy", ("mlx", f"{op}_16M", 2),
                ("numpy", f"{op}_16M", 1), f"numpy `x {sym} y`", 1.2))
    for op in ("add", "multiply"):
        w(r.row(f"{op} 16M vs STREAM add (2 threads)", ("mlx", f"{op}_16M", 2),
                ("ref", "stream_add_16M", 2), "STREAM add, 2 threads", None))
    w("")
    w("STREAM ceilings measured in this run (3 arrays of 64 MiB counted per "
      "pass):")
    w("")
    w("| loop | 1 thread | 2 threads |\n|---|---|---|")
    for k in ("add", "triad"):
        t1 = r.time("ref", f"stream_{k}_16M", 1)
        t2 = r.time("ref", f"stream_{k}_16M", 2)
        w(f"| STREAM {k} | {fmt_time(t1)} ({gbs(t1)}) | "
          f"{fmt_time(t2)} ({gbs(t2)}) |")
    w("")
    w("The STREAM loops are plain C loops (cloned for AVX2 on x86_64) with "
      "ordinary stores, which first read each output line into the cache; "
      "the library's kernels stream (non-temporal) stores of outputs of 8 "
      "MiB or more, so they move less data than the ceiling loop and can "
      "exceed 1.0x of it.")
    w("")

    w("## Transcendentals (1M float32)")
    w("")
    w(HEAD)
    for op in ("exp", "log", "tanh", "sin", "sigmoid"):
        ref = "numpy `1/(1+exp(-x))`" if op == "sigmoid" else f"numpy `{op}`"
        w(r.row(f"{op} 1M", ("mlx", f"{op}_1M", 2), ("numpy", f"{op}_1M", 1),
                ref, 3.0))
    for op in ("exp", "log", "tanh", "sin", "sigmoid"):
        ref = "numpy `1/(1+exp(-x))`" if op == "sigmoid" else f"numpy `{op}`"
        w(r.row(f"{op} 1M, one thread", ("mlx", f"{op}_1M", 1),
                ("numpy", f"{op}_1M", 1), ref, None))
    w("")
    w("The floor under these: a plain copy loop over the same 1M floats (4 "
      "MiB in, 4 MiB out), in this run. A ratio near 1 means the op runs "
      "at the speed of copying its data, so a faster math kernel would not "
      "help.")
    w("")
    w(HEAD)
    for t in (1, 2):
        for op in ("exp", "log", "tanh", "sin", "sigmoid"):
            w(r.row(f"{op} 1M vs copy", ("mlx", f"{op}_1M", t),
                    ("ref", "copy_1M", t), f"copy 1M, {t} thread"
                    f"{'s' if t > 1 else ''}", None))
    w("")
    floor = r.time("ref", "copy_1M", 2)
    asks = []
    for op in ("exp", "log", "tanh", "sin"):
        tn = r.time("numpy", f"{op}_1M", 1)
        if tn and floor:
            asks.append(f"{op} {fmt_time(tn / 3)} ({tn / 3 / floor:.2f}x the "
                        f"copy's time)")
    if asks:
        w("What the 3x targets ask, against this floor: numpy's time / 3 is "
          + ", ".join(asks) + f"; copying the data on 2 threads took "
          f"{fmt_time(floor)}. A target below 1.00x of the copy's time cannot "
          "be met by any kernel that reads its input and writes its output "
          "through the caches; only streaming (non-temporal) stores move less "
          "data, and the library keeps those for kernel calls writing 8 MiB "
          "or more, since an output streamed to memory costs the next op that "
          "reads it a trip to DRAM (measured once, when this was chosen: "
          "streaming 1M-float outputs made single ops 1.3x to 1.5x faster but an exp, "
          "multiply, add chain 1.4x slower on 2 threads).")
        w("")

    isa2 = info.get(("bench_ops_avx2", "isa"))
    w("## Transcendentals on the AVX2 kernels (1M float32)")
    w("")
    if isa2 == "avx2":
        w("The same ops with `MLX_CPU_ISA=avx2`, as an AVX2-only host would "
          "run them, against the same numpy figures (numpy keeps the best "
          "loops it has for this CPU, AVX-512 where it has them).")
        w("")
        w(HEAD)
        for op in ("exp", "log", "tanh", "sin", "sigmoid"):
            ref = ("numpy `1/(1+exp(-x))`" if op == "sigmoid"
                   else f"numpy `{op}`")
            w(r.row(f"{op} 1M, AVX2", ("mlx_avx2", f"{op}_1M", 2),
                    ("numpy", f"{op}_1M", 1), ref, None))
    else:
        w(f"Not measured on this host (the AVX2 pass ran the "
          f"{isa2 or 'no'} kernels).")
    w("")

    w("## Reductions")
    w("")
    w(HEAD)
    w(r.row("sum 16M", ("mlx", "sum_16M", 2), ("numpy", "sum_16M", 1),
            "numpy `x.sum()`", 1.2))
    w(r.row("softmax (4096, 1024), last axis",
            ("mlx", "softmax_4096x1024", 2), ("numpy", "softmax_4096x1024", 1),
            "numpy max/exp/sum/divide", 3.0))
    w(r.row("sum 16M, one thread", ("mlx", "sum_16M", 1),
            ("numpy", "sum_16M", 1), "numpy `x.sum()`", None))
    w(r.row("softmax, one thread", ("mlx", "softmax_4096x1024", 1),
            ("numpy", "softmax_4096x1024", 1), "numpy max/exp/sum/divide",
            None))
    w("")

    w("## Sorting and selection")
    w("")
    w(HEAD)
    w(r.row("sort 1M float32, one thread", ("mlx", "sort_1M", 1),
            ("numpy", "sort_1M", 1), "numpy `np.sort(x)`", 1.0))
    w(r.row("top-50 of (512, 32000), rows", ("mlx", "topk_512x32000", 2),
            ("numpy", "topk_512x32000", 1),
            "numpy `argpartition` + `take_along_axis`", 2.0))
    w(r.row("top-50, one thread", ("mlx", "topk_512x32000", 1),
            ("numpy", "topk_512x32000", 1),
            "numpy `argpartition` + `take_along_axis`", None))
    w("")
    w("Sort is a stable radix sort on order-keeping keys; topk is MLX's "
      "partition (libstdc++'s introselect, step for step, its scans done a "
      "block at a time without branches) and the slice of the last k, so "
      "the elements come in MLX's order.")
    w("")

    w("## Matmul (OpenBLAS)")
    w("")
    w(HEAD)
    w(r.row("matmul 1024x1024", ("mlx", "matmul_1024", 2),
            ("numpy", "matmul_1024", 2), "numpy `a @ b`", 0.95))
    w(r.row("batched (64, 128, 128)", ("mlx", "matmul_batch64x128", 2),
            ("ref", "matmul_batch64x128", 2), "cblas_sgemm in a loop", 0.9))
    w(r.row("matmul 1024x1024 vs cblas", ("mlx", "matmul_1024", 2),
            ("ref", "matmul_1024", 2), "one cblas_sgemm", None))
    w("")
    tm = r.time("mlx", "matmul_1024", 2)
    if tm:
        w(f"Ours reaches {2 * 1024 ** 3 / tm:.1f} GFLOP/s on 1024x1024. Both "
          f"sides call the same OpenBLAS with the kernel it picked for this "
          f"CPU (named under Run), so the ratios compare the calls around "
          f"it, not the kernel: ours splits a product into one "
          f"single-threaded call per worker, the direct cblas reference "
          f"runs on OpenBLAS's own threads.")
        w("")

    w("## Threads")
    w("")
    w(HEAD)
    w(r.row("exp 16M, 2 threads vs 1", ("mlx", "exp_16M", 2),
            ("mlx", "exp_16M", 1), "ours on 1 thread", 1.7))
    w(r.row("exp 16M vs copy 16M", ("mlx", "exp_16M", 1),
            ("ref", "copy_16M", 1), "copy 16M, 1 thread", None))
    w(r.row("copy 16M, 2 threads vs 1", ("ref", "copy_16M", 2),
            ("ref", "copy_16M", 1), "copy on 1 thread", None))
    w(r.row("STREAM add, 2 threads vs 1", ("ref", "stream_add_16M", 2),
            ("ref", "stream_add_16M", 1), "STREAM add, 1 thread", None))
    w("")
    w("The last three rows tell whether exp over 16M floats is bound by "
      "memory (ours near the copy loop's time) and how much the memory "
      "system itself gains from a second thread: a memory-bound op cannot "
      "scale further than the copy loop does.")
    w("")

    w("## Random numbers")
    w("")
    w(HEAD)
    w(r.row("normal 16M float32", ("mlx", "random_normal_16M", 2),
            ("numpy", "random_normal_16M", 1), "numpy `default_rng().standard_normal(dtype=float32)`", 3.0))
    w(r.row("uniform 16M float32", ("mlx", "random_uniform_16M", 2),
            ("numpy", "random_uniform_16M", 1), "numpy `default_rng().random(dtype=float32)`", 3.0))
    w(r.row("normal 16M, 2 threads vs 1", ("mlx", "random_normal_16M", 2),
            ("mlx", "random_normal_16M", 1), "ours on 1 thread", None))
    w(r.row("uniform 16M vs memset 64 MiB", ("mlx", "random_uniform_16M", 2),
            ("ref", "memset_64MiB", 1), "memset of the same bytes", None))
    w(r.row("bits 16M vs memset 64 MiB", ("mlx", "random_bits_16M", 2),
            ("ref", "memset_64MiB", 1), "memset of the same bytes", None))
    w("")
    w("Our figures include allocating and first-touching the 64 MiB result, "
      "as numpy's do. normal and uniform are MLX 0.31.1's numbers bit for "
      "bit (threefry2x32, MLX's erfinv with glibc's logf), computed in one "
      "pass per chunk of counters across the pool (simd/random_dist.c); "
      "the memset row is the floor for writing the same bytes.")
    w("")

    w("## Linear algebra")
    w("")
    w(HEAD)
    w(r.row("solve 1000 x (4x4) float64", ("mlx", "solve_1000x4x4_f64", 2),
            ("numpy", "solve_1000x4x4_f64", 2), "numpy `linalg.solve`", 1.0))
    w(r.row("solve 1000 x (4x4) float32", ("mlx", "solve_1000x4x4_f32", 2),
            ("numpy", "solve_1000x4x4_f32", 2), "numpy `linalg.solve`", 1.0))
    w(r.row("svd 1024x1024 float32 (U, S, Vt)", ("mlx", "svd_1024_f32", 2),
            ("numpy", "svd_1024_f32", 2), "numpy `linalg.svd`", 1.0))
    w("")
    w("One batched call each. The solves run one LAPACK gesv per "
      "matrix (numpy's call), the batch split over the pool; the SVD is one sgesdd on one "
      "thread (numpy's runs on OpenBLAS's threads).")
    w("## Fourier transforms")
    w("")
    w(HEAD)
    for name, label in (("fft_c64_2p20", "fft 2^20 complex64"),
                        ("fft_c64_1000x1000_last", "fft 1000x1000 complex64, last axis"),
                        ("fft_c64_1000x1000_first", "fft 1000x1000 complex64, first axis"),
                        ("rfft_f32_2p20", "rfft 2^20 float32")):
        w(r.row(label, ("mlx", name, 2), ("numpy", name, 1), "numpy.fft (pocketfft)", 0.8))
    w("")
    w("Ours: KissFFT in float32 (src/graph/prims_fft.c, fft_plan.c, "
      "fft_large.c): a batch's lines split across the pool, one transform "
      "per thread; a single long transform (2^16 points and more) as the "
      "four-step decomposition into short KissFFT transforms, split across "
      "the pool, and a long real one as a complex transform of half the "
      "length and the split step. numpy 1.24's pocketfft computes in "
      "complex128, one thread; on one thread its transforms of 1000 points "
      "are faster than KissFFT's, so the batch rows need the second thread.")
    w("")
    w("## Indexing (embedding lookup and its gradient)")
    w("")
    w(HEAD)
    w(r.row("gather 4096 rows of (32000, 1024) float32",
            ("mlx", "gather_rows_4096_of_32000x1024", 2),
            ("numpy", "gather_rows_4096_of_32000x1024", 1), "numpy `np.take(t, idx, axis=0)`", None))
    w(r.row("scatter_add 4096 rows into zeros (32000, 1024)",
            ("mlx", "scatter_add_rows_4096_into_32000x1024", 2),
            ("numpy", "scatter_add_rows_4096_into_32000x1024", 1), "numpy `np.zeros` + `np.add.at`", None))
    w("")
    w("The gather copies each row block with memcpy; the scatter_add fills "
      "the 128 MiB of zeros and adds each row, as the embedding's gradient "
      "(Gather's vjp) does. Both run on one thread.")
    w("")

    vmap_section(r, w)
    conv_section(r, w)
    fast_section(r, w, info)
    quant_section(r, w, figs)
    mm_ext_section(r, w)
    io_section(r, w, info)

    w("## compile")
    w("")
    w("A compiled 10-op elementwise function (add, multiply, subtract, "
      "maximum, multiply, add, abs, negative, exp, multiply) called on two "
      "4-element inputs: apply, evaluate, free, per call; and "
      "`mlx_detail_compile_erase(fun_id)` while 64 live threads each hold a "
      "trace of it.")
    w("")
    w("| figure | time | against | ratio |\n|---|---|---|---|")
    tc = r.time("mlx", "call_10ops_4elem_compiled", 1)
    tu = r.time("mlx", "call_10ops_4elem_uncompiled", 1)
    pr = r.ratios(("mlx", "call_10ops_4elem_compiled", 1),
                  ("mlx", "call_10ops_4elem_uncompiled", 1))
    ratio = (f"{statistics.median(pr):.2f}x faster compiled" if pr else "—")
    st = r.state("mlx", "call_10ops_4elem_compiled", 1)
    w(f"| compiled call (cache hit) | {st or fmt_time(tc)} | uncompiled "
      f"call: {fmt_time(tu)} | {ratio} |")
    te = r.time("mlx", "erase_64_threads_with_traces", 64)
    tn = r.time("mlx", "erase_64_threads_no_trace", 64)
    st = r.state("mlx", "erase_64_threads_with_traces", 64)
    w(f"| erase, 64 threads each holding a trace | {st or fmt_time(te)} | "
      f"erase of an id no cache holds: {fmt_time(tn)} | — |")
    w("")

    w("## Autodiff")
    w("")
    w("The training step of `examples/mlp.c`: a 784-256-256-10 GELU MLP, "
      "batch 256, float32, mean cross-entropy on one-hot labels, "
      "`value_and_grad` of the loss and the SGD update compiled as one "
      "function, the parameters carried from step to step "
      "(`bench/bench_grad.c`). The references run the same step in "
      "`bench/ml_ref.py`, 2 threads each: JAX (`jax.jit` of value_and_grad "
      f"+ update, `{meta.get('jax_python', '?')}`), MLX's CPU build "
      f"(`mx.compile`, `{meta.get('mlx_python', '?')}`) and PyTorch eager "
      f"(`torch.set_num_threads(2)`, `{meta.get('torch_python', '?')}`). "
      "Each framework runs right before ours in every round.")
    w("")
    w(HEAD)
    step = ("mlxcpu", "mlp_step", 2)
    for side, target in (("jax", 1.0), ("mlx", 2.0), ("torch", 1.5)):
        w(r.row(f"MLP step vs {FRAMEWORKS[side]}", step,
                (side, "mlp_step", 2), f"{FRAMEWORKS[side]} step", target))
    w(r.row("backward cost: step / forward", ("mlxcpu", "mlp_forward", 2),
            step, "ours, step", 2.5, at_most=True))
    w("")
    w("The backward-cost row divides our step time by our compiled forward "
      "loss alone (same inputs): what value_and_grad and the update add.")
    w("")
    w("| figure | time | target | result |\n|---|---|---|---|")
    to = r.time("mlxcpu", "grad_overhead_10op", 2)
    st = r.state("mlxcpu", "grad_overhead_10op", 2)
    verdict = st or ("met" if to <= 5000 else "**not met**")
    w(f"| compiled value_and_grad of a 10-op scalar function of 4 floats, "
      f"per call | {st or fmt_time(to)} | ≤ 5 µs | {verdict} |")
    r.rows.append(("value_and_grad overhead, 10 ops",
                   fmt_time(to) if to else "—", "≤ 5 µs", verdict))
    w("")

    distributed_section(r, w, info)

    w("## Targets at a glance")
    w("")
    w("| figure | ratio | target | result |\n|---|---|---|---|")
    for label, rtxt, tgt, verdict in r.rows:
        w(f"| {label} | {rtxt} | {tgt} | {verdict} |")
    w("")
    w("Reproduce with `bench/run.sh` (about 5 minutes plus the build; "
      "`BENCH_QUICK=1` for a smoke run with a third of the repetitions). "
      "Raw result lines of this run: `build-bench/bench-results/`.")
    w("")
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    figs, info, meta = parse(sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(build(figs, info, meta))


if __name__ == "__main__":
    main()
