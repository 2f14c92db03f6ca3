//! Entry points shared by the `cargo fuzz` targets (in `fuzz/`, which turn
//! on the `fuzz` feature) and the unit test below that replays every saved
//! crash (`testdata/fuzz-regressions/<target>/<file>`), so `cargo test`
//! re-runs each regression through exactly the code the fuzzer drove,
//! without nightly Rust or cargo-fuzz.
//!
//! Each entry takes arbitrary bytes and must return normally: a panic, an
//! abort or a hang is the bug. Invariants that must hold on any input are
//! checked with `assert!`, so a violation is a crash the fuzzer keeps.

use serde_json::Value;

use crate::manifest::{manifest_from_value, Origin, Scopes};
use crate::render::expand_lists;
use crate::source::MemTree;
use goyaml::{Dialect, Limits, PathSeg};

/// The message the loader gives when the third-party parser panicked; seeing
/// it means the parser has a bug the loader merely contained.
const PARSER_PANIC: &str = "internal error in the yaml parser";

/// The YAML loader: both dialects, default limits, then `line_of` on a path
/// taken from the first document. Also checks that what `gitops-lint render`
/// writes back out reads as the same value.
pub fn yaml_stream(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits::default();
    for dialect in [Dialect::Kyaml, Dialect::SigsYaml] {
        match goyaml::load_all_as(text, dialect, &limits) {
            Ok(docs) => {
                assert!(docs.len() <= limits.max_documents);
                for (i, d) in docs.iter().enumerate() {
                    assert_eq!(d.index, i, "documents are numbered in order");
                    assert!(d.line >= 1, "lines are 1-based");
                }
                if dialect == Dialect::Kyaml {
                    if let Some(first) = docs.first() {
                        let path = first_path(&first.value);
                        let _ = goyaml::line_of(text, 0, &path);
                    }
                }
            }
            Err(e) => {
                assert!(e.line >= 1 && e.column >= 1, "error positions are 1-based");
                assert_ne!(e.message, PARSER_PANIC, "the parser panicked");
            }
        }
    }
}

/// A path to the first leaf of `v`, following first keys and first items.
fn first_path(mut v: &Value) -> Vec<PathSeg<'_>> {
    let mut path = Vec::new();
    loop {
        match v {
            Value::Object(m) => match m.iter().next() {
                Some((k, next)) => {
                    path.push(PathSeg::Key(k.as_str()));
                    v = next;
                }
                None => return path,
            },
            Value::Array(items) => match items.first() {
                Some(next) => {
                    path.push(PathSeg::Index(0));
                    v = next;
                }
                None => return path,
            },
            _ => return path,
        }
    }
}

/// The resource model over loaded documents: list expansion, identity with
/// namespace defaulting, and every typed view of the Argo CD annotations
/// that decide pruning, hooks and ordering.
pub fn resource_model(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(docs) = goyaml::load_all(text) else {
        return;
    };
    let mut scopes = Scopes::default();
    let mut values = Vec::new();
    for d in docs {
        expand_lists(d.into_value(), &mut values);
    }
    for v in &values {
        if v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
            scopes.learn_crd(v);
        }
    }
    for v in values {
        let Ok(m) = manifest_from_value(v, Origin::default(), "fuzz", &scopes) else {
            continue;
        };
        let cluster = scopes.is_cluster_scoped(&m.id.group, &m.id.kind);
        assert!(
            !cluster || m.id.namespace.is_empty(),
            "cluster-scoped objects carry no namespace"
        );
        let _ = m.sync_options().prune_disabled();
        let _ = m.sync_options().delete_disabled();
        let _ = m.hook();
        let _ = m.sync_wave();
        let _ = m.uses_generate_name();
        let _ = crate::plan::is_prunable(&m);
        let _ = m.id.to_string();
    }
}

/// The Go template engine of ApplicationSets on an arbitrary template, with
/// parameters shaped like those a git or list generator yields.
pub fn appset_template(data: &[u8]) {
    use gotemplate::{data_from_params, render, MissingKey};
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let params = serde_json::json!({
        "path": {"path": "apps/web", "basename": "web", "segments": ["apps", "web"]},
        "name": "web", "server": "https://kubernetes.default.svc",
        "values": {"env": "prod", "replicas": "3"},
        "list": ["a", "b", "c"], "n": 3
    });
    let Value::Object(params) = params else {
        return;
    };
    let dot = data_from_params(&params);
    for missing in [MissingKey::Invalid, MissingKey::Zero, MissingKey::Error] {
        if let Err(e) = render(src, &dot, missing) {
            // Parse errors quote little; execution errors are cut to size.
            assert!(
                e.len() <= gotemplate::MAX_ERROR_BYTES + src.len().min(1 << 10) + 256,
                "an error of {} bytes",
                e.len()
            );
        }
    }
}

