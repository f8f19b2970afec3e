#!/bin/sh
# The mpi suite's check of examples/distributed_sgd.c: its loss curve on
# NP processes equals the one-process run on whole batches, to float32
# rounding (relative 1e-5 per printed loss).
# Usage: mpi_sgd_check.sh MPIRUN NP PROGRAM STEPS
set -eu
mpirun=$1 np=$2 prog=$3 steps=$4
one=$("$prog" "$steps")
many=$("$mpirun" -np "$np" --oversubscribe "$prog" "$steps")
printf '%s\n' "$one" > "${TMPDIR:-/tmp}/sgd_one.$$"
printf '%s\n' "$many" | awk -v ref="${TMPDIR:-/tmp}/sgd_one.$$" '
  { getline line < ref; split(line, r, " "); d = $4 - r[4]; if (d < 0) d = -d
    if ($2 != r[2] || d > 1e-5 * (r[4] < 0 ? -r[4] : r[4]) + 1e-7) { print "step " $2 ": " $4 " vs " r[4]; bad = 1 }
    n++ }
  END { if (n == 0) { print "no output"; exit 1 } exit bad }'
rc=$?
rm -f "${TMPDIR:-/tmp}/sgd_one.$$"
echo "$np processes: $(printf '%s\n' "$many" | wc -l) losses equal the one-process run"
exit $rc
