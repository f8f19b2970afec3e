#!/usr/bin/env python3
"""The numpy oracle: runs every op of the table (table.py) on random
shapes, layouts and dtypes through libmlx-cpu.so and compares values and
result dtypes with numpy under MLX's rules.

  run.py LIB                    the whole table (what `meson test` runs)
  run.py LIB --only 'sum|add'   ops whose name matches the regex
  run.py LIB --case ID          one case, verbosely (ID as printed: op/dtypes/key)
  run.py LIB --list             the rows and whether the library has them

Environment: ORACLE_SEED (default 1234, also --seed), ORACLE_CASES (random
cases per op and dtype, default 2, also --cases), ORACLE_BIG=0 to leave out
the large cases.

Ops the library does not export yet are skipped and listed, so the oracle
grows as ops land. The run is supervised: the cases execute in a worker
process that reports each case as a JSON line; if the library crashes or
hangs, the case is reported as failed and the worker restarts after it.
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import time
import traceback
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np  # noqa: E402

HANG_SECONDS = 120
# An exported op that reports this is waiting for a part not built yet (e.g.
# trace needs sum): counted as pending, not failed.
PENDING = "Not available yet"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("lib", help="path to libmlx-cpu.so")
    p.add_argument("--header", default=os.path.join(HERE, "..", "..", "include", "mlx", "c",
                                                    "ops.h"))
    p.add_argument("--seed", type=int, default=int(os.environ.get("ORACLE_SEED", "1234")))
    p.add_argument("--cases", type=int, default=int(os.environ.get("ORACLE_CASES", "2")))
    p.add_argument("--big", type=int, default=int(os.environ.get("ORACLE_BIG", "1")))
    p.add_argument("--only", default=None, help="regex on op names")
    p.add_argument("--case", default=None, help="run one case id, verbosely")
    p.add_argument("--list", action="store_true")
    p.add_argument("--selftest", action="store_true",
                   help="build every case with a stand-in library (checks the table)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--resume-after", default=None, help=argparse.SUPPRESS)
    p.add_argument("--verbose", "-v", action="store_true")
    return p.parse_args(argv)


def all_rows():
    import table
    rows = []
    for r in table.ROWS:
        rows.extend(r.expand() if hasattr(r, "expand") else [r])
    return rows


def case_id(row, combo, key):
    return "%s/%s/%s" % (row.name, ",".join(combo), key)


def plan(rows, args):
    """Yields (row, combo, key, id) in a fixed order."""
    only = re.compile(args.only) if args.only else None
    for row in rows:
        if only and not only.search(row.name):
            continue
        for combo in row.combos():
            for key in row.keys(combo, args.cases, args.big):
                yield row, combo, key, case_id(row, combo, key)


class Ctx:
    def __init__(self, lib):
        import inputs
        self.lib = lib
        self.maker = inputs.Maker(lib)


def _free(obj):
    from mlx import MArray
    if isinstance(obj, MArray):
        obj.free()
    elif isinstance(obj, list):
        for o in obj:
            _free(o)


def run_case(ctx, row, combo, key, seed, verbose=False, on_built=None):
    """Returns (status, message): status is pass, fail, unsupported."""
    from mlx import MlxError
    from rules import compare
    lib = ctx.lib
    cid = case_id(row, combo, key)
    rng = np.random.default_rng([seed, zlib.crc32(cid.encode())])
    case = row.build(ctx, rng, combo, key)
    where = case.describe()
    if on_built:
        on_built(where)
    if verbose:
        print("case %s: %s" % (cid, where))
        for i, x in enumerate(case.inputs):
            print("  input %d (%s):\n%s" % (i, x.describe(), np.array2string(
                np.asarray(x.vals), threshold=200)))
    try:
        try:
            res = lib.call(row.name, *case.args)
        except MlxError as e:
            if case.error:
                if len(e.messages) != 1 or not e.messages[0].strip():
                    return "fail", "failed as it should, but reported %d messages: %r (%s)" % (
                        len(e.messages), e.messages, where)
                if not e.left_as_is:
                    return "fail", "failed as it should, but wrote its result (%s)" % where
                last = lib.last_error()
                if last is not None and last != e.messages[0]:
                    return "fail", "mlx_cpu_last_error %r differs from the message %r" % (
                        last, e.messages[0])
                if verbose:
                    print("  refused as expected: %s" % e.messages[0])
                return "pass", ""
            if case.nocheck:
                return "pass", ""
            if case.optional:
                return "unsupported", e.messages[0] if e.messages else ""
            if any(PENDING in m for m in e.messages):
                return "pending", e.messages[0]
            return "fail", "call failed: %s (%s)" % (" | ".join(e.messages), where)
        results = res if isinstance(res, list) else [res]
        if lib.messages:
            return "fail", "call succeeded but reported: %r (%s)" % (lib.take_messages(), where)
        try:
            got = [lib.to_numpy(r) for r in results]
        except MlxError as e:
            if case.error and len(e.messages) == 1:
                return "pass", ""  # refused at evaluation instead of at the call
            if case.nocheck:
                return "pass", ""
            if case.optional:
                return "unsupported", "at eval: " + " | ".join(e.messages)
            return "fail", "evaluation failed: %s (%s)" % (" | ".join(e.messages), where)
        finally:
            _free(results)
        if case.error:
            return "fail", "expected an error, got %s %s (%s)" % (
                [g[1] for g in got], [tuple(np.shape(g[0])) for g in got], where)
        if case.nocheck:
            return "pass", ""
        if len(got) != len(case.expect):
            return "fail", "%d results, expected %d (%s)" % (len(got), len(case.expect), where)
        for i, ((gv, gd), (ev, ed)) in enumerate(zip(got, case.expect)):
            scale = case.scale[i] if case.scale else None
            msg = compare(gv, gd, ev, ed, case.tol, scale)
            if verbose:
                print("  result %d: %s %s\n%s\n  expected %s %s\n%s" % (
                    i, gd, np.shape(gv), np.array2string(np.asarray(gv), threshold=200),
                    ed, np.shape(ev), np.array2string(np.asarray(ev), threshold=200)))
            if msg:
                which = "" if len(got) == 1 else "result %d: " % i
                return "fail", "%s%s (%s)" % (which, msg, where)
        return "pass", ""
    finally:
        for x in case.inputs:
            _free(x.arr)
        _free(case.args)


class _MockArray:
    def free(self):
        pass


class MockLib:
    """Stands in for the library in --selftest: every op exists, arrays are
    placeholders. Used to build every case of every row (also of ops the
    library lacks) so the table's generators and references are exercised
    before their ops land."""

    def __init__(self, header):
        from mlx import parse_header
        self.sigs = parse_header(header)
        self.messages = []

    def has(self, fn):
        return True

    def from_numpy(self, x, d):
        return _MockArray()

    def call(self, op, *args):
        return _MockArray()


def selftest(args):
    import warnings
    warnings.simplefilter("ignore")
    ctx = Ctx(MockLib(args.header))
    n = bad = 0
    for row, combo, key, cid in plan(all_rows(), args):
        rng = np.random.default_rng([args.seed, zlib.crc32(cid.encode())])
        n += 1
        try:
            case = row.build(ctx, rng, combo, key)
            assert case.error or case.nocheck or case.expect, "no expectation"
            for vals, d in case.expect or []:
                from mlx import DTYPES
                assert d in DTYPES, "bad dtype %r" % (d,)
                np.asarray(vals)
        except Exception:
            bad += 1
            print("ORACLE ERROR %s: %s" % (cid, traceback.format_exc(limit=6)))
    print("selftest: built %d cases, %d oracle errors" % (n, bad))
    return 1 if bad else 0


def skip_reason(lib, row):
    fn = row.fn()
    if fn not in lib.sigs:
        return "not declared in ops.h"
    if not lib.has(fn):
        return "not exported"
    return None


def worker(args):
    """Runs the plan, one JSON line per event on stdout."""
    import warnings
    from mlx import Lib
    warnings.simplefilter("ignore")  # numpy's overflow/NaN warnings are expected
    lib = Lib(args.lib, args.header)
    ctx = Ctx(lib)
    out = sys.stdout
    skipping = args.resume_after is not None
    announced = set()
    for row, combo, key, cid in plan(all_rows(), args):
        if skipping:
            if cid == args.resume_after:
                skipping = False
            continue
        why = skip_reason(lib, row)
        if why:
            if row.name not in announced:
                announced.add(row.name)
                out.write(json.dumps({"t": "skip", "op": row.name, "kind": row.kind,
                                      "why": why}) + "\n")
            continue
        out.write(json.dumps({"t": "start", "id": cid}) + "\n")
        out.flush()
        def built(where, cid=cid):
            out.write(json.dumps({"t": "desc", "id": cid, "desc": where}) + "\n")
            out.flush()
        try:
            status, msg = run_case(ctx, row, combo, key, args.seed, on_built=built)
        except Exception:
            status, msg = "fail", "oracle error: " + traceback.format_exc(limit=4).replace(
                "\n", " | ")
        out.write(json.dumps({"t": "res", "id": cid, "op": row.name, "kind": row.kind,
                              "combo": list(combo), "status": status, "msg": msg}) + "\n")
        out.flush()
    out.write(json.dumps({"t": "done"}) + "\n")
    out.flush()


def supervise(args, argv):
    """Runs workers until the plan is done, turning crashes and hangs into
    failures of the case that was running."""
    t0 = time.time()
    print("oracle: library %s, seed %d, %d cases per op and dtype%s" % (
        args.lib, args.seed, args.cases, "" if args.big else ", no large cases"))
    print("rerun one case: %s %s %s --seed %d --case ID" % (
        sys.executable, os.path.relpath(__file__), args.lib, args.seed))
    sys.stdout.flush()
    stats = {}  # op -> {status: count}
    dtypes = {}  # op -> set of dtypes checked
    skipped = {}
    failures = []
    resume = None
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker"] + argv
        if resume:
            cmd += ["--resume-after", resume]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, bufsize=1)
        current, desc, done, hung = None, "", False, False
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], HANG_SECONDS)
            if not ready:
                hung = True
                proc.kill()
                break
            line = proc.stdout.readline()
            if not line:
                break
            ev = json.loads(line)
            if ev["t"] == "start":
                current, desc = ev["id"], ""
            elif ev["t"] == "desc":
                desc = ev["desc"]
            elif ev["t"] == "res":
                current = None
                op, st = ev["op"], ev["status"]
                stats.setdefault(op, {}).setdefault(st, 0)
                stats[op][st] += 1
                if st == "pass":
                    dtypes.setdefault(op, set()).update(d for d in ev["combo"]
                                                        if d[:2] not in ("E-", "P-") and d != "-")
                if st == "fail":
                    failures.append((ev["id"], ev["msg"]))
                    print("FAIL %s: %s" % (ev["id"], ev["msg"]))
                    sys.stdout.flush()
                elif args.verbose:
                    print("%s %s %s" % (st, ev["id"], ev["msg"]))
            elif ev["t"] == "skip":
                skipped[ev["op"]] = ev["why"]
            elif ev["t"] == "done":
                done = True
        err = proc.stderr.read()
        rc = proc.wait()
        if done and rc == 0:
            break
        if current is None:
            print("FAIL (oracle worker): exited with %s outside a case:\n%s" % (rc, err[-3000:]))
            stats.setdefault("(worker)", {}).setdefault("fail", 0)
            stats["(worker)"]["fail"] += 1
            break
        what = "hung for %ds" % HANG_SECONDS if hung else (
            "crashed with signal %d" % -rc if rc < 0 else "exited with %d" % rc)
        op = current.split("/")[0]
        stats.setdefault(op, {}).setdefault("fail", 0)
        stats[op]["fail"] += 1
        failures.append((current, what))
        print("FAIL %s: the library %s (%s)%s" % (
            current, what, desc or "while making the inputs",
            ("; stderr: " + err.strip()[-500:]) if err.strip() else ""))
        sys.stdout.flush()
        resume = current

    # Summary.
    n_pass = sum(s.get("pass", 0) for s in stats.values())
    n_fail = sum(s.get("fail", 0) for s in stats.values())
    n_unsup = sum(s.get("unsupported", 0) for s in stats.values())
    n_pend = sum(s.get("pending", 0) for s in stats.values())
    print("\nops checked (%d):" % len(stats))
    for op in sorted(stats):
        s = stats[op]
        ds = sorted(dtypes.get(op, ()), key=lambda d: __import__("mlx").DTYPES.index(d)
                    if d in __import__("mlx").DTYPES else 99)
        extra = "".join(", %d %s" % (s[k], k) for k in ("fail", "unsupported", "pending")
                        if s.get(k))
        print("  %-22s %4d passed%s; dtypes: %s" % (op, s.get("pass", 0), extra,
                                                     " ".join(ds) if ds else "-"))
    if skipped:
        print("ops skipped (%d), not in the library yet: %s" % (
            len(skipped), " ".join(sorted(skipped))))
    if n_pend:
        print("%d cases pending (the op reports a missing part): %s" % (n_pend, " ".join(
            sorted(op for op in stats if stats[op].get("pending")))))
    if n_unsup:
        print("%d cases unsupported (optional dtypes the library refuses)" % n_unsup)
    print("time %.1fs" % (time.time() - t0))
    print("%d passed, %d failed" % (n_pass, n_fail))
    return 1 if n_fail else 0


def main(argv):
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.selftest:
        return selftest(args)
    if args.list:
        from mlx import Lib
        lib = Lib(args.lib, args.header)
        for row in all_rows():
            print("%-22s %-8s %s" % (row.name, row.kind, skip_reason(lib, row) or "ok"))
        return 0
    if args.case:
        from mlx import Lib
        lib = Lib(args.lib, args.header)
        ctx = Ctx(lib)
        name, combo, key = args.case.rsplit("/", 2)
        rows = [r for r in all_rows() if r.name == name]
        if not rows:
            print("no row named %r" % name)
            return 2
        key = int(key) if key.isdigit() else key
        for row in rows:
            if tuple(combo.split(",")) in [tuple(c) for c in row.combos()] and \
                    key in row.keys(tuple(combo.split(",")), max(args.cases, 1000), True):
                status, msg = run_case(ctx, row, tuple(combo.split(",")), key, args.seed, True)
                print("%s %s" % (status.upper(), msg))
                return 0 if status != "fail" else 1
        print("no case %r" % args.case)
        return 2
    worker_argv = [a for a in argv]
    return supervise(args, worker_argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
