#!/usr/bin/env python3
"""The MLX direction of export.h: runs test_export (given as argv[1]) so
that it keeps the functions it exports, with their inputs and outputs, in a
temporary directory, then imports each with MLX and compares
(scripts/make_mlxfn_fixtures.py --check). Needs MLX's Python package: if
this python lacks it and MLX_PYTHON names one that has it, runs under that
one; otherwise exits 77 (meson: skipped), as CI has no MLX."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import mlx.core  # noqa: F401
except ImportError:
    other = os.environ.get("MLX_PYTHON")
    if other and not os.environ.get("MC_MLXFN_REEXEC"):
        os.environ["MC_MLXFN_REEXEC"] = "1"  # once: that python may lack mlx too
        os.execv(other, [other, __file__] + sys.argv[1:])
    print("MLX is not importable here: skipped (set MLX_PYTHON to a python with mlx)")
    sys.exit(77)

sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import make_mlxfn_fixtures  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    env = dict(os.environ, MC_EXPORT_OUT_DIR=d)
    r = subprocess.run([sys.argv[1]], env=env)
    if r.returncode != 0:
        print("test_export failed")
        sys.exit(1)
    sys.exit(make_mlxfn_fixtures.check(d))