/// Go-template functions with size arguments, and chains that grow a value,
/// built from the input: a function, a size, a repetition count and a
/// string argument. Whatever the sizes, execution stays within one
/// execution's budget and ends with an output or an error.
pub fn template_sizes(data: &[u8]) {
    use gotemplate::{data_from_params, parse, Budget, MissingKey};
    const CALLS: &[&str] = &[
        "repeat {n} {s}",
        "indent {n} {s}",
        "nindent {n} {s}",
        "replace {s} (repeat {k} {s}) (repeat {n} {s})",
        "join (repeat {k} {s}) (until {n})",
        "splitList {s} (repeat {n} {s})",
        "regexReplaceAll {s} (repeat {n} \"a\") (repeat {k} \"$0\")",
        "regexReplaceAllLiteral {s} (repeat {n} \"a\") {s}",
        "untilStep 0 {n} {k}",
        "trunc {n} (repeat {k} {s})",
        "substr {k} {n} (repeat {n} {s})",
        "printf \"%*d\" {n} {k}",
        "toPrettyJson (list (repeat {n} {s}) (until {k}))",
        "toYaml (dict {s} (repeat {n} {s}))",
        "regexMatch (repeat {k} \"(a)\") (repeat {n} \"a\")",
        "regexFindAll (repeat {k} \"(a*)\") (repeat {n} {s}) -1",
        "regexSplit (repeat {k} {s}) (repeat {n} {s}) -1",
    ];
    const CHAINS: &[&str] = &[
        "{{ $x := {s} }}{{ range until {k} }}{{ $x = cat $x $x }}{{ end }}{{ len $x }}",
        "{{ $d := dict }}{{ range until {k} }}{{ $d = dict {s} $d \"b\" $d }}{{ end }}{{ toJson $d }}",
        "{{ $l := list {s} }}{{ range until {k} }}{{ $l = append $l $l }}{{ end }}{{ toPrettyJson $l }}",
        "{{ $d := dict }}{{ range until {k} }}{{ $_ := set $d {s} (dict \"x\" $d) }}{{ end }}{{ toYaml $d }}",
        "{{ $x := repeat {n} {s} }}{{ range until {k} }}{{ $y := $x }}{{ end }}",
    ];
    if data.len() < 9 {
        return;
    }
    let pick = usize::from(data[0]);
    let n = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let k = u32::from_le_bytes([data[5], data[6], data[7], data[8]]) % 4096;
    let text = String::from_utf8_lossy(&data[9..]);
    let quoted = serde_json::Value::String(text.into_owned()).to_string();
    let shape = if pick % 2 == 0 {
        format!("{{{{ {} }}}}", CALLS[(pick / 2) % CALLS.len()])
    } else {
        CHAINS[(pick / 2) % CHAINS.len()].to_string()
    };
    let src = shape
        .replace("{n}", &n.to_string())
        .replace("{k}", &k.to_string())
        .replace("{s}", &quoted);
    let Ok(t) = parse(&src) else {
        return;
    };
    let dot = data_from_params(&serde_json::Map::new());
    let mut budget = Budget::PER_EXECUTION;
    match t.execute_within(&dot, MissingKey::Invalid, &mut budget) {
        Ok(out) => assert!(
            out.len() <= Budget::PER_EXECUTION.bytes,
            "an output larger than the budget"
        ),
        Err(e) => assert!(
            e.len() <= gotemplate::MAX_ERROR_BYTES + 64,
            "an error of {} bytes",
            e.len()
        ),
    }
    assert!(budget.bytes <= Budget::PER_EXECUTION.bytes);
    assert!(budget.steps <= Budget::PER_EXECUTION.steps);
}

