#!/usr/bin/env python3
"""Writes docs/api.md, the table of the mlx-c API: every function declared
in include/mlx/c/*.h, whether the built library exports it, and notes.

    scripts/api_doc.py --lib build/libmlx-cpu.so           rewrite docs/api.md
    scripts/api_doc.py --lib build/libmlx-cpu.so --check   fail if it is stale

The check runs as a meson test, so the table cannot drift from the code:
a declared function that the library does not export is listed as missing
and fails the check (a program must never link silently to nothing)."""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Headers in the order the table lists them, with a one-line title.
HEADERS = [
    ("version.h", "Version"),
    ("string.h", "Strings"),
    ("error.h", "Errors"),
    ("array.h", "Arrays"),
    ("vector.h", "Vectors"),
    ("device.h", "Devices"),
    ("stream.h", "Streams"),
    ("closure.h", "Closures"),
    ("transforms.h", "Transforms"),
    ("transforms_impl.h", "Transforms: vmap"),
    ("compile.h", "Compile"),
    ("graph_utils.h", "Graph export"),
    ("memory.h", "Memory"),
    ("ops.h", "Ops"),
    ("random.h", "Random numbers"),
    ("map.h", "Maps"),
    ("io_types.h", "Readers and writers"),
    ("io.h", "Loading and saving (.npy, safetensors)"),
    ("export.h", "Exported functions (MLX's .mlxfn)"),
    ("linalg.h", "Linear algebra"),
    ("fft.h", "Fourier transforms"),
    ("fast.h", "Fast fused operations"),
    ("metal.h", "Metal"),
    ("cuda.h", "CUDA"),
    ("distributed_group.h", "Distributed groups"),
    ("distributed.h", "Distributed communication"),
    ("cpu.h", "mlx-cpu extensions"),
]

