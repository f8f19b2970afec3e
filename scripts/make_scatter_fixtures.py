#!/usr/bin/env python3
"""Expected values for test/test_gather.c, computed with MLX 0.31.1.

MLX's Python API has no gather/scatter functions; its indexing calls the
same ops: a[i0, i1] is gather with slice size 1 on the indexed axes,
a.at[i].add(u) is scatter_add (multiply/maximum/minimum the other
reductions), a[i] = u is scatter, a[mask] = v is masked_scatter, and
mx.slice / mx.slice_update with an array start are slice_dynamic and
slice_update_dynamic. Each case keeps the mlx-c call's operands (the
updates in the shape mlx_scatter takes: index shape + block) and MLX's
result in that call's output shape.

Where numpy can express a case, the script asserts numpy gives the same.

Run: /work/venv-mlx/bin/python scripts/make_scatter_fixtures.py > test/fixtures/gather_cases.h"""
import mlx.core as mx
import numpy as np

OPS = ["GATHER", "SCATTER", "SCATTER_ADD", "SCATTER_PROD", "SCATTER_MAX", "SCATTER_MIN", "SLICE_DYN",
       "SLICE_UPD_DYN", "MASKED"]
DT = {np.float32: "MLX_FLOAT32", np.int32: "MLX_INT32", np.int64: "MLX_INT64", np.uint8: "MLX_UINT8",
      np.int16: "MLX_INT16", np.bool_: "MLX_BOOL", np.float64: "MLX_FLOAT64", np.uint32: "MLX_UINT32"}
pool = []
rows = []


def put(x):
    x = np.asarray(x)
    off = len(pool)
    pool.extend(float(v) for v in x.reshape(-1))
    return off, list(x.shape)


def shp(s, n):
    s = list(s) + [0] * (n - len(s))
    return "{" + ", ".join(map(str, s)) + "}"


def case(name, op, a, idx, axes, sizes, upd, exp):
    a = np.asarray(a)
    ao, ash = put(a)
    io, ish, idt = [], [], "MLX_INT32"
    for i in idx:
        i = np.asarray(i)
        idt = DT[i.dtype.type]
        o, s = put(i)
        io.append(o)
        ish.append(s)
    while len(io) < 2:
        io.append(0)
        ish.append([])
    uo, ush = put(upd) if upd is not None else (0, [])
    exp = np.array(exp)
    eo, esh = put(exp)
    rows.append(
        f'    {{"{name}", GS_{op}, {DT[a.dtype.type]}, {len(ash)}, {shp(ash, 6)}, {ao}, {len(idx)}, {idt}, '
        f'{{{len(ish[0])}, {len(ish[1])}}}, {{{shp(ish[0], 4)}, {shp(ish[1], 4)}}}, {{{io[0]}, {io[1]}}}, '
        f'{len(axes)}, {shp(axes, 4)}, {len(sizes)}, {shp(sizes, 6)}, {len(ush)}, {shp(ush, 8)}, {uo}, '
        f'{len(esh)}, {shp(esh, 8)}, {eo}}},')


def m(x):
    return np.array(x)


f32 = np.float32
A45 = np.arange(20, dtype=f32).reshape(4, 5) - 7.5
A63 = (np.arange(18, dtype=f32).reshape(6, 3) * 1.5) - 4

# gather: two axes with broadcast indices (negative ones wrap)
i0 = np.array([[0, 3], [-1, 2]], np.int32)
i1 = np.array([1, -2], np.int64)
g = m(mx.array(A45)[mx.array(i0.astype(np.int64)), mx.array(i1)])
assert np.array_equal(g, A45[i0, i1])  # numpy agrees
case("gather_two_axes_broadcast", "GATHER", A45, [i0, i1], [0, 1], [1, 1], None, g.reshape(2, 2, 1, 1))
# an embedding lookup: rows of a table
i = np.array([5, 0, -1, 2, 5], np.int32)
case("gather_rows", "GATHER", A63, [i], [0], [1, 3], None, m(mx.array(A63)[mx.array(i)]).reshape(5, 1, 3))
# along axis 1, uint8 indices, output = index shape + (6, 1)
i = np.array([[2, 0], [1, 1]], np.uint8)
t = m(mx.take(mx.array(A63), mx.array(i), axis=1))  # (6, 2, 2)
case("gather_axis1_uint8", "GATHER", A63, [i], [1], [6, 1], None, np.moveaxis(t, 0, -1)[..., None].reshape(2, 2, 6, 1))
# no index arrays: one block from the origin
case("gather_no_indices", "GATHER", A45, [], [], [2, 3], None, A45[:2, :3])
# int32 data, 0-d index
A_i = (np.arange(12, dtype=np.int32).reshape(3, 4) * 7) % 11 - 5
i = np.array(-1, np.int16)
case("gather_scalar_index_int32", "GATHER", A_i, [i], [0], [1, 4], None, m(mx.array(A_i)[mx.array(i)]).reshape(1, 4))

