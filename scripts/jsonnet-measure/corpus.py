# Compare jrsonnet (jrm eval) with go-jsonnet (gojsonnet 0.22.0) on every .jsonnet under a tree.
import sys, os, json, subprocess, _gojsonnet as gj
root = sys.argv[1]; extra = sys.argv[2:]
stats = {"files":0, "go_ok":0, "agree":0, "exact":0, "differ":0, "jr_err":0, "go_err":0, "go_err_jr_ok":0}
for dp, dn, fn in os.walk(root):
    dn[:] = [d for d in dn if d != '.git']
    for f in sorted(fn):
        if not f.endswith('.jsonnet'): continue
        p = os.path.join(dp, f); stats["files"] += 1
        jp = [dp, root] + [os.path.join(root, e) for e in extra]
        try:
            go = gj.evaluate_file(p, jpathdir=jp, max_stack=500)
            gook = True
        except Exception as e:
            gook = False
        try:
            r = subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "target/release/jsonnet-measure"), "eval", p] + list(reversed(jp)), capture_output=True, text=True, timeout=120)
            jrok = r.returncode == 0; jr = r.stdout
        except subprocess.TimeoutExpired:
            jrok = False; jr = ""
        if not gook:
            stats["go_err"] += 1
            if jrok: stats["go_err_jr_ok"] += 1; print("GO-ERR-JR-OK", p)
            continue
        stats["go_ok"] += 1
        if not jrok:
            stats["jr_err"] += 1; print("JR-ERR", p, r.stderr.splitlines()[:1] if r.stderr else ""); continue
        if json.loads(go) == json.loads(jr):
            stats["agree"] += 1
            if go.strip() == jr.strip(): stats["exact"] += 1
        else:
            stats["differ"] += 1; print("DIFF", p)
print(root, stats)
