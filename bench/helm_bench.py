#!/usr/bin/env python3
"""Times gitops-lint on Helm fleets against a loop of `helm template`.

For each fleet size N it generates a repository with `bench/gen.py --layout
helm` (one local chart, a value file per app; `--values-ref`: the value
files read through a multi-source `ref: values` source) with the base
`main` and heads `one` (one app's value file), `tenpct` (10% of them) and
`shared` (a chart template: every app changes), and measures:

  * `gitops-lint diff main..<head>` for each head: wall clock and CPU
    (user + system) as the median of --runs runs after one warm-up, peak
    resident memory (GNU time) of one run;
  * the helm loop a team scripts today: `helm template` of every app, with
    Argo CD's flags, at both revisions from checked-out trees (checkout not
    timed), one after another. Above --helm-sample apps an evenly spaced
    sample is timed and scaled to N (marked `*`);
  * a one-app change: `helm template` of that app at both revisions.

Each diff is first run once with GITOPS_LINT_STATS=1 (work done) and the
run stops unless every app is `rendered` or `unchanged`.

Needs Python 3, git, `helm` on PATH (v3.17.1) and GNU time at
/usr/bin/time. Results: a table on stdout and <work>/helm-results.md.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import HEADS, check_render, checkout, diff_cmd, fmt_s, peak_kb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(work, n, values_ref, charts):
    name = f"fleet-helm{'-values-ref' if values_ref else ''}{f'-charts{charts}' if charts > 1 else ''}-{n}"
    repo = os.path.join(work, name)
    if not os.path.isdir(repo):
        args = [sys.executable, os.path.join(HERE, "gen.py"), repo, "--apps", str(n), "--layout", "helm",
                "--charts", str(charts)]
        if values_ref:
            args.append("--values-ref")
        subprocess.run(args, check=True)
    return repo


def timed(cmds, runs, warmup=1):
    """Median wall and CPU seconds of running `cmds` one after another,
    over `runs` runs after `warmup` uncounted ones."""
    walls, cpus = [], []
    for i in range(runs + warmup):
        t0, r0 = time.perf_counter(), os.times()
        for c in cmds:
            subprocess.run(c, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall, r1 = time.perf_counter() - t0, os.times()
        if i >= warmup:
            walls.append(wall)
            cpus.append((r1.children_user - r0.children_user) + (r1.children_system - r0.children_system))
    return statistics.median(walls), statistics.median(cpus)


def helm_template(tree, app, charts):
    """Argo CD's invocation for one app of the fleet (the chart directory
    as working directory is replaced by its path; the output is the same)."""
    chart = "charts/service" if charts == 1 else f"charts/service-{int(app.split('-')[1]) % charts:03d}"
    return ["helm", "template", os.path.join(tree, chart), "--name-template", app,
            "--namespace", app, "--values", os.path.join(tree, "envs", app, "values.yaml"), "--include-crds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the gitops-lint binary (release build)")
    ap.add_argument("--sizes", default="100 500")
    ap.add_argument("--values-ref", action="store_true", help="multi-source apps with `$values` value files")
    ap.add_argument("--charts", type=int, default=1, help="distinct charts in the fleet (app i renders chart i mod K)")
    ap.add_argument("--renderer", choices=["binary", "native"], default="binary",
                    help="gitops-lint's Helm renderer (--helm-renderer)")
    ap.add_argument("--runs", type=int, default=3, help="counted runs of each gitops-lint command")
    ap.add_argument("--warmup", type=int, default=1, help="uncounted runs before them")
    ap.add_argument("--helm-sample", type=int, default=40, help="time at most this many apps per revision and scale")
    ap.add_argument("--work", default=os.path.join(HERE, "out"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.abspath(args.bin)
    helm_version = subprocess.run(["helm", "version", "--short"], capture_output=True, text=True).stdout.strip()
    load_before = os.getloadavg()[0]
    lines = []
    for n in (int(s) for s in args.sizes.split()):
        repo = generate(args.work, n, args.values_ref, args.charts)
        print(f"== N = {n} (helm{', $values' if args.values_ref else ''}, {args.charts} chart(s), "
              f"{args.renderer} renderer)", flush=True)
        extra = ["--helm-renderer", args.renderer]
        diffs = {}
        for head in HEADS:
            counts, findings, stats = check_render(binary, repo, head, extra)
            wall, cpu = timed([diff_cmd(binary, repo, head) + extra], args.runs, args.warmup)
            peak = peak_kb(diff_cmd(binary, repo, head) + extra)
            diffs[head] = (wall, cpu, peak, counts, stats)
            print(f"   diff main..{head}: {fmt_s(wall)} wall, {fmt_s(cpu)} CPU, {peak / 1024:.0f} MiB; "
                  f"apps {counts}; {stats}", flush=True)
        base, head_tree = checkout(repo, "main"), checkout(repo, "one")
        apps = sorted(os.listdir(os.path.join(base, "envs")))
        step = max(1, len(apps) / args.helm_sample)
        sample = [apps[int(i * step)] for i in range(min(len(apps), args.helm_sample))]
        scale = len(apps) / len(sample)
        wall, cpu = timed([helm_template(t, a, args.charts) for t in (base, head_tree) for a in sample], 1)
        loop = (wall * scale, cpu * scale, scale != 1)
        one_app = f"svc-{n // 2:04d}"
        one = timed([helm_template(t, one_app, args.charts) for t in (base, head_tree)], args.runs, args.warmup)
        print(f"   helm loop: {fmt_s(loop[0])} wall, {fmt_s(loop[1])} CPU; "
              f"one app x2: {fmt_s(one[0])} wall, {fmt_s(one[1])} CPU",
              flush=True)
        star = "*" if loop[2] else ""
        for head in HEADS:
            w, c, p, counts, stats = diffs[head]
            lines.append(f"| {n} | {head} | {fmt_s(w)} | {fmt_s(c)} | {p / 1024:.0f} MiB | "
                         f"{fmt_s(loop[0])}{star} | {fmt_s(loop[1])}{star} | {loop[1] / c:.1f}× | "
                         f"{fmt_s(one[1])} | {c / one[1]:.2f} |")
    md = [
        f"Machine: {os.cpu_count()} cores, load average {load_before:.1f} before and "
        f"{os.getloadavg()[0]:.1f} after; helm {helm_version}.",
        "",
        f"Command: `bench/helm_bench.py --sizes \"{args.sizes}\"{' --values-ref' if args.values_ref else ''} "
        f"--charts {args.charts} --renderer {args.renderer} "
        f"--runs {args.runs} --warmup {args.warmup} --helm-sample {args.helm_sample}`",
        "",
        "| apps | head | gitops-lint wall | CPU | peak RSS | helm loop wall | CPU | loop / gitops-lint (CPU) "
        "| helm one app ×2 CPU | gitops-lint / one app (CPU) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *lines,
        "",
    ]
    text = "\n".join(md)
    name = (f"helm{'-values-ref' if args.values_ref else ''}{f'-charts{args.charts}' if args.charts > 1 else ''}"
            f"-{args.renderer}-results.md")
    with open(os.path.join(args.work, name), "w") as f:
        f.write(text)
    print()
    print(text)


if __name__ == "__main__":
    main()