/// ApplicationSet expansion: every document of the input is expanded as an
/// ApplicationSet against a small in-memory repository and one cluster.
pub fn appset_expand(data: &[u8]) {
    use crate::argocd::appset::{self, AppSetContext, AppSetSettings, Cluster};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(docs) = goyaml::load_all(text) else {
        return;
    };
    let tree = MemTree::new(&[
        (
            "apps/web/config.json",
            br#"{"env": "prod", "replicas": 3}"#.as_slice(),
        ),
        ("apps/api/config.json", br#"{"env": "dev"}"#.as_slice()),
        ("apps/api/values.yaml", b"image: api\n".as_slice()),
        (
            "clusters/prod.yaml",
            b"name: prod\nserver: https://prod\n".as_slice(),
        ),
    ]);
    let is_this_repo = |_: &str| true;
    let clusters = [Cluster {
        name: "in-cluster".into(),
        server: "https://kubernetes.default.svc".into(),
        ..Cluster::default()
    }];
    let settings = AppSetSettings::default();
    let cx = AppSetContext {
        tree: &tree,
        is_this_repo: &is_this_repo,
        is_this_revision: None,
        clusters: &clusters,
        settings: &settings,
        index_cache: None,
        templated: None,
    };
    for d in docs {
        if d.value.is_object() {
            let _ = appset::expand(&d.value, &cx);
        }
    }
}

/// Paths the `kustomize_tree` input is split into (on NUL bytes).
const KUSTOMIZE_FILES: [&str; 6] = [
    "app/kustomization.yaml",
    "base/kustomization.yaml",
    "base/deploy.yaml",
    "app/patch.yaml",
    "app/cm.yaml",
    "components/c/kustomization.yaml",
];

/// The native Kustomize renderer on an in-memory tree: the input, split on
/// NUL bytes, fills a kustomization in `app/`, a base, a patch, a resource
/// and a component, and `app/` is rendered as an Argo CD Kustomize source.
pub fn kustomize_tree(data: &[u8]) {
    let chunks: Vec<&[u8]> = data.split(|b| *b == 0).collect();
    let files: Vec<(&str, &[u8])> = KUSTOMIZE_FILES
        .iter()
        .zip(chunks)
        .map(|(p, b)| (*p, b))
        .collect();
    let _ = render_kustomize_app(&files);
}

/// Renders `app/` of an in-memory tree as an Argo CD Kustomize source.
fn render_kustomize_app(
    files: &[(&str, &[u8])],
) -> Result<crate::render::Rendered, crate::render::RenderError> {
    let tree = MemTree::new(files);
    let cache = crate::render::ParseCache::default();
    let options = crate::render::RenderOptions::default();
    let cx = crate::render::RenderContext::new(&tree, &cache, &options);
    let spec = crate::render::SourceSpec {
        path: "app".to_string(),
        kustomize: Some(serde_json::json!({})),
        app_name: "fuzz".to_string(),
        namespace: "fuzz".to_string(),
        ..crate::render::SourceSpec::default()
    };
    crate::render::render(&cx, &spec, &Scopes::default())
}

/// Kustomize patches and replacements on one resource file: the input,
/// split on NUL bytes, is the resources (`r.yaml`), a patch (`p.yaml`,
/// applied as a targeted `patches` entry, through `patchesStrategicMerge`
/// or `patchesJson6902` as the first byte says) and a replacements list
/// (`repl.yaml`). Whatever they do, the build ends with objects or an error,
/// and no object is larger than the per-resource node limit.
pub fn kustomize_patches(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut chunks = rest.split(|b| *b == 0);
    let resources = chunks.next().unwrap_or_default();
    let patch = chunks.next().unwrap_or_default();
    let replacements = chunks.next().unwrap_or_default();
    let kustomization: &[u8] = match mode % 4 {
        0 => b"resources: [r.yaml]\npatches:\n- path: p.yaml\n  target: {kind: ConfigMap}\n",
        1 => b"resources: [r.yaml]\npatchesStrategicMerge: [p.yaml]\n",
        2 => b"resources: [r.yaml]\npatchesJson6902:\n- path: p.yaml\n  target: {version: v1, kind: ConfigMap, name: cm}\n",
        _ => b"resources: [r.yaml]\nreplacements:\n- path: repl.yaml\n",
    };
    let files: Vec<(&str, &[u8])> = vec![
        ("app/kustomization.yaml", kustomization),
        ("app/r.yaml", resources),
        ("app/p.yaml", patch),
        ("app/repl.yaml", replacements),
    ];
    if let Ok(r) = render_kustomize_app(&files) {
        for m in &r.manifests {
            let limit = crate::render::kustomize::MAX_RESOURCE_NODES;
            assert!(
                crate::render::kustomize::nodes(&m.value, limit) <= limit,
                "a resource past the node limit"
            );
        }
    }
}

/// The native Helm renderer on a chart made from the input: split on NUL
/// bytes, it is a template (`templates/t.yaml`), a helpers file
/// (`templates/_helpers.tpl`), the chart's `values.yaml` and a `--set`
/// string (Argo CD's `helm.parameters` as one `name=value` list). Whatever
/// the template does, the render ends with objects or an error within the
/// per-chart budget, never a panic or a hang, and renders nothing larger
/// than the budget's bytes.
pub fn helm_chart(data: &[u8]) {
    let mut chunks = data.split(|b| *b == 0);
    let template = chunks.next().unwrap_or_default();
    let helpers = chunks.next().unwrap_or_default();
    let values = chunks.next().unwrap_or_default();
    let set = String::from_utf8_lossy(chunks.next().unwrap_or_default());
    let files: Vec<(&str, &[u8])> = vec![
        (
            "chart/Chart.yaml",
            b"apiVersion: v2\nname: fuzz\nversion: 0.1.0\n".as_slice(),
        ),
        ("chart/values.yaml", values),
        ("chart/templates/t.yaml", template),
        ("chart/templates/_helpers.tpl", helpers),
    ];
    let parameters: Vec<Value> = set
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
        .collect();
    let tree = MemTree::new(&files);
    let cache = crate::render::ParseCache::default();
    let options = crate::render::RenderOptions {
        helm_renderer: Some(crate::render::HelmRenderer::Native),
        ..crate::render::RenderOptions::default()
    };
    let cx = crate::render::RenderContext::new(&tree, &cache, &options);
    let spec = crate::render::SourceSpec {
        path: "chart".to_string(),
        helm: Some(serde_json::json!({"parameters": parameters})),
        app_name: "fuzz".to_string(),
        namespace: "fuzz".to_string(),
        ..crate::render::SourceSpec::default()
    };
    if let Ok(r) = crate::render::render(&cx, &spec, &Scopes::default()) {
        let bytes: usize = r.manifests.iter().map(|m| m.value.to_string().len()).sum();
        // JSON text is no longer than the YAML it was read from, give or
        // take quoting: a small multiple of the budget bounds it.
        assert!(
            bytes <= 4 * crate::render::helm::native::RENDER_BUDGET.bytes,
            "a render beyond the chart budget"
        );
    }
}

/// The hook analysers behind GL006/GL007: the input as a shell script (and
/// as the `sh -c` argument of a container), and as SQL.
pub fn hook_analysers(data: &[u8]) {
    use crate::rules::analysis::{hook_work, shell, sql};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = shell::parse_script(text);
    let argv = vec!["sh".to_string(), "-c".to_string(), text.to_string()];
    if let Some(script) = shell::inline_script(&argv) {
        let _ = shell::parse_script(script);
    }
    let _ = shell::script_file(&argv);
    let _ = hook_work::migration_tool(&argv);
    let _ = hook_work::migration_image(text);
    let _ = sql::split_statements(text);
    let _ = sql::non_idempotent(text);
}

/// Replays every input a fuzz target once crashed on.
#[cfg(test)]
mod regressions {
    type Entry = fn(&[u8]);

    /// Fuzz target name → its entry point; a directory with no entry here fails.
    const TARGETS: &[(&str, Entry)] = &[
        ("yaml_stream", super::yaml_stream),
        ("resource_model", super::resource_model),
        ("appset_template", super::appset_template),
        ("appset_expand", super::appset_expand),
        ("kustomize_tree", super::kustomize_tree),
        ("hook_analysers", super::hook_analysers),
        ("template_sizes", super::template_sizes),
        ("kustomize_patches", super::kustomize_patches),
        ("helm_chart", super::helm_chart),
    ];

    #[test]
    fn every_saved_fuzz_crash_stays_fixed() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fuzz-regressions");
        let mut replayed = 0;
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .expect("testdata/fuzz-regressions exists")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let name = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let entry = TARGETS.iter().find(|(t, _)| *t == name).map_or_else(
                || panic!("no entry point for fuzz regressions in `{name}`"),
                |(_, f)| *f,
            );
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .expect("readable")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"))
                .collect();
            files.sort();
            for file in files {
                let data = std::fs::read(&file).expect("readable regression file");
                // A panic here names the file through the test's output.
                eprintln!("replaying {}", file.display());
                entry(&data);
                replayed += 1;
            }
        }
        eprintln!("{replayed} fuzz regression(s) replayed");
    }
}