# Notes on functions whose behaviour a user should know about. Bounds of the
# float32 transcendentals are those of the SLEEF variant chosen per
# function by measured speed (simd/vec_math.h); float64 always uses the
# 1.0-ULP variants.
NOTES = {
    "mlx_imported_function_new": "reads MLX 0.31's format; imports every primitive MLX 0.31.1 writes from its CPU build: Abs, AddMM, Arange, ArcCos, ArcCosh, ArcSin, ArcSinh, ArcTan, ArcTan2, ArcTanh, ArgPartition, ArgReduce, ArgSort, AsStrided, AsType, BitwiseBinary, BlockMaskedMM, Broadcast, BroadcastAxes, Ceil, Cholesky, Concatenate, Conjugate, Convolution, Copy, Cos, Cosh, Depends, DivMod, Divide, DynamicSlice, DynamicSliceUpdate, Eig, Eigh, Equal, Erf, ErfInv, Exp, Expm1, ExpandDims, FFT, Flatten, Floor, Full, Gather, GatherAxis, GatherMM, GatherQMM (every mode), Greater, GreaterEqual, Hadamard, Imag, Inverse, Less, LessEqual, Log, Log1p, LogAddExp, LogSumExp, LogicalAnd, LogicalNot, LogicalOr, MaskedScatter, Matmul, Maximum, Minimum, Multiply, Negative, NotEqual, NumberOfElements, Pad, Partition, Power, QRF, Quantize (its dequantize form in affine mode only), QuantizedMatmul (affine, mxfp4, mxfp8, nvfp4), RandomBits (MLX's bits for the same key), Real, Reduce, Remainder, Reshape, Round, SVD, Scan, Scatter, ScatterAxis, Select, Sigmoid, Sign, Sin, Sinh, Slice, SliceUpdate, Softmax, Sort, Split, Sqrt, Square, Squeeze, StopGradient, Subtract, Tan, Tanh, Transpose, Unflatten, View; and of what MLX writes only from GPU traces, RMSNorm, LayerNorm, RoPE and ScaledDotProductAttention (with sinks, not its logsumexp output). DivMod truncates as MLX's kernel (its float remainder may differ from fmod by a rounding); MaskedScatter repeats the last source element where MLX fails for a short source. Any other (RMSNormVJP, LayerNormVJP, CustomKernel) fails with \"[import_function] unsupported primitive 'Name'\"",
    "mlx_export_function": "writes MLX 0.31's format (MLX imports it); the traced graph may hold every unary and binary function (isinf, isfinite, isposinf, isneginf written as MLX's compositions; bitwise_invert as a xor with all bits set, as MLX cannot read its BitwiseInvert), astype, view, copies and contiguous, views, slices and slice updates, slice_dynamic, slice_update_dynamic (MLX's DynamicSliceUpdate), diagonal, concatenate, pad, take, take_along_axis, gather, scatter (set, add, prod, max, min) and scatter along an axis (set, add), sum/prod/max/min/all/any/mean/var/std, argmax/argmin, softmax and logsumexp (MLX's primitives over the last axis, its compositions over others), cumulative ops, sorts and partitions, arange, matmul, addmm, gather_mm, block_masked_mm, convolutions, fft, hadamard_transform, divmod, depends, inv, tri_inv, cholesky, qr, svd, eig, eigh, eigvals, eigvalsh (several outputs as one record, as MLX), quantized_matmul in every mode, gather_qmm, affine quantize (MLX's fast::Quantize), mxfp4 quantize, affine and mxfp4 dequantize, random bits, split, uniform, normal, truncated_normal, gumbel, categorical, laplace, bernoulli, randint, permutation (MLX's compositions), and fast rms_norm, layer_norm, rope and scaled_dot_product_attention with sinks (MLX's CPU fallbacks); segmented_mm, qqmm, lu, lu_factor, solve (MLX cannot read LUF or SegmentedMM), to_fp8/from_fp8, mxfp8 and nvfp4 quantize and dequantize (MLX's CPU build codes fp8 with ConvertFP8, which it cannot write), custom functions and distributed ops fail with \"[export_function] Unable to export primitive ...\"; in a shapeless export, broadcasts are written as MLX's dynamic tracing writes them (matmul's batch axes as BroadcastAxes), counts as NumberOfElements",
    "mlx_clear_cache": "frees the shared cache and the calling thread's cache of small blocks (up to 4 KiB, at most 64 KiB a thread, counted in mlx_get_cache_memory); another thread's small blocks join the shared cache when it exits",
    "mlx_detail_vmap_trace": "MLX's checks and messages; an in axis outside [-1, ndim) is refused (docs/vmap.md)",
    "mlx_detail_vmap_replace": "MLX's rule per primitive, or MLX's error where MLX has none (docs/vmap.md)",
    "mlx_distributed_init": "MPI's world when launched by MPI (mpirun); else the singleton group (strict: MLX's error). docs/distributed.md",
    "mlx_distributed_all_sum": "checks that every process runs the same collective on the same dtype and size first (MLX_CPU_MPI_CHECK=0 skips it, except for up to 2 KiB, whose data travels with the check); waits at most MLX_CPU_MPI_TIMEOUT s (300)",
    "mlx_distributed_sum_scatter": "MPI_Reduce_scatter_block (MLX's MPI backend does not implement it)",
    "mlx_distributed_send": "no gradient, as MLX; on the singleton group (no MPI launch) evaluating it reports \"Communication not implemented in an empty distributed group\"",
    "mlx_distributed_recv": "a message of another dtype or size is refused, not received; on the singleton group evaluating it reports \"Communication not implemented in an empty distributed group\"",

    "mlx_fft_irfft": "float32 result; reads n/2 + 1 frequencies (docs/fft.md)",
    "mlx_fft_rfft": "a complex input keeps its real part, as MLX (docs/fft.md)",
    "mlx_fast_rms_norm": "float32 arithmetic for float16/bfloat16 as MLX; float64 stays float64 (MLX's CPU build computes it in float32)",
    "mlx_fast_layer_norm": "as mlx_fast_rms_norm",
    "mlx_fast_rope": "no vjp/jvp for offset or freqs (as MLX's vjp)",
    "mlx_fast_rope_dynamic": "as mlx_fast_rope",
    "mlx_fast_scaled_dot_product_attention": "tiled with an online softmax (no Lq x Lk scores); its derivatives build the scores, as MLX's",
    "mlx_fast_metal_kernel_new": "succeeds and keeps copies (MLX's CPU build fails here already)",
    "mlx_fast_metal_kernel_apply": "always fails: \"[metal_kernel] No Metal back-end.\"",
    "mlx_fast_cuda_kernel_new": "as mlx_fast_metal_kernel_new",
    "mlx_fast_cuda_kernel_apply": "always fails: \"[cuda_kernel] No CUDA back-end.\"",
    "mlx_metal_is_available": "false",
    "mlx_cuda_is_available": "false",
    "mlx_metal_start_capture": "does nothing and returns 0, as MLX's CPU build",
    "mlx_metal_stop_capture": "as mlx_metal_start_capture",
    "mlx_array_new_data_managed": "a failed creation does not run dtor (the caller keeps data)",
    "mlx_array_new_data_managed_payload": "a failed creation does not run dtor (the caller keeps payload)",
    "mlx_async_eval": "evaluates synchronously before returning",
    "mlx_load": "reads the data at once (MLX reads at eval); a big-endian complex64 gets each part swapped (MLX 0.31 swaps all 8 bytes, exchanging the parts)",
    "mlx_load_reader": "reads everything before returning, so the reader's free callback runs when its handle is freed",
    "mlx_load_safetensors": "reads the data at once; refuses what MLX would read wrongly: offsets that disagree with dtype and shape, ranges past the file or overlapping, duplicate names",
    "mlx_load_safetensors_reader": "as mlx_load_safetensors; the reader's free callback runs when its handle is freed",
    "mlx_save_safetensors": "keys sorted as MLX's JSON writes them; the header is padded with spaces to 8 bytes",
    "mlx_map_string_to_array_iterator_next": "visits keys in first-insertion order (mlx-c: unordered_map order)",
    "mlx_map_string_to_string_iterator_next": "visits keys in first-insertion order (mlx-c: unordered_map order)",
    "mlx_vjp": "every primitive has its rule (docs/autodiff.md: MLX's, and exact ones where MLX's is missing or wrong); where MLX 0.31.1 has none (Inverse, SVD, ...), MLX's \"[Primitive::vjp] Not implemented for ...\"",
    "mlx_jvp": "as mlx_vjp",
    "mlx_value_and_grad": "as mlx_vjp",
    "mlx_custom_function": "a function of several outputs calls fun_vjp once per output (each with the others' cotangents zero), which sums to MLX's single call",
    "mlx_checkpoint": "one CustomTransforms node per output; the backward pass runs fun again",
    "mlx_synchronize": "returns at once: evaluation is synchronous",
    "mlx_array_data_bool": "evaluates first (all data_* accessors do)",
    "mlx_array_item_float16": "declared where the compiler has the type (HAS_FLOAT16); exported on every target",
    "mlx_array_item_bfloat16": "declared where the compiler has the type (HAS_BFLOAT16); exported on every target",
    "mlx_array_data_float16": "as item_float16",
    "mlx_array_data_bfloat16": "as item_bfloat16",
    "mlx_default_gpu_stream_new": "no GPU here: returns a stream that runs on the CPU",
    "mlx_set_wired_limit": "recorded, no effect (a GPU notion)",
    "mlx_device_is_available": "CPU true, GPU false",
    "mlx_conv_general": "float64 computed in float64 (MLX computes its float64 in float32, or refuses it with dilation or groups); a vjp with unequal low and high padding gives the input's shape (MLX 0.31.1 raises a shape error there); a jvp exists (MLX has none); float32 2-D convolutions with a 3x3 kernel, stride 1, no dilation, one group, at least 16 input and 8 output channels run as Winograd: F(4x4, 3x3) when both output dims are at least 8 and its tiles save 1.3x the multiplies of F(2x2, 3x3), else F(2x2, 3x3) (1.6-1.9x faster than the direct path, F(4x4) 1.1-1.7x faster again on one thread); against a float64 sum the RMS error is 2-5e-7 of the result's RMS with F(2x2) (the direct path's 2-3e-7) and 0.7-2e-6 with F(4x4), its largest 0.4-1.8e-5; MLX_CPU_CONV_WINOGRAD=0 turns it off, 2 or 4 forces a variant",
    "mlx_conv_transpose1d": "as conv_general",
    "mlx_conv_transpose2d": "as conv_general",
    "mlx_conv_transpose3d": "as conv_general",
    "mlx_conv1d": "as conv_general",
    "mlx_conv2d": "as conv_general",
    "mlx_conv3d": "as conv_general",
    "mlx_gather_mm": "index past the last matrix reads the last one (indices are uint32 as in MLX, so a negative one too; MLX's is undefined); products sharing a matrix of b run as one BLAS product; float16/bfloat16 computed in float32, float64 too (MLX's CPU build: float32 only); no jvp, as MLX; the vjp of a scatter-adds for every index (MLX skips that for sorted indices)",
    "mlx_block_masked_mm": "block rows masked out whole are not computed; float16/bfloat16/float64 too (MLX's CPU build: float32 only); no jvp, as MLX; the out mask's vjp is the exact derivative (MLX's is scaled by the mask); vjp with respect to a bool mask (out mask included) reports MLX's error",
    "mlx_segmented_mm": "segment bounds past K read as K (MLX reads outside the arrays); a's and b's inner dims must agree (MLX does not check); no vjp or jvp, as MLX",
    "mlx_depends": "one node per input, a view of it (no copy); at least one input (MLX reads inputs[0]); no jvp, as MLX",
    "mlx_exp": "float32 1.02 ULP (own kernel, measured over all float32; SLEEF u10 past |x| > 87)",
    "mlx_expm1": "float32 1.46 ULP (own kernel, measured over all float32; SLEEF u10 past |x| > 87)",
    "mlx_log": "float32 0.92 ULP (own kernel, measured over all float32; SLEEF u10 outside [2^-126, 2^127])",
    "mlx_log1p": "float32 1.0 ULP",
    "mlx_log2": "float32 3.5 ULP",
    "mlx_log10": "float32 1.0 ULP",
    "mlx_sin": "float32 2.4 ULP (own kernel, measured over all float32 with |x| <= 2^13; SLEEF u35 beyond)",
    "mlx_cos": "float32 2.4 ULP (own kernel, measured over all float32 with |x| <= 2^13; SLEEF u35 beyond)",
    "mlx_tan": "float32 3.5 ULP",
    "mlx_arcsin": "float32 3.5 ULP",
    "mlx_arccos": "float32 3.5 ULP",
    "mlx_arctan": "float32 3.5 ULP",
    "mlx_sinh": "float32 3.5 ULP",
    "mlx_cosh": "float32 3.5 ULP",
    "mlx_tanh": "float32 2.7 ULP (own kernel on exp, measured over all float32)",
    "mlx_arcsinh": "float32 1.0 ULP",
    "mlx_arccosh": "float32 1.0 ULP",
    "mlx_arctanh": "float32 1.0 ULP",
    "mlx_erf": "float32 1.8 ULP (own kernel, measured over all float32; 3.5x SLEEF u10's speed)",
    "mlx_erfinv": "Giles' approximation: float32 within 4 ULP in tests",
    "mlx_quantize": "modes \"affine\", \"mxfp4\", \"mxfp8\", \"nvfp4\" (with global_scale) bit for bit as MLX 0.31.1; float64 w: refused in affine mode when the op is built (MLX: when evaluated), quantized from float32 in the fp modes",
    "mlx_dequantize": "every mode, values bit for bit as MLX 0.31.1; affine bits up to 8; fp modes with a float64 dtype computed in float32",
    "mlx_gather_qmm": "every mode; composed of take and quantized_matmul (values and gradients as MLX; the selected weights are copied)",
    "mlx_quantized_matmul": "every mode; float32 accumulation (MLX's CPU build accumulates float16/bfloat16 in that type); checks MLX makes when evaluating (group size, bits, float64) are made when the op is built, and an fp mode's group size and bits (which MLX's kernels assume) are checked",
    "mlx_qqmm": "\"nvfp4\", \"mxfp8\": x's rows quantized and dequantized with MLX's CPU kernel, then multiplied; beyond MLX's CPU (one row, packed w) also several rows and a float w (quantized the same way); global scales checked and unused, as on MLX's CPU",
    "mlx_sigmoid": "float32 within 3 ULP in tests",
    "mlx_power": "float32 1.0 ULP",
    "mlx_arctan2": "float32 3.5 ULP",
    "mlx_random_key": "MLX 0.31.1's keys, splits, bits and values bit for bit (docs/random.md); vmap over a batch of keys draws every key's values in one node, MLX's bytes (docs/vmap.md)",
    "mlx_random_seed": "global key under a mutex: concurrent draws each get a distinct key of the sequence (MLX's has no lock)",
    "mlx_random_normal": "bit for bit MLX 0.31.1's, float16/bfloat16/float32/float64 (float64 from a float32 draw, as MLX); complex64 as MLX composes it (erfinv of uniform pairs viewed as complex64, no sqrt(2) factor), within an ulp of MLX's erfinv",
    "mlx_random_normal_broadcast": "as mlx_random_normal",
    "mlx_einsum": "MLX's subscripts, errors and greedy path; a batch index of size 1 in the first operand of a product broadcasts (MLX fails in reshape); an output index in no input is an einsum error (MLX fails in transpose); at most 52 operands",
    "mlx_view": "MLX's size rules; a non-row-contiguous input is laid out in a new buffer rather than shared; no gradient, as in MLX",
    "mlx_pad_symmetric": "as mlx_pad on every axis; MLX 0.31.1 accepts only the modes constant and edge, mlx_pad also reflect and symmetric",
    "mlx_hanning": "float32 in MLX's formula; within 4 float32 ulps of 1 of MLX's (sin/cos rounding)",
    "mlx_hamming": "as mlx_hanning",
    "mlx_blackman": "as mlx_hanning",
    "mlx_bartlett": "bit for bit MLX's",
    "mlx_hadamard_transform": "float32 bit for bit MLX's (sizes 2^k and 12, 20, 28 times 2^k); float16/bfloat16 transformed in float32 and rounded once (MLX rounds after each level); sizes and float64, which MLX rejects only when evaluating, fail at the call; vjp/jvp as MLX's (the same transform)",
    "mlx_to_fp8": "bit for bit MLX's e4m3 rounding; a float64 input is rounded to float32 first (MLX's CPU kernel misreads float64); no gradient, as in MLX",
    "mlx_from_fp8": "bit for bit MLX's values in float16/bfloat16/float32; float64 holds the exact values (MLX's CPU kernel writes float32 bits into the float64 buffer); no gradient, as in MLX",
    "mlx_random_uniform": "bit for bit MLX 0.31.1's; float64 refused as MLX does",
    "mlx_random_gumbel": "bit for bit MLX 0.31.1's (glibc's logf); float64 refused as MLX does",
    "mlx_random_laplace": "bit for bit MLX 0.31.1's (libm's log1p)",
    "mlx_random_truncated_normal": "bit for bit MLX 0.31.1's (MLX's erf and erfinv); float64 refused as MLX does; differentiable in lower/upper as MLX's composition (erf, uniform, erfinv, clip): gradients and jvps within 2e-5 of MLX's; vmap over keys or bounds in one node, MLX's bytes",
    "mlx_random_randint": "MLX 0.31.1's float32-based draw: exact integers while the bounds are below 2^24",
    "mlx_random_permutation_arange": "bit for bit MLX 0.31.1's; 0 gives an empty array (MLX's CPU sort dies with SIGFPE)",
    "mlx_take": "an index outside the array (after a negative one counts from the end once) reads the nearest end, as mlx_gather; MLX reads outside the buffer",
    "mlx_take_axis": "an index outside the axis (after a negative one counts from the end once) reads the nearest end, as mlx_gather; MLX reads outside the buffer",
    "mlx_take_along_axis": "an index outside the axis (after a negative one counts from the end once) reads the nearest end, as mlx_gather; MLX reads outside the buffer",
    "mlx_divmod": "as MLX 0.31.1's CPU kernel computes it: the quotient truncates toward zero and the remainder takes the dividend's sign (C's / and %, fmod for floats), although MLX's docstring says (a // b, a % b); mlx_floor_divide of floats and mlx_remainder floor",
    "mlx_as_strided": "a view whose shape, strides and offset reach outside the input's elements is refused with an error; MLX makes it and reads outside the buffer",
    "mlx_put_along_axis": "an index outside the axis (after negative ones count from the end) is clamped to its nearest end, where take reads; MLX writes outside the array. Repeated indices: the last value along the axis wins",
    "mlx_scatter_add_axis": "indices outside the axis are clamped, as put_along_axis (MLX writes outside the array); float16/bfloat16 sums round after each add, integer sums wrap, bool sums are or",
    "mlx_gather": "a negative index counts from the end once; a block start still outside [0, shape - slice size] is clamped into it (MLX reads outside the array). The indices get a zero gradient, as in MLX",
    "mlx_gather_single": "as mlx_gather",
    "mlx_scatter": "updates land where mlx_gather reads (same clamp; MLX writes outside the array); a repeated index: the last update in row-major order wins, as MLX's CPU loop. vjp as MLX (an overwritten update still gets its cotangent); no jvp, as MLX",
    "mlx_scatter_single": "as mlx_scatter",
    "mlx_scatter_add": "indices placed as mlx_scatter; every repeat adds; float16/bfloat16 round after each add, integers wrap, bool is or. No jvp, as MLX",
    "mlx_scatter_add_single": "as mlx_scatter_add",
    "mlx_scatter_prod": "indices placed as mlx_scatter; no vjp or jvp, as MLX (a clear error)",
    "mlx_scatter_prod_single": "as mlx_scatter_prod",
    "mlx_scatter_max": "indices placed as mlx_scatter; MLX's y > x ? y : x (NaN handling follows the order); complex compares real then imaginary. No jvp, as MLX",
    "mlx_scatter_max_single": "as mlx_scatter_max",
    "mlx_scatter_min": "as mlx_scatter_max with y < x ? y : x",
    "mlx_scatter_min_single": "as mlx_scatter_min",
    "mlx_slice_dynamic": "a negative start counts from the end once and a start is clamped so the slice stays inside (MLX reads outside the array); the start gets a zero gradient (MLX refuses one)",
    "mlx_slice_update_dynamic": "start placed as mlx_slice_dynamic (MLX writes outside the array); an update with more dimensions than src is an error",
    "mlx_masked_scatter": "where the source runs short, MLX raises at evaluation; here the remaining masked positions take the source's last element (zero for an empty source)",
    "mlx_sort": "stable, NaN last, as MLX; float16/bfloat16 NaN last too (MLX's CPU order is undefined there)",
    "mlx_sort_axis": "as mlx_sort",
    "mlx_argsort": "uint32; stable, ties by index; complex64 with a NaN real part last (undefined in MLX)",
    "mlx_argsort_axis": "as mlx_argsort",
    "mlx_partition": "every element where MLX's CPU (libstdc++ nth_element) puts it, broadcast inputs included",
    "mlx_partition_axis": "as mlx_partition",
    "mlx_argpartition": "uint32; every index where MLX puts it",
    "mlx_argpartition_axis": "as mlx_argpartition",
    "mlx_topk": "MLX's order (the last k of a partition), not sorted; k == n returns the input",
    "mlx_topk_axis": "as mlx_topk",
    "mlx_median": "no axes on a non-0-d array fails (MLX: a [flatten] error)",
    "mlx_linalg_eig": "complex64 input: right eigenvectors (MLX returns their conjugates, which are not eigenvectors); real input as MLX",
    "mlx_linalg_eigh": "an UPLO other than L/U (first letter, either case) is an error; MLX hands it to LAPACK",
    "mlx_linalg_eigvalsh": "as mlx_linalg_eigh",
    "mlx_linalg_solve": "one LAPACK gesv per matrix (MLX: lu, then two tri_inv @ b): the same solution, backward stable; differentiable in b only, as MLX; no vmap (its LUF reports MLX's \"[Primitive::vmap] Not implemented for LUF.\")",
    "mlx_linalg_lu_factor": "float32 matrices of at most 2^24 rows; no vmap, as MLX (\"[Primitive::vmap] Not implemented for LUF.\")",
    "mlx_linalg_lu": "no vmap, as MLX (\"[Primitive::vmap] Not implemented for LUF.\")",
    "mlx_linalg_inv": "no vjp or jvp, as MLX 0.31.1's Inverse has none (\"Not implemented for Inverse\")",
    "mlx_bitwise_invert": "no vjp or jvp, as MLX (\"Not implemented for BitwiseInvert: MLX has no derivative for it.\")",
    "mlx_random_multivariate_normal": "float32; SVD by mlx_linalg_svd (LAPACK sgesdd, as MLX): within 3.3e-7 relative of MLX's values in tests; differentiable in mean as MLX; in cov, as in MLX 0.31.1, vjp/jvp report \"[Primitive::vjp] Not implemented for SVD.\" (jvp likewise)",
}