# scatter, each reduction, rows with repeats
i = np.array([1, 3, 1, -1], np.int32)
u = np.array([[10, 11, 12], [20, 21, 22], [30, 31, 32], [-4, 0.5, 2]], f32)
for op, how in [("SCATTER", None), ("SCATTER_ADD", "add"), ("SCATTER_PROD", "multiply"),
                ("SCATTER_MAX", "maximum"), ("SCATTER_MIN", "minimum")]:
    x = mx.array(A63)
    if how is None:
        x[mx.array(i)] = mx.array(u)
        r = m(x)
    else:
        r = m(getattr(x.at[mx.array(i)], how)(mx.array(u)))
    case(f"{op.lower()}_rows_repeated", op, A63, [i], [0], [], u.reshape(4, 1, 3), r)
    ufunc = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}.get(how)
    if ufunc is not None:  # numpy's unbuffered .at agrees
        ref = A63.copy()
        ufunc.at(ref, i, u)
        assert np.array_equal(r, ref), op
# scatter_add on two axes, broadcast indices, int64 and int32 mixed
i0 = np.array([[0], [2], [-1]], np.int64)
i1 = np.array([1, 4, 1], np.int32)
u = np.arange(9, dtype=f32).reshape(3, 3) + 0.25
r = m(mx.array(A45).at[mx.array(i0), mx.array(i1)].add(mx.array(u)))
ref = A45.copy()
np.add.at(ref, (i0, i1), u)
assert np.array_equal(r, ref)
case("scatter_add_two_axes_broadcast", "SCATTER_ADD", A45, [i0, i1], [0, 1], [], u.reshape(3, 3, 1, 1), r)
# scatter_add along axis 1 with column blocks
i = np.array([4, 0, 4], np.int32)
u = np.arange(12, dtype=f32).reshape(3, 4, 1) - 3
r = m(mx.array(A45).at[:, mx.array(i)].add(mx.array(np.moveaxis(u[..., 0], 0, 1))))
case("scatter_add_axis1_columns", "SCATTER_ADD", A45, [i], [1], [], u.reshape(3, 4, 1), r)
# int32 data: add wraps, max
A_i = np.array([2147483647, -5, 7, 0], np.int32)
i = np.array([0, 2, 2], np.int32)
u = np.array([1, 9, -3], np.int32)
case("scatter_add_int32_wraps", "SCATTER_ADD", A_i, [i], [0], [], u.reshape(3, 1),
     m(mx.array(A_i).at[mx.array(i)].add(mx.array(u))))
case("scatter_max_int32", "SCATTER_MAX", A_i, [i], [0], [], u.reshape(3, 1),
     m(mx.array(A_i).at[mx.array(i)].maximum(mx.array(u))))

# dynamic slices
st = np.array([1, 2], np.int32)
case("slice_dynamic_two_axes", "SLICE_DYN", A45, [st], [0, 1], [2, 2], None,
     m(mx.slice(mx.array(A45), mx.array(st), [0, 1], [2, 2])))
# (a negative start reads before the array in MLX: no fixture, see the test)
st = np.array([3], np.int64)
case("slice_dynamic_int64_start", "SLICE_DYN", A45, [st], [1], [4, 2], None,
     m(mx.slice(mx.array(A45), mx.array(st), [1], [4, 2])))
st = np.array([2], np.int32)
u = np.array([[100, 101], [102, 103]], f32)
case("slice_update_dynamic", "SLICE_UPD_DYN", A45, [st], [1], [], u,
     m(mx.slice_update(mx.array(A45), mx.array(u), mx.array(st), [1])))
u = np.array([7, 8, 9], f32)
st = np.array([1], np.int32)
case("slice_update_dynamic_broadcast", "SLICE_UPD_DYN", A45, [st], [0], [], u[None, :],
     m(mx.slice_update(mx.array(A45), mx.array(u[None, :]), mx.array(st), [0])))

# masked_scatter: full mask, leading mask with rows
mask = np.array([[True, False, True, False, False], [False] * 5, [True, True, False, False, True],
                 [False, False, False, True, False]])
src = np.arange(20, dtype=f32) + 100
x = mx.array(A45)
x[mx.array(mask)] = mx.array(src)
case("masked_scatter_elements", "MASKED", A45, [mask], [], [], src, m(x))
mask = np.array([True, False, False, True, True, False])
src = np.arange(9, dtype=f32).reshape(3, 3) * -1
x = mx.array(A63)
x[mx.array(mask)] = mx.array(src)
case("masked_scatter_rows", "MASKED", A63, [mask], [], [], src, m(x))

print("/* Generated by scripts/make_scatter_fixtures.py from MLX %s: do not edit." % mx.__version__)
print(" * Each case: the mlx-c op, a's dtype, shape and offset in gs_vals, the")
print(" * index arrays (count, dtype, ndims, shapes, offsets; the mask or start")
print(" * for masked_scatter and the dynamic slices), axes, slice sizes, the")
print(" * updates (or source) and MLX's result, all values in gs_vals. */")
print("enum { " + ", ".join(f"GS_{o}" for o in OPS) + " };")
print("typedef struct gs_case {\n    const char *name;\n    int op;\n    mlx_dtype dtype;\n    int a_ndim, a_shape[6], a_off;"
      "\n    int nidx;\n    mlx_dtype idx_dtype;\n    int i_ndim[2], i_shape[2][4], i_off[2];\n    int naxes, axes[4];"
      "\n    int nsizes, sizes[6];\n    int u_ndim, u_shape[8], u_off;\n    int e_ndim, e_shape[8], e_off;\n} gs_case;")
print("static const double gs_vals[] = {")
for k in range(0, len(pool), 12):
    print("    " + ", ".join(repr(v) if not v.is_integer() else str(int(v)) for v in pool[k:k + 12]) + ",")
print("};")
print("static const gs_case gs_cases[] = {")
print("\n".join(rows))
print("};")
