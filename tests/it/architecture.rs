//! The shape `src/lib.rs` describes: data flows one way. Every `crate::`
//! path in the library's code (comments and test modules aside) is an
//! arrow from one top-level module to another; the arrows must not form a
//! cycle, and the application's libraries (`cache`, `limits`, `local_files`) use
//! nothing but each other. Inside `src/render/kustomize/` the files import
//! one another one way too. (The Go ports are crates of the workspace,
//! `crates/goyaml` and `crates/gotemplate`: the compiler keeps them from
//! naming the application, so nothing here checks them.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The libraries: they know nothing of Argo CD's pipeline.
const LIBRARIES: &[&str] = &["cache", "limits", "local_files"];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Files declared only for tests (`#[cfg(test)] mod x;`), as paths.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(f).expect("readable source");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            if pair[0] != "#[cfg(test)]" {
                continue;
            }
            let decl = pair[1]
                .trim_start_matches("pub ")
                .trim_start_matches("pub(crate) ");
            let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) else {
                continue;
            };
            let dir = if f
                .file_name()
                .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
            {
                f.parent().expect("a parent").to_path_buf()
            } else {
                f.with_extension("")
            };
            out.insert(dir.join(format!("{name}.rs")));
            out.insert(dir.join(name).join("mod.rs"));
        }
    }
    out
}

/// The code of a file without its test module and comments.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level module → the top-level modules its code names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_only_files(&files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files.iter().filter(|f| !tests.contains(*f)) {
        let rel = f.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a component");
        let top = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).expect("readable source"));
        let edges = graph.entry(top.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != top {
                edges.insert(name);
            }
        }
    }
    graph
}

/// A cycle of the graph, if any, as the modules along it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut c = path[i..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

/// The files of `src/render/kustomize/` (but `mod.rs`) → the sibling files
/// their code names through `super::` or `crate::render::kustomize::`.
/// `mod.rs` is left out: it declares every file, holds what all of them
/// share (the result type, the node budget) and the two entry points.
fn kustomize_graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/render/kustomize");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("readable source directory") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("mod.rs") {
            files.push(path);
        }
    }
    let names: BTreeSet<String> = files
        .iter()
        .map(|f| {
            f.file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut graph = BTreeMap::new();
    for f in &files {
        let me = f
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let code = code_of(&std::fs::read_to_string(f).expect("readable source"));
        let mut uses = sibling_uses(&code, &names);
        uses.remove(&me);
        graph.insert(me, uses);
    }
    graph
}

/// The names among `siblings` that `code` reaches through `super::` or
/// `crate::render::kustomize::`, braced groups (`super::{a, b::C}`) included.
fn sibling_uses(code: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for prefix in ["super::", "crate::render::kustomize::"] {
        for (i, _) in code.match_indices(prefix) {
            let rest = &code[i + prefix.len()..];
            let mut firsts = Vec::new();
            if let Some(group) = rest.strip_prefix('{') {
                // The first segment of each top-level item of the group.
                let mut depth = 0;
                let mut start = true;
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => start = true,
                        _ if start && !c.is_whitespace() => {
                            firsts.push(ident(&group[j..]));
                            start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                firsts.push(ident(rest));
            }
            out.extend(firsts.into_iter().filter(|n| siblings.contains(n)));
        }
    }
    out
}

#[test]
fn kustomize_files_import_one_way() {
    let graph = kustomize_graph();
    assert!(
        graph.len() > 10 && graph.get("build").is_some_and(|u| u.contains("load")),
        "the Kustomize sources were read: {graph:?}"
    );
    if let Some(c) = cycle(&graph) {
        panic!(
            "the files of src/render/kustomize/ import each other in a cycle: {}",
            c.join(" -> ")
        );
    }
}

#[test]
fn sibling_uses_reads_paths_and_groups() {
    let siblings: BTreeSet<String> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let code = "use super::a::X;\nuse super::{b, c::{self, Y}, content, KResult};\nfn f() { super::d::g(); crate::render::kustomize::e::h(); super::nodes(); }";
    let want: BTreeSet<String> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(sibling_uses(code, &siblings), want);
    assert!(sibling_uses("use super::{content, KResult};", &siblings).is_empty());
}

#[test]
fn top_level_modules_import_one_way() {
    let graph = module_graph();
    assert!(graph.len() > 10, "the source tree was read: {graph:?}");
    if let Some(c) = cycle(&graph) {
        panic!(
            "the top-level modules import each other in a cycle: {}",
            c.join(" -> ")
        );
    }
}

#[test]
fn libraries_use_only_libraries() {
    for (module, uses) in module_graph() {
        if !LIBRARIES.contains(&module.as_str()) {
            continue;
        }
        let outside: Vec<&String> = uses
            .iter()
            .filter(|u| !LIBRARIES.contains(&u.as_str()))
            .collect();
        assert!(
            outside.is_empty(),
            "the library `{module}` uses {outside:?}, which are pipeline stages"
        );
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let acyclic: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec![])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(cycle(&acyclic), None);
}
