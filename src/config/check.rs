//! The toolkit every section of `.gitops-lint.yaml` is read with: a
//! checker that collects each problem with its `LINE:COLUMN`, the error
//! that lists them, and path globs.

use serde_json::Value;

use crate::suggest::did_you_mean;

/// Every problem found in a configuration file.
/// Shown as a command-line usage error is: one line a problem, each
/// `FILE:LINE:COLUMN: key path and what is expected`, ending with where the
/// keys are documented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.lines().join("\n"))]
pub struct ConfigError {
    /// The file.
    pub(crate) file: String,
    /// Each problem, one line each (`LINE:COLUMN: ...` when the place is known).
    pub(crate) problems: Vec<String>,
}

impl ConfigError {
    /// One line a problem, as the command line prints them.
    #[must_use]
    pub(crate) fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|p| {
                let sep = if problem_line(p).is_some() { ":" } else { ": " };
                format!("{}{sep}{p} (see docs/configuration.md)", self.file)
            })
            .collect()
    }
}

/// The line a problem is on, when it starts with `LINE:COLUMN: `.
pub(super) fn problem_line(p: &str) -> Option<u32> {
    let (line, rest) = p.split_once(':')?;
    let (column, _) = rest.split_once(": ")?;
    column.parse::<u32>().ok()?;
    line.parse().ok()
}

/// `LINE:COLUMN: msg` for a problem found at the 1-based `line` of `text`:
/// the column of `key` on it when it is there (a flow mapping holds several
/// keys on one line), else of the line's first character.
pub(super) fn at_line(text: &str, line: u32, key: Option<&str>, msg: &str) -> String {
    let src = text
        .lines()
        .nth((line as usize).saturating_sub(1))
        .unwrap_or("");
    let start = src.len() - src.trim_start().len();
    let column = key
        .and_then(|k| src[start..].find(k).map(|i| start + i))
        .unwrap_or(start);
    let column = src[..column].chars().count() + 1;
    format!("{line}:{column}: {msg}")
}

/// A configuration that does not load, as a finding reports it (GL022):
/// one line, and the line of its first problem when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigProblem {
    /// The repository path of the configuration.
    pub(crate) file: String,
    /// Why it does not load, on one line.
    pub(crate) message: String,
    /// The line of the first problem.
    pub(crate) line: Option<u32>,
}

impl ConfigProblem {
    /// The problems of `e`, found in the repository file `file`.
    pub(crate) fn from_error(file: &str, e: &ConfigError) -> ConfigProblem {
        let line = e.problems.first().and_then(|p| problem_line(p));
        ConfigProblem {
            file: file.to_string(),
            // Placed as the command line places them: `FILE:LINE:COLUMN: ...`.
            message: e
                .problems
                .iter()
                .map(|p| match problem_line(p) {
                    Some(_) => format!("{file}:{p}"),
                    None => p.clone(),
                })
                .collect::<Vec<_>>()
                .join("; ")
                .replace('\n', "; "),
            line,
        }
    }
}

/// Collects problems with the line they are on.
pub(crate) struct Checker<'t> {
    pub(super) text: &'t str,
    pub(super) doc: usize,
    pub(super) problems: Vec<String>,
}

impl Checker<'_> {
    pub(crate) fn at(&mut self, path: &[&str], msg: String) {
        let segs: Vec<goyaml::PathSeg<'_>> = path.iter().map(|k| goyaml::PathSeg::Key(k)).collect();
        // Locate the deepest prefix of the path that exists (a missing key
        // points at its parent).
        let found = (0..=segs.len())
            .rev()
            .find_map(|n| goyaml::line_of(self.text, self.doc, &segs[..n]).map(|l| (l, n)));
        self.problems.push(match found {
            Some((l, n)) => at_line(self.text, l, n.checked_sub(1).map(|i| path[i]), &msg),
            None => msg,
        });
    }

    pub(crate) fn keys(&mut self, path: &[&str], v: &Value, known: &[&str]) {
        let Some(map) = v.as_object() else {
            let name = path.join(".");
            self.at(path, format!("`{name}` must be a mapping"));
            return;
        };
        for k in map.keys() {
            if known.contains(&k.as_str()) {
                continue;
            }
            let mut p = path.to_vec();
            p.push(k);
            let full = p.join(".");
            let hint = did_you_mean(k, known)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            self.at(&p, format!("unknown key `{full}`{hint}"));
        }
    }

    pub(crate) fn strings(&mut self, path: &[&str], v: Option<&Value>) -> Vec<String> {
        let Some(v) = v else { return Vec::new() };
        let name = path.join(".");
        match v {
            Value::Null => Vec::new(),
            Value::Array(items) => {
                let mut out = Vec::new();
                for (i, it) in items.iter().enumerate() {
                    match it.as_str() {
                        Some(s) => out.push(s.to_string()),
                        None => {
                            self.at(path, format!("`{name}[{i}]` must be a string"));
                        }
                    }
                }
                out
            }
            _ => {
                self.at(path, format!("`{name}` must be a list of strings"));
                Vec::new()
            }
        }
    }

    /// A list of path globs, each checked (a bad one is a problem, not dropped).
    pub(crate) fn globs(&mut self, path: &[&str], v: Option<&Value>) -> PathGlobs {
        let globs = self.strings(path, v);
        let name = path.join(".");
        let mut builder = globset::GlobSetBuilder::new();
        for g in &globs {
            match globset::GlobBuilder::new(g).literal_separator(true).build() {
                Ok(glob) => {
                    builder.add(glob);
                }
                Err(e) => self.at(path, format!("{name}: `{g}` is not a glob: {}", e.kind())),
            }
        }
        builder.build().map_or_else(
            |_| PathGlobs::default(),
            |set| PathGlobs {
                patterns: globs,
                set,
            },
        )
    }

    pub(crate) fn boolean(&mut self, path: &[&str], v: Option<&Value>) -> Option<bool> {
        match v? {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            _ => {
                let name = path.join(".");
                self.at(path, format!("`{name}` must be true or false"));
                None
            }
        }
    }
}

/// Repository-relative path globs (`*` stops at `/`, `**` crosses it).
#[derive(Clone, Default)]
pub(crate) struct PathGlobs {
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl PathGlobs {
    /// Whether a repository-relative path matches one of the globs.
    #[must_use]
    pub(crate) fn matches(&self, path: &str) -> bool {
        !self.patterns.is_empty() && self.set.is_match(path)
    }

    /// The globs as written.
    #[must_use]
    pub(crate) fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

impl PartialEq for PathGlobs {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl std::fmt::Debug for PathGlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PathGlobs").field(&self.patterns).finish()
    }
}