DECL = re.compile(r"^\s*(?:const\s+)?[\w\s\*]*?\b(_?mlx_\w+)\s*\(", re.M)


def declared(header):
    text = open(os.path.join(ROOT, "include", "mlx", "c", header)).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"#define[^\n]*", "", text)
    names = []
    for m in DECL.finditer(text):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def render(lib):
    syms = exported(lib)
    lines = [
        "# Supported API",
        "",
        "mlx-cpu implements the functions below with mlx-c v0.6.0's names and",
        "signatures (graph_utils.h: mlx-c's later header). *exported* means the",
        "library defines it; a function of mlx-c that is not listed here is not",
        "declared by our headers, so a program using it fails to compile rather",
        "than linking to nothing. This file is generated by `scripts/api_doc.py`",
        "and checked by the `api_doc` test.",
        "",
        "Every function of mlx-c v0.6.0 is exported; where one differs from MLX or is partial, its note says so.",
        "",
    ]
    total = done = 0
    for header, title in HEADERS:
        names = declared(header)
        if not names:
            continue
        lines += [f"## {title} (`mlx/c/{header}`)", "", "| function | status | notes |", "| --- | --- | --- |"]
        for n in names:
            total += 1
            ok = n in syms
            done += ok
            lines.append(f"| `{n}` | {'exported' if ok else '**missing**'} | {NOTES.get(n, '')} |")
        lines.append("")
    lines.insert(9, f"{done} of {total} declared functions are exported.\n")
    return "\n".join(lines), total - done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text, missing = render(args.lib)
    path = os.path.join(ROOT, "docs", "api.md")
    if args.check:
        current = open(path).read() if os.path.exists(path) else ""
        if current != text:
            print("docs/api.md is stale: run scripts/api_doc.py --lib <libmlx-cpu.so>")
            return 1
        if missing:
            print(f"{missing} declared functions are not exported")
            return 1
        print("1 passed, 0 failed")
        return 0
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}: {missing} missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
