//! Plain YAML/JSON directories, as Argo CD's directory source renders them
//! (AC `reposerver/repository/repository.go` `findManifests`): `.yaml`,
//! `.yml` and `.json` files, top level only unless `recurse: true`,
//! `include`/`exclude` globs matched against the path relative to the app
//! path in Argo CD's `util/glob` dialect (see [`gotemplate::go::glob`]:
//! `*` crosses `/`, `**/x` needs a `/` before `x`; exclude wins), `*List`
//! objects expanded, empty documents skipped, and files containing
//! `+argocd:skip-file-rendering` skipped.

use goyaml::json::{LazyValue, View};
use std::sync::Arc;

use serde_json::Value;

use super::kept_parse::Flags;
use super::{expand_lists, RenderContext, RenderError, SourceSpec};
use crate::manifest::Origin;
use crate::source::walk::Flow;
use crate::source::{path, EntryKind};
use gotemplate::go::glob::{Glob, GlobError};

/// The `spec.source.directory` options gitops-lint honours.
#[derive(Debug, Clone, Default)]
struct DirectoryOptions {
    recurse: bool,
    include: Option<Glob>,
    exclude: Option<Glob>,
    /// The `directory.jsonnet` options set on the source (`extVars`,
    /// `tlas`, `libs`), named when a Jsonnet file is refused.
    jsonnet_options: Vec<&'static str>,
}

/// Compiles `include` or `exclude` as AC `getPotentiallyValidManifestFile`
/// matches them: `glob.Match(pattern, relPath)` with no separators, the
/// whole pattern at once (braces are gobwas's own alternatives).
///
/// A pattern gobwas cannot compile is not matched by Argo CD (it logs a
/// warning): an exclude then excludes nothing and an include includes
/// nothing, so the app would render empty. That is reported as a render
/// failure, never as the deletion of every resource.
fn compile(key: &str, pattern: &str) -> Result<Glob, RenderError> {
    Glob::new(pattern, &[]).map_err(|e| {
        if e == GlobError::TooLarge {
            return RenderError::content(format!(
                "directory {key} glob: {e}, beyond what gitops-lint matches"
            ));
        }
        let outcome = if key == "include" {
            "includes no file at all"
        } else {
            "excludes nothing"
        };
        RenderError::content(format!(
            "invalid directory {key} glob `{pattern}` ({e}): Argo CD ignores it with a warning, so it {outcome}"
        ))
    })
}

fn options(spec: &SourceSpec) -> Result<DirectoryOptions, RenderError> {
    let Some(d) = &spec.directory else {
        return Ok(DirectoryOptions::default());
    };
    let glob = |key: &str| -> Result<Option<Glob>, RenderError> {
        match d.get(key).and_then(Value::as_str) {
            Some(p) if !p.is_empty() => compile(key, p).map(Some),
            _ => Ok(None),
        }
    };
    Ok(DirectoryOptions {
        recurse: d.get("recurse").and_then(Value::as_bool).unwrap_or(false),
        include: glob("include")?,
        exclude: glob("exclude")?,
        jsonnet_options: ["extVars", "tlas", "libs"]
            .into_iter()
            .filter(|k| {
                d.get("jsonnet").and_then(|j| j.get(*k)).is_some_and(|v| {
                    v.as_array().is_some_and(|a| !a.is_empty())
                        || v.as_object().is_some_and(|o| !o.is_empty())
                })
            })
            .collect(),
    })
}

/// Whether a file name has an extension Argo CD reads as manifests
/// (case-sensitive, as AC `manifestFile` is: `x.YAML` is not read).
#[must_use]
pub(crate) fn is_manifest_file(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json")
}

/// Renders a directory source.
///
/// # Errors
/// Invalid YAML, non-object documents, Jsonnet (not evaluated), escaping symlinks.
pub(crate) fn render(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
) -> Result<Vec<(Arc<LazyValue>, Origin)>, RenderError> {
    let opts = options(spec)?;
    let mut files = Vec::new();
    collect(cx, &spec.path, &spec.path, &opts, &mut files)?;
    if files.len() >= PARALLEL_FILES {
        if let Some(out) = render_in_parallel(cx, &files)? {
            return Ok(out);
        }
    }
    render_in_order(cx, spec, &files)
}

