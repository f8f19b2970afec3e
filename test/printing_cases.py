#!/usr/bin/env python3
"""Cross-checks the expected strings of test/test_printing.c.

MLX cannot run here, so the expected strings in the C suite were derived by
hand from MLX's print_array / print_subarray (mlx/utils.cpp). This script
checks each of them two ways:
  1. against a small Python model of those MLX rules (written separately
     from src/api/array_print.c), applied to the same array built in numpy;
  2. against numpy's own repr, for the cases where MLX and numpy print the
     same text (numpy differs on floats, bools, padding, summarization,
     blank lines between blocks and int64's dtype suffix).
Run: /usr/bin/python3 test/printing_cases.py   (needs numpy)
Exit status 0 when every case matches.
"""
import math
import sys

import numpy as np

EDGE = 3  # MLX's num_print


def fmt_double(x, precision=-1):
    """`os << double` in the C locale: %.6g by default, fixed otherwise."""
    x = float(x)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if precision == -1:
        return "%.6g" % x
    return "%.*f" % (precision if precision >= 0 else 6, x)


def fmt_elem(v, dtype, capitalize=False, precision=-1):
    if dtype == np.bool_:
        if capitalize:
            return "True" if v else "False"
        return "true" if v else "false"
    if np.issubdtype(dtype, np.integer):
        return str(int(v))
    if np.issubdtype(dtype, np.complexfloating):
        re = np.float32(v.real)
        im = np.float32(v.imag)
        s = fmt_double(re, precision)
        if im >= 0 or math.isnan(im):
            return s + "+" + fmt_double(im, precision) + "j"
        return s + "-" + fmt_double(-im, precision) + "j"
    # float16 / bfloat16 are widened to float, float to double: exact
    return fmt_double(v, precision)


def mlx_block(a, dim, idx, out, **kw):
    n = a.shape[dim]
    last = dim == a.ndim - 1
    prefix = "" if last else " " * (7 + dim)
    postfix = ", " if last else ",\n"
    out.append("[")
    i = 0
    while i < n:
        out.append("" if i == 0 else prefix)
        if i == EDGE and n > 2 * EDGE:
            out.append("...")
            i = n - EDGE - 1
        elif last:
            out.append(fmt_elem(a[idx + (i,)], a.dtype, **kw))
        else:
            mlx_block(a, dim + 1, idx + (i,), out, **kw)
        out.append("" if i == n - 1 else postfix)
        i += 1
    out.append("]")


def mlx_repr(a, dtype_name=None, **kw):
    out = ["array("]
    if a.ndim == 0:
        out.append(fmt_elem(a[()], a.dtype, **kw))
    else:
        mlx_block(a, 0, (), out, **kw)
    name = dtype_name or ("bool" if a.dtype == np.bool_ else str(a.dtype))
    out.append(", dtype=" + name + ")")
    return "".join(out)


