#!/usr/bin/env python3
"""Writes the small .npy and .safetensors files under test/fixtures/io/
that test/test_io.c loads (and examples/arrays.safetensors): files saved by MLX itself (every dtype, a 0-d
array, a column-major array, safetensors with metadata) and by NumPy
(big-endian, Fortran order, empty, 0-d). Values follow one formula of the
flat index i, which test_io.c computes too (tu_io_value there):

    bool      i % 3 == 0
    unsigned  (7 i) % 11
    signed    (7 i) % 11 - 5
    float     ((7 i) % 11 - 5) / 4            (exact in every float type)
    complex   ((7 i) % 11 - 5) / 4 + (i / 2) j

Before writing, it checks that MLX loads every NumPy-written file with
these values, so the fixtures state MLX's semantics.

    /work/venv-mlx/bin/python scripts/make_io_fixtures.py           write
    /work/venv-mlx/bin/python scripts/make_io_fixtures.py --check D  load
        the files test_io wrote into D (io_out_*) with MLX and NumPy and
        compare them to the formula (our files load in MLX)
"""
import os
import sys

import mlx.core as mx
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'io')

# name used in file names and keys -> (mlx dtype, numpy dtype or None)
DTYPES = {
    'bool': (mx.bool_, np.bool_),
    'uint8': (mx.uint8, np.uint8),
    'uint16': (mx.uint16, np.uint16),
    'uint32': (mx.uint32, np.uint32),
    'uint64': (mx.uint64, np.uint64),
    'int8': (mx.int8, np.int8),
    'int16': (mx.int16, np.int16),
    'int32': (mx.int32, np.int32),
    'int64': (mx.int64, np.int64),
    'float16': (mx.float16, np.float16),
    'float32': (mx.float32, np.float32),
    'float64': (mx.float64, np.float64),
    'bfloat16': (mx.bfloat16, None),
    'complex64': (mx.complex64, np.complex64),
}


def values(name, shape):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    base = (7 * i) % 11
    if name == 'bool':
        v = i % 3 == 0
    elif name.startswith('uint'):
        v = base
    elif name.startswith('int'):
        v = base - 5
    elif name == 'complex64':
        v = (base - 5) / 4 + 1j * (i / 2)
    else:
        v = (base - 5) / 4
    return v.reshape(shape)


def mlx_array(name, shape):
    v = values(name, shape)
    dt = DTYPES[name][0]
    if name == 'complex64':
        return mx.array(v.astype(np.complex64))
    return mx.array(v).astype(dt)


def np_array(name, shape, order='<'):
    dt = np.dtype(DTYPES[name][1])
    if dt.itemsize > 1:
        dt = dt.newbyteorder(order)
    return values(name, shape).astype(dt)


def same(a, name, shape):
    """MLX array a equals the formula's values."""
    want = values(name, shape)
    got = np.array(a.astype(mx.float32) if name == 'bfloat16' else a)
    return a.shape == tuple(shape) and np.array_equal(got, want.astype(got.dtype))


def write():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    shape = (2, 3)
    for name in DTYPES:
        mx.save(os.path.join(OUT, f'mlx_{name}.npy'), mlx_array(name, shape))
    mx.save(os.path.join(OUT, 'mlx_scalar.npy'), mx.array(2.5, dtype=mx.float32))
    # a transposed array: MLX writes it column-major (fortran_order True)
    mx.save(os.path.join(OUT, 'mlx_fortran.npy'), mlx_array('float32', (3, 2)).T)
    arrays = {name: mlx_array(name, shape) for name in DTYPES if name != 'float64'}
    arrays['scalar'] = mx.array(-1.5, dtype=mx.float32)
    arrays['vector'] = mlx_array('int32', (5,))
    mx.save_safetensors(os.path.join(OUT, 'mlx_all.safetensors'), arrays,
                        metadata={'format': 'mlx', 'note': 'caf\u00e9 "quoted"\n'})
    mx.save_safetensors(os.path.join(OUT, 'mlx_nometa.safetensors'), {'w': mlx_array('float16', (4,))})

    # NumPy's writer: other byte order, Fortran order, empty, 0-d
    cases = {
        'np_be_float32': np_array('float32', shape, '>'),
        'np_be_int64': np_array('int64', shape, '>'),
        'np_be_uint16': np_array('uint16', shape, '>'),
        'np_be_float64': np_array('float64', shape, '>'),
        'np_be_complex64': np_array('complex64', shape, '>'),
        'np_fortran_float64': np.asfortranarray(np_array('float64', shape)),
        'np_fortran3_int16': np.asfortranarray(np_array('int16', (2, 3, 4))),
        'np_empty_float32': np.zeros((0, 3), np.float32),
        'np_scalar_int32': np.array(-7, np.int32),
        'np_bool': np_array('bool', shape),
        'np_vector_uint8': np_array('uint8', (7,)),
    }
    for fname, arr in cases.items():
        path = os.path.join(OUT, fname + '.npy')
        np.save(path, arr)
        got = mx.load(path)
        want = arr.astype(arr.dtype.newbyteorder('=')) if arr.dtype.itemsize > 1 else arr
        if fname == 'np_be_complex64':
            # MLX reverses all 8 bytes of a big-endian complex64 (swapping
            # the real and imaginary parts); test_io.c checks the correct
            # values and this script records the difference.
            print('MLX loads np_be_complex64 as', np.array(got).ravel()[:3], 'numpy has', want.ravel()[:3])
            continue
        assert got.shape == want.shape and np.array_equal(np.array(got), want), fname
    print('wrote', len(os.listdir(OUT)), 'files to', OUT)

    # the file examples/safetensors.c reads
    mx.save_safetensors(os.path.join(ROOT, 'examples', 'arrays.safetensors'),
                        {'weight': mx.array([[1.0, 2.0], [3.0, 4.0]]),
                         'bias': mx.array([0.5, -0.5], dtype=mx.float16),
                         'steps': mx.array(3, dtype=mx.int32)},
                        metadata={'format': 'mlx'})


def check(d):
    """Loads what test_io.c wrote (io_out_<name>.npy for every dtype,
    io_out_all.safetensors) with MLX, and the .npy files with NumPy."""
    bad = 0
    for name in DTYPES:
        path = os.path.join(d, f'io_out_{name}.npy')
        a = mx.load(path)
        ok = same(a, name, (2, 3))
        if DTYPES[name][1] is not None:
            ok = ok and np.array_equal(np.load(path), values(name, (2, 3)).astype(DTYPES[name][1]))
        print(('ok  ' if ok else 'BAD ') + path)
        bad += not ok
    arrays, meta = mx.load(os.path.join(d, 'io_out_all.safetensors'), return_metadata=True)
    for name in DTYPES:
        if name == 'float64':
            continue
        ok = same(arrays[name], name, (2, 3))
        print(('ok  ' if ok else 'BAD ') + 'safetensors ' + name)
        bad += not ok
    ok = meta == {'format': 'mlx', 'note': 'caf\u00e9 "quoted"\n'}
    print(('ok  ' if ok else 'BAD ') + 'metadata ' + repr(meta))
    bad += not ok
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        sys.exit(check(sys.argv[2]))
    write()