/// Objects of a directory source, with where each is declared.
type Objects = Vec<(Arc<LazyValue>, Origin)>;

/// Directories with at least this many files are read in parallel: an
/// app-of-apps of thousands of Application files is rendered in every
/// diff, and would otherwise keep one core busy while the other waits.
const PARALLEL_FILES: usize = 64;

/// The files' objects in order, or the first file's error, each file's
/// objects charged to the run's budget as it is read.
fn render_in_order(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    files: &[String],
) -> Result<Objects, RenderError> {
    let mut out = Vec::new();
    for file in files {
        let before = out.len();
        render_file(cx, file, &mut out)?;
        // Checked per file, so memory and time stay bounded while reading.
        cx.cache.charge(out.len() - before)?;
        if out.len() > super::MAX_RESOURCES_PER_SOURCE {
            return Err(super::too_many_resources(&spec.path));
        }
    }
    Ok(out)
}

/// [`render_in_order`]'s answer with the files read in parallel chunks,
/// then taken in order with the same checks. Every chunk stops once the
/// source has more objects than one source may have; the answer is then
/// `None`, and [`render_in_order`] finds which error comes first, reading
/// no more than that limit.
fn render_in_parallel(
    cx: &RenderContext<'_>,
    files: &[String],
) -> Result<Option<Objects>, RenderError> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let limit = super::MAX_RESOURCES_PER_SOURCE;
    let objects = AtomicUsize::new(0);
    let chunk = files
        .len()
        .div_ceil(4 * rayon::current_num_threads())
        .max(16);
    let parts: Vec<Vec<Result<Objects, RenderError>>> = files
        .par_chunks(chunk)
        .map(|files| {
            let mut part = Vec::with_capacity(files.len());
            for file in files {
                if objects.load(Ordering::Relaxed) > limit {
                    break;
                }
                let mut found = Vec::new();
                let read = render_file(cx, file, &mut found);
                objects.fetch_add(found.len(), Ordering::Relaxed);
                // A chunk stops at its first error: no later file is needed.
                let failed = read.is_err();
                part.push(read.map(|()| found));
                if failed {
                    break;
                }
            }
            part
        })
        .collect();
    let total = objects.load(Ordering::Relaxed);
    if total > limit {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(total);
    // In file order: the first error is the first file's that failed.
    for found in parts.into_iter().flatten() {
        let found = found?;
        cx.cache.charge(found.len())?;
        out.extend(found);
    }
    Ok(Some(out))
}

fn collect(
    cx: &RenderContext<'_>,
    root: &str,
    dir: &str,
    opts: &DirectoryOptions,
    files: &mut Vec<String>,
) -> Result<(), RenderError> {
    let mut walk = Collect {
        cx,
        root,
        opts,
        files,
    };
    crate::source::walk::walk(cx.tree, dir, &mut walk).map(|_| ())
}

/// The visitor of [`collect`]: lists through the render context, so every
/// directory read is recorded.
struct Collect<'a, 'c> {
    cx: &'a RenderContext<'c>,
    root: &'a str,
    opts: &'a DirectoryOptions,
    files: &'a mut Vec<String>,
}

impl crate::source::walk::Visitor for Collect<'_, '_> {
    type Error = RenderError;

    fn list(
        &mut self,
        _: &dyn crate::source::Tree,
        dir: &str,
    ) -> Result<Option<Vec<crate::source::Entry>>, RenderError> {
        self.cx.list(dir).map(Some)
    }

