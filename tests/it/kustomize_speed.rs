//! Speed of the native renderer against `kubectl kustomize` on the corpus.
//! Ignored by default; run with
//! `cargo test --release --test it kustomize_speed:: -- --ignored --nocapture`.

use crate::kustomize_common;

use std::time::{Duration, Instant};

use kustomize_common::{corpus_dir, render_dir, Case};

#[test]
#[ignore = "measurement, not a check; needs kubectl and a release build"]
fn native_vs_kubectl() {
    let cases = Case::all(&corpus_dir());
    let mut native = Duration::ZERO;
    let mut external = Duration::ZERO;
    let mut n = 0;
    for c in &cases {
        let t = Instant::now();
        if render_dir(&c.dir, &c.entry).is_err() {
            continue;
        }
        native += t.elapsed();
        let t = Instant::now();
        let out = std::process::Command::new("kubectl")
            .arg("kustomize")
            .arg(c.dir.join(&c.entry))
            .output()
            .expect("kubectl");
        external += t.elapsed();
        assert!(out.status.success(), "{}: kubectl failed", c.name);
        n += 1;
    }
    println!(
        "{n} cases: native {:.3}s, kubectl kustomize {:.3}s, ratio {:.1}x",
        native.as_secs_f64(),
        external.as_secs_f64(),
        external.as_secs_f64() / native.as_secs_f64()
    );
}
