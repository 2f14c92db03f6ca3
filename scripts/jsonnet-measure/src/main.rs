// jsonnet-measure: see README.md beside this file.
// Measurement harness: evaluate each go-jsonnet testdata/*.jsonnet with jrsonnet
// and compare with its .golden (exact text and JSON-equal).
use jrsonnet_evaluator::{manifest::JsonFormat, trace::PathResolver, FileImportResolver, State};
use std::path::PathBuf;

fn eval(path: &PathBuf, ext: bool) -> Result<String, String> {
    eval_with(path, ext, vec![])
}

fn eval_with(path: &PathBuf, ext: bool, jpath: Vec<PathBuf>) -> Result<String, String> {
    let mut b = State::builder();
    let ctx = jrsonnet_stdlib::ContextInitializer::new(PathResolver::new_cwd_fallback());
    if ext {
        ctx.add_ext_str("stringVar".into(), "2 + 2".into());
        for (k, v) in [("codeVar", "3 + 3"), ("errorVar", "error 'xxx'"), ("staticErrorVar", ")"), ("UndeclaredX", "x"),
            ("selfRecursiveVar", "[42, std.extVar(\"selfRecursiveVar\")[0] + 1]"),
            ("mutuallyRecursiveVar1", "[42, std.extVar(\"mutuallyRecursiveVar2\")[0] + 1]"),
            ("mutuallyRecursiveVar2", "[42, std.extVar(\"mutuallyRecursiveVar1\")[0] + 1]")] {
            let _ = ctx.add_ext_code(k, v);
        }
    }
    b.context_initializer(ctx);
    b.import_resolver(FileImportResolver::new(jpath));
    let s = b.build();
    let _entered = s.enter();
    let _g = jrsonnet_evaluator::stack::limit_stack_depth(500);
    let v = s.import(path.as_path()).map_err(|e| e.to_string())?;
    // As go-jsonnet (and Argo CD through it) does: a top-level function is called with the TLAs (none here).
    let v = jrsonnet_evaluator::apply_tla(&std::collections::HashMap::<jrsonnet_evaluator::IStr, jrsonnet_evaluator::tla::TlaArg>::new(), v).map_err(|e| e.to_string())?;
    v.manifest(JsonFormat::cli(3)).map_err(|e| e.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args[1] == "eval" {
        let f = PathBuf::from(&args[2]);
        let jp: Vec<PathBuf> = args[3..].iter().map(PathBuf::from).collect();
        let r = std::thread::Builder::new().stack_size(256 << 20).spawn(move || {
            std::panic::catch_unwind(|| eval_with(&f, false, jp)).unwrap_or_else(|_| Err("PANIC".into()))
        }).unwrap().join().unwrap_or_else(|_| Err("PANIC".into()));
        match r { Ok(o) => { println!("{o}"); } Err(e) => { eprintln!("{e}"); std::process::exit(1); } }
        return;
    }
    let dir = std::env::args().nth(1).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonnet")).collect();
    files.sort();
    let (mut n, mut exact, mut jsoneq, mut both_err, mut diff, mut we_err, mut they_err) = (0, 0, 0, 0, 0, 0, 0);
    for f in &files {
        let golden = f.with_extension("golden");
        let Ok(g) = std::fs::read_to_string(&golden) else { continue };
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        if name.ends_with("_string_output") { continue; }
        n += 1;
        let gerr = serde_json::from_str::<serde_json::Value>(&g).is_err();
        let fc = f.clone();
        let r = std::thread::Builder::new().stack_size(256 << 20).spawn(move || {
            std::panic::catch_unwind(|| eval(&fc, name.starts_with("extvar"))).unwrap_or_else(|_| Err("PANIC".into()))
        }).unwrap().join().unwrap_or_else(|_| Err("PANIC".into()));
        let fname = f.file_name().unwrap().to_string_lossy();
        match (r, gerr) {
            (Err(_), true) => both_err += 1,
            (Err(e), false) => { we_err += 1; println!("JR-ERR {fname}: {}", e.lines().next().unwrap_or("")); }
            (Ok(_), true) => { they_err += 1; println!("GO-ERR-ONLY {fname}"); }
            (Ok(o), false) => {
                if o.trim_end() == g.trim_end() { exact += 1; }
                else if serde_json::from_str::<serde_json::Value>(&o).ok() == serde_json::from_str::<serde_json::Value>(&g).ok() && serde_json::from_str::<serde_json::Value>(&o).is_ok() { jsoneq += 1; println!("JSONEQ {fname}"); }
                else { diff += 1; println!("DIFF {fname}"); }
            }
        }
    }
    println!("total={n} exact={exact} json_equal={jsoneq} both_error={both_err} differ={diff} jrsonnet_error_only={we_err} go_error_only={they_err}");
}