    fn entry(
        &mut self,
        _: &str,
        full: &str,
        e: &crate::source::Entry,
    ) -> Result<Flow, RenderError> {
        let (cx, root, opts) = (self.cx, self.root, self.opts);
        // Directories are walked only with `recurse`; a symlink to a
        // directory is never followed (filepath.Walk does not follow them).
        if e.kind == EntryKind::Dir {
            return Ok(if opts.recurse {
                Flow::Continue
            } else {
                Flow::Skip
            });
        }
        // Argo CD checks submodules out with the repository (AC
        // `reposerver/repository/repository.go` `checkoutRevision` →
        // `util/git/client.go` `nativeGitClient.Checkout`, which runs
        // `Submodule` while `ARGOCD_GIT_MODULES_ENABLED` is true, its default in
        // `cmd/argocd-repo-server/commands/argocd_repo_server.go`), and
        // `filepath.Walk` then reads their manifests. Their content is another repository's, which
        // cannot be read here: the app is not analysable, never smaller.
        if e.kind == EntryKind::Submodule && opts.recurse {
            return Err(RenderError::unsupported(format!(
                "`{full}` is a git submodule inside a `recurse: true` directory app; Argo CD checks it out and reads its manifests, which gitops-lint cannot read offline"
            ))
            .at(full, None));
        }
        // The name is matched first (AC `manifestFile`, case-sensitive), so a
        // link with another extension is never even resolved.
        let jsonnet = e.name.ends_with(".jsonnet");
        if !is_manifest_file(&e.name) && !jsonnet {
            return Ok(Flow::Continue);
        }
        match e.kind {
            EntryKind::File => {}
            // A link that leaves the repository is an error; one whose target
            // is missing or is a directory is skipped, as in Argo CD.
            EntryKind::Symlink => {
                if cx.kind_of(full)? != Some(EntryKind::File) {
                    return Ok(Flow::Continue);
                }
            }
            EntryKind::Dir | EntryKind::Submodule => return Ok(Flow::Continue),
        }
        let rel = path::strip_dir(full, root).unwrap_or(full);
        if opts.exclude.as_ref().is_some_and(|g| g.is_match(rel)) {
            return Ok(Flow::Continue);
        }
        if opts.include.as_ref().is_some_and(|g| !g.is_match(rel)) {
            return Ok(Flow::Continue);
        }
        if jsonnet {
            return Err(jsonnet_refused(full, &opts.jsonnet_options).at(full, None));
        }
        self.files.push(full.to_string());
        Ok(Flow::Continue)
    }
}

