#!/usr/bin/env python3
"""The numpy oracle for fft.h: every function of include/mlx/c/fft.h
against numpy.fft (in float64) through libmlx-cpu.so.

  fft.py LIB

Checks fft/ifft/rfft/irfft at every length 1..1024 and at large primes,
n padding and truncation, axes (negative, reordered, a subset), the 2-D
and n-D forms, the shifts and the result dtypes. The error measure is
||ours - numpy|| / ||numpy|| (L2 over the result), within TOL. Exit
status 1 on any failure."""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import numpy as np  # noqa: E402

from mlx import Lib  # noqa: E402

# float32 transforms: error grows about as eps * log2(n); Bluestein adds
# a few more roundings.
TOL = 2e-6
PRIMES = [1009, 4093, 10007, 65521, 999983]
failures = []


def data(shape, seed, cplx=True):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape)
    if cplx:
        x = x + 1j * rng.uniform(-1, 1, shape)
        return x.astype(np.complex64)
    return x.astype(np.float32)


def check(name, got, want, dtype):
    out, d = got
    if d != dtype:
        failures.append("%s: dtype %s, want %s" % (name, d, dtype))
        return
    if out.shape != want.shape:
        failures.append("%s: shape %s, want %s" % (name, out.shape, want.shape))
        return
    nw = np.linalg.norm(want.ravel())
    err = np.linalg.norm((out.astype(np.complex128) - want).ravel()) / (nw if nw else 1.0)
    if not err <= TOL:
        failures.append("%s: relative error %.3g" % (name, err))
    return err


def main():
    lib = Lib(sys.argv[1], os.path.join(HERE, "..", "..", "include", "mlx", "c", "fft.h"))
    worst = {}
    lengths = list(range(1, 1025)) + PRIMES
    for n in lengths:
        x = data((n,), n)
        r = data((n,), n + 7, cplx=False)
        xa, ra = lib.from_numpy(x, "complex64"), lib.from_numpy(r, "float32")
        xd, rd = x.astype(np.complex128), r.astype(np.float64)
        cases = [
            ("fft", lib.call("fft_fft", xa, n, -1), np.fft.fft(xd), "complex64"),
            ("ifft", lib.call("fft_ifft", xa, n, 0), np.fft.ifft(xd), "complex64"),
            ("rfft", lib.call("fft_rfft", ra, n, 0), np.fft.rfft(rd), "complex64"),
        ]
        h = n // 2 + 1
        za = lib.from_numpy(x[:h], "complex64")
        cases.append(("irfft", lib.call("fft_irfft", za, n, 0),
                      np.fft.irfft(x[:h].astype(np.complex128), n), "float32"))
        for name, got, want, dt in cases:
            e = check("%s n=%d" % (name, n), lib.to_numpy(got), want, dt)
            if e is not None:
                worst[name] = max(worst.get(name, 0), e)

    # sizes: padding and truncation
    x = data((3, 10), 1)
    xa = lib.from_numpy(x, "complex64")
    xd = x.astype(np.complex128)
    for n in (1, 4, 10, 17, 32):
        check("fft pad/cut n=%d" % n, lib.to_numpy(lib.call("fft_fft", xa, n, 1)), np.fft.fft(xd, n, 1),
              "complex64")
        check("irfft pad/cut n=%d" % n, lib.to_numpy(lib.call("fft_irfft", xa, n, 1)),
              np.fft.irfft(xd, n, 1), "float32")
        check("rfft of complex keeps the real part n=%d" % n,
              lib.to_numpy(lib.call("fft_rfft", xa, n, -1)), np.fft.rfft(xd.real, n, -1), "complex64")

    # axes, 2-D and n-D
    x = data((4, 6, 5), 2)
    r = data((4, 6, 5), 3, cplx=False)
    xa, ra = lib.from_numpy(x, "complex64"), lib.from_numpy(r, "float32")
    xd, rd = x.astype(np.complex128), r.astype(np.float64)
    for axes, s in (([0, 1], [4, 6]), ([-1, 0], [8, 3]), ([1, 2], [6, 7]), ([2, 0, 1], [5, 4, 6]),
                    ([0], [4]), ([1], [9])):
        tag = "axes=%s s=%s" % (axes, s)
        check("fftn " + tag, lib.to_numpy(lib.call("fft_fftn", xa, s, axes)), np.fft.fftn(xd, s, axes),
              "complex64")
        check("ifftn " + tag, lib.to_numpy(lib.call("fft_ifftn", xa, s, axes)), np.fft.ifftn(xd, s, axes),
              "complex64")
        check("rfftn " + tag, lib.to_numpy(lib.call("fft_rfftn", ra, s, axes)), np.fft.rfftn(rd, s, axes),
              "complex64")
        check("irfftn " + tag, lib.to_numpy(lib.call("fft_irfftn", xa, s, axes)),
              np.fft.irfftn(xd, s, axes), "float32")
        if len(axes) == 2:
            check("fft2 " + tag, lib.to_numpy(lib.call("fft_fft2", xa, s, axes)), np.fft.fft2(xd, s, axes),
                  "complex64")
            check("ifft2 " + tag, lib.to_numpy(lib.call("fft_ifft2", xa, s, axes)),
                  np.fft.ifft2(xd, s, axes), "complex64")
            check("rfft2 " + tag, lib.to_numpy(lib.call("fft_rfft2", ra, s, axes)),
                  np.fft.rfft2(rd, s, axes), "complex64")
            check("irfft2 " + tag, lib.to_numpy(lib.call("fft_irfft2", xa, s, axes)),
                  np.fft.irfft2(xd, s, axes), "float32")
    # a batch large enough to be split across the pool, along an inner axis
    x = data((300, 200), 4)
    xa = lib.from_numpy(x, "complex64")
    check("fft batch axis 0", lib.to_numpy(lib.call("fft_fft", xa, 300, 0)),
          np.fft.fft(x.astype(np.complex128), 300, 0), "complex64")
    check("rfft batch axis 1", lib.to_numpy(lib.call("fft_rfft", xa, 200, 1)),
          np.fft.rfft(x.real.astype(np.float64), 200, 1), "complex64")
    # integer and float64 inputs are converted
    # (Lib.call does not keep its array arguments alive: name them)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    ia, fa = lib.from_numpy(i, "int32"), lib.from_numpy(i * 0.5, "float64")
    check("fft of int32", lib.to_numpy(lib.call("fft_fft", ia, 4, 1)), np.fft.fft(i, 4, 1), "complex64")
    check("rfft of float64", lib.to_numpy(lib.call("fft_rfft", fa, 4, 1)), np.fft.rfft(i * 0.5, 4, 1),
          "complex64")

    # shifts
    for shape in ((7,), (4, 5), (3, 6, 5)):
        v = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
        va = lib.from_numpy(v, "float32")
        for axes in ([0], [-1], list(range(len(shape)))):
            for fn, ref in (("fft_fftshift", np.fft.fftshift), ("fft_ifftshift", np.fft.ifftshift)):
                out, d = lib.to_numpy(lib.call(fn, va, axes))
                if d != "float32" or not np.array_equal(out, ref(v, axes)):
                    failures.append("%s %s axes=%s" % (fn, shape, axes))

    for name in sorted(worst):
        print("worst relative error of %s over lengths 1..1024 and primes: %.3g" % (name, worst[name]))
    for f in failures:
        print("FAIL", f)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
