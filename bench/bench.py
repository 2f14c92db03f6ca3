#!/usr/bin/env python3
"""Times gitops-lint side by side with what teams script today.

For each fleet size N it generates a repository with bench/gen.py (base
`main` and heads `one`, `tenpct`, `shared`) and measures:

  * `gitops-lint diff main..<head>` for each head (hyperfine: wall and CPU
    time; GNU time: peak resident memory);
  * the kubectl loop a team scripts today: `kubectl kustomize` over every
    overlay at both revisions, from checked-out trees (checkout not timed).
    Above --kubectl-sample overlays, an evenly spaced sample is timed and
    scaled up to N (the report says so);
  * a one-app change: `kubectl kustomize` of that one overlay at both
    revisions, against the full `gitops-lint diff main..one`.

It also runs each diff once with GITOPS_LINT_STATS=1 to report how much
work was done (blobs parsed, apps rendered, renders reused, apps left
unrendered because their inputs are identical at both revisions), and
stops unless every app is `rendered` or `unchanged`: a benchmark of apps
that failed to render measures nothing.

Results: a table on stdout, <work>/results.json and <work>/results.md.
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HEADS = ("one", "tenpct", "shared")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def generate(work, layout, n, appset):
    name = f"fleet-{layout}{'-appset' if appset else ''}-{n}"
    repo = os.path.join(work, name)
    if not os.path.isdir(repo):
        args = [sys.executable, os.path.join(HERE, "gen.py"), repo, "--apps", str(n), "--layout", layout]
        if appset:
            args.append("--appset")
        sh(args)
    return repo


def checkout(repo, rev):
    """The tree of `rev` as plain files, for kubectl (cached)."""
    dest = os.path.join(repo + "-trees", rev)
    if not os.path.isdir(dest):
        os.makedirs(dest)
        archive = subprocess.run(["git", "-C", repo, "archive", rev], check=True, capture_output=True).stdout
        sh(["tar", "-x", "-C", dest], input=archive)
    return dest


# Seconds of idle before each timed run (`--pause`). Runs timed back to back
# inherit the memory the run before freed, already backed by the machine; a
# run in CI or a hook starts after other work, and on a VM its fresh memory
# can cost several times more (bench/README.md, "Paced runs").
PAUSE = 2


def prepare():
    return ["--prepare", f"sleep {PAUSE}"] if PAUSE > 0 else []


def hyperfine(cmds, runs, warmup, names):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    args = ["hyperfine", "--style", "none", "--runs", str(runs), "--warmup", str(warmup), "--export-json", out, "-N"]
    args += prepare()
    for c, n in zip(cmds, names):
        args += ["--command-name", n, c]
    sh(args, stdout=subprocess.DEVNULL)
    with open(out) as f:
        data = json.load(f)
    os.unlink(out)
    return {r["command"]: r for r in data["results"]}


def hyperfine_shell(cmd, runs, warmup):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    sh(["hyperfine", "--style", "none", "--runs", str(runs), "--warmup", str(warmup), "--export-json", out]
       + prepare() + [cmd],
       stdout=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)["results"][0]
    os.unlink(out)
    return r


def peak_kb(cmd, env=None):
    """Peak resident set size of one run, in KiB (GNU time)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True, env=env)
    last = p.stderr.strip().splitlines()[-1]
    return int(last)


def diff_cmd(binary, repo, head):
    return [binary, "diff", f"main..{head}", "--repo", repo, "--format", "json", "--fail-on", "never"]


def check_render(binary, repo, head, extra=()):
    """Runs one diff (with `extra` arguments); returns (status counts,
    findings, stats line)."""
    env = dict(os.environ, GITOPS_LINT_STATS="1")
    p = subprocess.run(diff_cmd(binary, repo, head) + list(extra), capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"gitops-lint failed on {repo} main..{head}: {p.stderr.strip()}")
    report = json.loads(p.stdout)
    counts = {}
    for a in report["apps"]:
        counts[a["status"]] = counts.get(a["status"], 0) + 1
    # Rendered, or provably identical at both revisions and so not rendered:
    # anything else (a failed render) would make the timing meaningless.
    failed = {k: v for k, v in counts.items() if k not in ("rendered", "unchanged")}
    if failed:
        raise SystemExit(f"gitops-lint did not render every app of {repo} main..{head}: {failed}")
    stats = [l for l in p.stderr.splitlines() if l.startswith("stats:")]
    return counts, len(report["findings"]), (stats[0] if stats else "")