/// The error for a Jsonnet file of a directory source: Argo CD evaluates it
/// with go-jsonnet (AC `findManifests`, with the source's
/// `directory.jsonnet` options), gitops-lint does not
/// (docs/dependencies.md), so what it renders is unknown.
fn jsonnet_refused(file: &str, options: &[&str]) -> RenderError {
    let with = match options {
        [] => String::new(),
        [one] => format!(", with this source's `directory.jsonnet.{one}`"),
        many => format!(
            ", with this source's `directory.jsonnet` {}",
            many.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    RenderError::unsupported(format!(
        "`{file}` is Jsonnet, which gitops-lint does not evaluate: Argo CD renders it with go-jsonnet{with}, so what it renders is unknown"
    ))
}

/// Renders one file. An object that is a whole document is the parse
/// cache's shared value of it (the inventory scan holds the same one);
/// the items of a list are copies.
fn render_file(
    cx: &RenderContext<'_>,
    file: &str,
    out: &mut Vec<(Arc<LazyValue>, Origin)>,
) -> Result<(), RenderError> {
    // A parse known without reading the blob (earlier in this run, or kept
    // by an earlier one) comes with what is tested in its bytes here.
    let (skip, looks_like_manifest, known) = match cx.known_sigs(file)? {
        Some((docs, flags)) => (
            flags.has(Flags::SKIP_MARKER),
            flags.has(Flags::LOOKS_LIKE_MANIFEST),
            Some(docs),
        ),
        None => {
            let flags = Flags::of(&cx.read(file)?);
            (
                flags.has(Flags::SKIP_MARKER),
                flags.has(Flags::LOOKS_LIKE_MANIFEST),
                None,
            )
        }
    };
    if skip {
        return Ok(());
    }
    // A YAML file that fails to decode before its first object and does not
    // look like a manifest is ignored (AC `getObjsFromYAMLOrJson`): a values
    // file or a tool's config next to the manifests. JSON gets no such leniency.
    let lenient = !file.ends_with(".json") && !looks_like_manifest;
    let docs = match known.map_or_else(
        || cx.load_yaml_shared_as(file, goyaml::Dialect::SigsYaml),
        Ok,
    ) {
        Ok(docs) => docs,
        Err(_) if lenient => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut decoded = 0;
    let mut shared = None;
    for (i, doc) in docs.iter().enumerate() {
        // Read through a view: an app-of-apps' Application files, taken
        // from the records of an earlier run, are not decoded here.
        let view = doc.value.view();
        let has_kind = view
            .get("kind")
            .and_then(View::as_str)
            .is_some_and(|k| !k.is_empty());
        if view.is_null() {
            continue;
        }
        if view.is_object() && has_kind {
            decoded += 1;
            let origin = Origin {
                file: Some(file.to_string()),
                line: Some(doc.line),
                doc_index: Some(doc.index),
            };
            // Anything with `items` may be a list (see `expand_lists`).
            if view.get("items").is_none() {
                let values = shared.get_or_insert_with(|| docs.values(cx.cache));
                out.push((Arc::clone(&values[i]), origin));
                continue;
            }
            let mut items = Vec::new();
            expand_lists(doc.value.with_value(Value::clone), &mut items);
            for value in items {
                if !value.is_object() {
                    return Err(RenderError::content(format!(
                        "`{file}`: a list item in the document at line {} is not an object",
                        doc.line
                    ))
                    .at(file, Some(doc.line)));
                }
                out.push((Arc::new(value.into()), origin.clone()));
            }
            continue;
        }
        if decoded == 0 && lenient {
            return Ok(());
        }
        let line = doc.line;
        let msg =
            format!("`{file}`: the document at line {line} is not a Kubernetes object (no `kind`)");
        return Err(RenderError::content(msg).at(file, Some(line)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argo_globs_cross_separators_and_alternate() {
        let g = compile("include", "*.yaml").unwrap();
        assert!(
            g.is_match("sub/dir/x.yaml"),
            "gobwas `*` without separators crosses `/`"
        );
        let g = compile("include", "{config.yaml,env/*.yaml}").unwrap();
        assert!(g.is_match("config.yaml") && g.is_match("env/prod.yaml"));
        assert!(!g.is_match("other.yaml"));
        let g = compile("exclude", "**/tests/**").unwrap();
        assert!(!g.is_match("tests/x.yaml") && g.is_match("a/tests/x.yaml"));
    }

    #[test]
    fn invalid_globs_say_what_argo_cd_does() {
        let e = compile("include", "[a-z0-9]*.yaml").unwrap_err();
        assert!(
            e.message.contains("includes no file at all"),
            "{}",
            e.message
        );
        let e = compile("exclude", "[").unwrap_err();
        assert!(e.message.contains("excludes nothing"), "{}", e.message);
    }

    /// A directory gives its objects in file order and, when several files
    /// are broken, the error of the first.
    #[test]
    fn a_large_directory_keeps_file_order_and_reports_its_first_broken_file() {
        const FILES: usize = 192;
        let files = super::super::test_files::configmaps(FILES);
        let render_files = |files: &[(String, Vec<u8>)]| {
            super::super::test_files::in_tree(files, |cx| {
                let spec = SourceSpec {
                    path: "apps".into(),
                    ..SourceSpec::default()
                };
                render(cx, &spec)
            })
        };
        let names: Vec<String> = render_files(&files)
            .unwrap_or_else(|e| panic!("{}", e.message))
            .iter()
            .filter_map(|(v, _)| v["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        let expected: Vec<String> = (0..FILES).map(|i| format!("cm-{i:03}")).collect();
        assert_eq!(names, expected);

        let mut broken = files;
        let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n";
        broken[69].1 = bad.as_bytes().to_vec();
        broken[129].1 = bad.as_bytes().to_vec();
        let e = render_files(&broken).expect_err("a broken manifest fails the render");
        assert!(e.message.contains("f069.yaml"), "{}", e.message);
    }

    #[test]
    fn manifest_extensions() {
        assert!(
            is_manifest_file("a.yaml") && is_manifest_file("a.yml") && is_manifest_file("a.json")
        );
        assert!(
            !is_manifest_file("a.YML"),
            "Argo CD matches extensions case-sensitively"
        );
        assert!(!is_manifest_file("README.md") && !is_manifest_file("values.yaml.bak"));
    }
}
