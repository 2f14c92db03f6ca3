#!/usr/bin/env bash
# Two commands timed in turn, A B A B ..., each after a pause: the paced
# A/B the figures in bench/README.md quote.
#
#   bench/ab.sh PAIRS 'COMMAND A' 'COMMAND B'
#
# Each command is one string run by bash, its output thrown away. Each run
# follows PAUSE seconds of idle (default 2; bench/README.md, "Paced runs",
# says why). Prints, for each command, the median wall clock, user and
# system CPU, peak resident memory and page faults (the kernel's account
# of the finished process, from wait4), then B/A: the median of the ratios
# of runs made side by side, which holds when the machine's speed drifts
# between pairs, and the ratio of the two medians.
set -euo pipefail
if [ $# -ne 3 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: bench/ab.sh PAIRS 'COMMAND A' 'COMMAND B' (PAIRS: a whole number, 1 or more)" >&2
  exit 2
fi
pairs="$1"
a="$2"
b="$3"
echo "$pairs pairs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), ${PAUSE:-2} s idle before each run"
echo
exec python3 - "$pairs" "${PAUSE:-2}" "$a" "$b" <<'EOF'
import os, statistics, subprocess, sys, time

pairs, pause, commands = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:5]

def run(command):
    """wall, user, system (s), peak RSS (KiB), page faults of one run."""
    time.sleep(pause)
    start = time.perf_counter()
    child = subprocess.Popen(["bash", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = 0  # reaped above
    return (wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss, usage.ru_minflt + usage.ru_majflt)

runs = {c: [] for c in commands}
for _ in range(pairs):
    for c in commands:
        runs[c].append(run(c))

print("| command | wall | user | system | peak RSS | page faults |")
print("|---|---:|---:|---:|---:|---:|")
for label, c in zip("AB", commands):
    wall, user, system, peak, faults = (statistics.median(col) for col in zip(*runs[c]))
    print(f"| {label}: `{c}` | {wall * 1000:.0f} ms | {user * 1000:.0f} ms | {system * 1000:.0f} ms | {peak / 1024:.0f} MiB | {faults:,.0f} |")
print()
a, b = ([r[0] for r in runs[c]] for c in commands)
pairwise = statistics.median(y / x for x, y in zip(a, b))
print(f"B/A wall: {pairwise:.3f} pair by pair, {statistics.median(b) / statistics.median(a):.3f} by medians")
EOF