def kubectl_loop(trees, overlays, sample):
    """Wall and CPU seconds of `kubectl kustomize` over every overlay in
    every tree, run one after another as a CI script would. With a sample,
    times an evenly spaced subset and scales it to the whole set."""
    chosen = overlays
    if sample and len(overlays) > sample:
        step = len(overlays) / sample
        chosen = [overlays[int(i * step)] for i in range(sample)]
    scale = len(overlays) / len(chosen)
    t0 = time.perf_counter()
    r0 = os.times()
    for t in trees:
        for o in chosen:
            sh(["kubectl", "kustomize", os.path.join(t, o)], stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = os.times()
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    return {
        "wall": wall * scale,
        "cpu": cpu * scale,
        "runs": len(trees) * len(overlays),
        "timed_runs": len(trees) * len(chosen),
        "extrapolated": scale != 1,
    }


def fmt_s(x):
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 10:
        return f"{x:.1f} s"
    if x >= 1:
        return f"{x:.2f} s"
    return f"{x * 1000:.0f} ms"


def main():
    global PAUSE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the gitops-lint binary (release build)")
    ap.add_argument("--sizes", default="100 150 500 2000", help="fleet sizes, space-separated")
    ap.add_argument("--layout", choices=["kustomize", "plain"], default="kustomize",
                    help="what gitops-lint reads; kubectl always runs on the Kustomize fleet")
    ap.add_argument("--appset", action="store_true", help="apps generated by one ApplicationSet")
    ap.add_argument("--runs", type=int, default=5, help="hyperfine runs per gitops-lint command")
    ap.add_argument("--kubectl-sample", type=int, default=50,
                    help="time at most this many overlays per revision and scale up (0: all)")
    ap.add_argument("--work", default=os.path.join(HERE, "out"), help="where fleets and results go")
    ap.add_argument("--pause", type=float, default=PAUSE,
                    help="seconds idle before each timed run (0: back to back)")
    args = ap.parse_args()
    PAUSE = args.pause
    for tool in ("hyperfine", "kubectl", "git"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is not installed")
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.abspath(args.bin)
    sizes = [int(s) for s in args.sizes.split()]
    machine = {
        "cores": os.cpu_count(),
        "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine()),
        "load_before": os.getloadavg()[0],
        "kubectl": subprocess.run(["kubectl", "version", "--client"], capture_output=True, text=True).stdout.strip().replace("\n", ", "),
        "gitops_lint": subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip(),
    }
    rows = []
    for n in sizes:
        repo = generate(args.work, args.layout, n, args.appset)
        krepo = repo if args.layout == "kustomize" and not args.appset else generate(args.work, "kustomize", n, False)
        row = {"n": n, "layout": args.layout, "appset": args.appset, "heads": {}}
        print(f"== N = {n} ({args.layout}{', appset' if args.appset else ''})", flush=True)
        cmds, names = [], []
        for head in HEADS:
            counts, findings, stats = check_render(binary, repo, head)
            row["heads"][head] = {"apps": counts, "findings": findings, "stats": stats}
            print(f"   {head}: apps {counts}, {findings} findings; {stats}", flush=True)
            cmds.append(" ".join(diff_cmd(binary, repo, head)))
            names.append(head)
        res = hyperfine(cmds, args.runs, 1, names)
        for head in HEADS:
            r = res[head]
            h = row["heads"][head]
            h["mean"], h["stddev"], h["min"] = r["mean"], r["stddev"], r["min"]
            h["cpu"] = r["user"] + r["system"]
            h["peak_kib"] = peak_kb(diff_cmd(binary, repo, head))
            print(f"   diff main..{head}: {fmt_s(h['mean'])} ± {fmt_s(h['stddev'])} wall, "
                  f"{fmt_s(h['cpu'])} CPU, {h['peak_kib'] / 1024:.0f} MiB peak", flush=True)
        # kubectl: every overlay at both revisions (the work a team scripts today).
        base_tree, head_tree = checkout(krepo, "main"), checkout(krepo, "one")
        overlays = sorted(
            os.path.join("apps", a, "overlays", "prod") for a in os.listdir(os.path.join(base_tree, "apps"))
        )
        loop = kubectl_loop([base_tree, head_tree], overlays, args.kubectl_sample)
        row["kubectl_loop"] = loop
        print(f"   kubectl loop ({loop['runs']} runs{', scaled from ' + str(loop['timed_runs']) if loop['extrapolated'] else ''}): "
              f"{fmt_s(loop['wall'])} wall, {fmt_s(loop['cpu'])} CPU", flush=True)
        # One app: the changed overlay rendered at both revisions.
        app = f"svc-{n // 2:04d}"
        ov = os.path.join("apps", app, "overlays", "prod")
        one = hyperfine_shell(
            f"kubectl kustomize {os.path.join(base_tree, ov)} >/dev/null && kubectl kustomize {os.path.join(head_tree, ov)} >/dev/null",
            args.runs, 1)
        row["kubectl_one"] = {"mean": one["mean"], "stddev": one["stddev"], "cpu": one["user"] + one["system"]}
        row["kubectl_peak_kib"] = peak_kb(["kubectl", "kustomize", os.path.join(base_tree, ov)])
        print(f"   kubectl one overlay x2: {fmt_s(one['mean'])} wall, {fmt_s(row['kubectl_one']['cpu'])} CPU; "
              f"kubectl peak {row['kubectl_peak_kib'] / 1024:.0f} MiB per run", flush=True)
        rows.append(row)
    machine["load_after"] = os.getloadavg()[0]
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump({"machine": machine, "rows": rows}, f, indent=2)
    md = render_md(machine, rows, args)
    with open(os.path.join(args.work, "results.md"), "w") as f:
        f.write(md)
    print()
    print(md)


def render_md(machine, rows, args):
    out = []
    out.append(f"Machine: {machine['cores']} cores ({machine['cpu']}), load average "
               f"{machine['load_before']:.1f} before and {machine['load_after']:.1f} after the run; "
               f"{machine['gitops_lint']}; kubectl {machine['kubectl']}; "
               f"each timed run after {PAUSE:g} s idle.")
    out.append("")
    out.append(f"Command: `bench/run.sh --sizes \"{args.sizes}\" --layout {args.layout}"
               f"{' --appset' if args.appset else ''} --runs {args.runs} --kubectl-sample {args.kubectl_sample}`")
    out.append("")
    out.append("Full diff (wall clock, mean of hyperfine runs; CPU = user + system) against the kubectl loop "
               "(every overlay at both revisions, one after another):")
    out.append("")
    out.append("| apps | head | gitops-lint wall | CPU | peak RSS | kubectl loop wall | CPU | wall ratio | CPU ratio |")
    out.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        loop = r["kubectl_loop"]
        star = "*" if loop["extrapolated"] else ""
        for head in HEADS:
            h = r["heads"][head]
            out.append(
                f"| {r['n']} | {head} | {fmt_s(h['mean'])} | {fmt_s(h['cpu'])} | {h['peak_kib'] / 1024:.0f} MiB | "
                f"{fmt_s(loop['wall'])}{star} | {fmt_s(loop['cpu'])}{star} | "
                f"{loop['wall'] / h['mean']:.0f}× | {loop['cpu'] / max(h['cpu'], 1e-3):.0f}× |"
            )
    if any(r["kubectl_loop"]["extrapolated"] for r in rows):
        out.append("")
        out.append(f"\\* timed on an evenly spaced sample of {args.kubectl_sample} overlays per revision, scaled to all of them.")
    out.append("")
    out.append("One-app change (`diff main..one`) against `kubectl kustomize` of that one overlay at both revisions:")
    out.append("")
    out.append("| apps | gitops-lint wall | CPU | kubectl ×2 wall | CPU | gitops-lint / kubectl (wall) |")
    out.append("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        h = r["heads"]["one"]
        k = r["kubectl_one"]
        out.append(f"| {r['n']} | {fmt_s(h['mean'])} | {fmt_s(h['cpu'])} | {fmt_s(k['mean'])} | {fmt_s(k['cpu'])} | "
                   f"{h['mean'] / k['mean']:.2f} |")
    out.append("")
    out.append("Work done (GITOPS_LINT_STATS=1) and render status:")
    out.append("")
    for r in rows:
        for head in HEADS:
            h = r["heads"][head]
            out.append(f"- N={r['n']} {head}: apps {h['apps']}, {h['findings']} findings; {h['stats'] or 'no stats'}")
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