def bf16(values):
    """Values rounded to bfloat16 (nearest even), held as float32."""
    f = np.asarray(values, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


i32 = np.int32
f32 = np.float32
ar = np.arange

# (name, numpy array, expected MLX text, numpy agrees, extra options)
# name = the C test (test_<name>) that holds the same string.
CASES = [
    ("scalar_int32_has_no_brackets", np.array(1, i32), "array(1, dtype=int32)", True, {}),
    ("scalar_float32_prints_one_without_point", np.array(1.0, f32), "array(1, dtype=float32)", False, {}),
    ("scalar_bool_is_lowercase_by_default", np.array(True), "array(true, dtype=bool)", False, {}),
    ("scalar_bool_capitalized_as_python_prints", np.array(False), "array(False, dtype=bool)", False,
     {"capitalize": True}),
    ("one_d_int32", np.array([1, 0, 1], i32), "array([1, 0, 1], dtype=int32)", True, {}),
    ("six_items_not_summarized", np.ones(6, i32),
     "array([1, 1, 1, 1, 1, 1], dtype=int32)", True, {}),
    ("seven_items_summarized", np.ones(7, i32),
     "array([1, 1, 1, ..., 1, 1, 1], dtype=int32)", False, {}),
    ("two_d_rows_indented_under_first", np.array([[1, 2]] * 3, i32),
     "array([[1, 2],\n       [1, 2],\n       [1, 2]], dtype=int32)", True, {}),
    ("two_d_seven_rows_summarized", np.array([[1, 2]] * 7, i32),
     "array([[1, 2],\n       [1, 2],\n       [1, 2],\n       ...,\n"
     "       [1, 2],\n       [1, 2],\n       [1, 2]], dtype=int32)", False, {}),
    ("three_d_no_blank_line", ar(8, dtype=i32).reshape(2, 2, 2),
     "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]]], dtype=int32)",
     False, {}),
    ("four_d", ar(8, dtype=i32).reshape(2, 1, 2, 2),
     "array([[[[0, 1],\n         [2, 3]]],\n       [[[4, 5],\n         [6, 7]]]], dtype=int32)",
     False, {}),
    ("three_d_summarized_outer", ar(32, dtype=i32).reshape(8, 2, 2),
     "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]],\n"
     "       [[8, 9],\n        [10, 11]],\n       ...,\n"
     "       [[20, 21],\n        [22, 23]],\n       [[24, 25],\n        [26, 27]],\n"
     "       [[28, 29],\n        [30, 31]]], dtype=int32)", False, {}),
    ("arange_2000", ar(2000, dtype=i32),
     "array([0, 1, 2, ..., 1997, 1998, 1999], dtype=int32)", False, {}),
    ("hundred_by_hundred", ar(10000, dtype=i32).reshape(100, 100),
     "array([[0, 1, 2, ..., 97, 98, 99],\n"
     "       [100, 101, 102, ..., 197, 198, 199],\n"
     "       [200, 201, 202, ..., 297, 298, 299],\n"
     "       ...,\n"
     "       [9700, 9701, 9702, ..., 9797, 9798, 9799],\n"
     "       [9800, 9801, 9802, ..., 9897, 9898, 9899],\n"
     "       [9900, 9901, 9902, ..., 9997, 9998, 9999]], dtype=int32)", False, {}),
    ("hundred_by_hundred_float", (ar(10000, dtype=f32) / 4).reshape(100, 100),
     "array([[0, 0.25, 0.5, ..., 24.25, 24.5, 24.75],\n"
     "       [25, 25.25, 25.5, ..., 49.25, 49.5, 49.75],\n"
     "       [50, 50.25, 50.5, ..., 74.25, 74.5, 74.75],\n"
     "       ...,\n"
     "       [2425, 2425.25, 2425.5, ..., 2449.25, 2449.5, 2449.75],\n"
     "       [2450, 2450.25, 2450.5, ..., 2474.25, 2474.5, 2474.75],\n"
     "       [2475, 2475.25, 2475.5, ..., 2499.25, 2499.5, 2499.75]], dtype=float32)",
     False, {}),
    ("float32_g_format", np.array([0.1, 1.5, -2.25, 123456, 3.14159265], f32),
     "array([0.1, 1.5, -2.25, 123456, 3.14159], dtype=float32)", False, {}),
    ("float32_switches_to_exponent",
     np.array([1e6, 1234567, 999999.5, 0.0001, 1e-5, 1.5e-5], f32),
     "array([1e+06, 1.23457e+06, 1e+06, 0.0001, 1e-05, 1.5e-05], dtype=float32)", False, {}),
    ("float32_extremes",
     np.array([np.finfo(f32).max, np.finfo(f32).tiny, 1.401298464e-45, 1e38], f32),
     "array([3.40282e+38, 1.17549e-38, 1.4013e-45, 1e+38], dtype=float32)", False, {}),
    ("float32_nan_inf_negative_zero", np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], f32),
     "array([nan, inf, -inf, -0, 0], dtype=float32)", False, {}),
    ("float32_negative_nan", np.array([-np.nan], f32), "array([-nan], dtype=float32)", False, {}),
    ("float_no_column_padding", np.array([[1, 22.5], [333, 4]], f32),
     "array([[1, 22.5],\n       [333, 4]], dtype=float32)", False, {}),
    ("float64", np.array([1e300, 1e-300, 0.5, 2.0 / 3, -1e-7], np.float64),
     "array([1e+300, 1e-300, 0.5, 0.666667, -1e-07], dtype=float64)", False, {}),
    ("float16", np.array([1.2, 65504, 5.9604645e-08, -0.0, np.inf], np.float16),
     "array([1.2002, 65504, 5.96046e-08, -0, inf], dtype=float16)", False, {}),
    ("bfloat16", bf16([1.2, 3.0e38, -0.5, 1.203125]),
     "array([1.20312, 3.00406e+38, -0.5, 1.20312], dtype=bfloat16)", False, {}),
    ("complex64",
     np.array([1 + 2j, 1 - 1j, -1.5 + 0j, complex(0.0, -0.0)], np.complex64),
     "array([1+2j, 1-1j, -1.5+0j, 0+-0j], dtype=complex64)", False, {}),
    ("complex64_nan_inf",
     np.array([complex(np.nan, np.nan), complex(1, -np.inf), complex(0.1, 1e6)], np.complex64),
     "array([nan+nanj, 1-infj, 0.1+1e+06j], dtype=complex64)", False, {}),
    ("bool_lowercase", np.array([True, False, True]), "array([true, false, true], dtype=bool)",
     False, {}),
    ("bool_capitalized", np.array([True, False, True]), "array([True, False, True], dtype=bool)",
     False, {"capitalize": True}),
    ("uint64_max", np.array([2**64 - 1], np.uint64),
     "array([18446744073709551615], dtype=uint64)", True, {}),
    ("uint64_max_and_zero_unpadded", np.array([2**64 - 1, 0], np.uint64),
     "array([18446744073709551615, 0], dtype=uint64)", False, {}),
    ("int64_min_max", np.array([-2**63, 2**63 - 1], np.int64),
     "array([-9223372036854775808, 9223372036854775807], dtype=int64)", False, {}),
    ("int8_prints_numbers_not_chars", np.array([-128, 127, 0], np.int8), "array([-128, 127, 0], dtype=int8)",
     False, {}),
    ("uint8", np.array([0, 255], np.uint8), "array([0, 255], dtype=uint8)", False, {}),
    ("int16_uint16_uint32", np.array([-32768, 32767], np.int16), "array([-32768, 32767], dtype=int16)",
     False, {}),
    ("int16_uint16_uint32", np.array([65535], np.uint16), "array([65535], dtype=uint16)", True, {}),
    ("int16_uint16_uint32", np.array([4294967295], np.uint32), "array([4294967295], dtype=uint32)", True, {}),
    ("empty_1d", np.zeros(0, f32), "array([], dtype=float32)", True, {}),
    ("empty_0_by_3", np.zeros((0, 3), f32), "array([], dtype=float32)", False, {}),
    ("empty_3_by_0", np.zeros((3, 0), f32),
     "array([[],\n       [],\n       []], dtype=float32)", False, {}),
    ("empty_8_by_0_summarized", np.zeros((8, 0), i32),
     "array([[],\n       [],\n       [],\n       ...,\n       [],\n       [],\n       []], "
     "dtype=int32)", False, {}),
    ("empty_2_0_3", np.zeros((2, 0, 3), i32), "array([[],\n       []], dtype=int32)", False, {}),
    ("transposed", ar(6, dtype=i32).reshape(2, 3).T,
     "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int32)", True, {}),
    ("broadcast_rows", np.broadcast_to(np.array([1, 2, 3], i32), (2, 3)),
     "array([[1, 2, 3],\n       [1, 2, 3]], dtype=int32)", True, {}),
    ("negative_stride", ar(5, dtype=i32)[::-1], "array([4, 3, 2, 1, 0], dtype=int32)", True, {}),
    ("negative_stride_summarized", ar(20, dtype=i32)[::-2],
     "array([19, 17, 15, ..., 5, 3, 1], dtype=int32)", False, {}),
    ("strided_slice", ar(12, dtype=i32).reshape(3, 4)[::2, 1::2],
     "array([[1, 3],\n       [9, 11]], dtype=int32)", False, {}),
    ("broadcast_scalar_summarized", np.broadcast_to(np.array(7, i32), (8, 8)),
     "array([[7, 7, 7, ..., 7, 7, 7],\n       [7, 7, 7, ..., 7, 7, 7],\n"
     "       [7, 7, 7, ..., 7, 7, 7],\n       ...,\n       [7, 7, 7, ..., 7, 7, 7],\n"
     "       [7, 7, 7, ..., 7, 7, 7],\n       [7, 7, 7, ..., 7, 7, 7]], dtype=int32)", False, {}),
    ("transposed_summarized", ar(100, dtype=i32).reshape(10, 10).T,
     "array([[0, 10, 20, ..., 70, 80, 90],\n       [1, 11, 21, ..., 71, 81, 91],\n"
     "       [2, 12, 22, ..., 72, 82, 92],\n       ...,\n"
     "       [7, 17, 27, ..., 77, 87, 97],\n       [8, 18, 28, ..., 78, 88, 98],\n"
     "       [9, 19, 29, ..., 79, 89, 99]], dtype=int32)", False, {}),
    ("zero_d_view_prints_the_viewed_element", ar(6, dtype=i32)[3, ...], "array(3, dtype=int32)", True, {}),
    ("precision_fixed", np.array([1.123456789, -0.5], f32),
     "array([1.1235, -0.5000], dtype=float32)", False, {"precision": 4}),
    ("precision_complex", np.array([1 + 2j, 0.5 - 0.25j], np.complex64),
     "array([1.00+2.00j, 0.50-0.25j], dtype=complex64)", False, {"precision": 2}),
]


def main():
    failures = 0
    for name, arr, want, numpy_agrees, kw in CASES:
        dtype_name = "bfloat16" if name == "bfloat16" else None
        got = mlx_repr(arr, dtype_name, **kw)
        if got != want:
            failures += 1
            print(f"MODEL MISMATCH {name}:\n  want {want!r}\n  got  {got!r}")
        if numpy_agrees:
            np_text = repr(arr)
            if np_text != want:
                failures += 1
                print(f"NUMPY MISMATCH {name}:\n  want  {want!r}\n  numpy {np_text!r}")
        elif repr(arr) == want:
            print(f"note: numpy also agrees on {name}")
    print(f"{len(CASES)} cases, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
