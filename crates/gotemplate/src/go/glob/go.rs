//! The ApplicationSet git generator's glob dialects. It depends on three:
//!
//! - Go's `path.Match` for `directories[].path` (`*` and `?` stop at `/`);
//! - git pathspecs for `files[].path` with the controller's default globbing
//!   (`git ls-files -- <pattern>`: wildcards cross `/`, and a pattern naming
//!   a directory matches everything under it);
//! - `doublestar` for `files[].path` with `--enable-new-git-file-globbing`
//!   (`*` stops at `/`, `**` spans directories, `{a,b}` alternation).
//!
//! None of them is Argo CD's `util/glob` (gobwas), which is
//! [`crate::go::glob`].

/// Go `path.Match(pattern, name)`. A malformed pattern (`ErrBadPattern`: an
/// unterminated class or a trailing backslash) is `None`; Argo CD logs it
/// and treats the entry as not matching.
#[must_use]
pub fn go_path_match(pattern: &str, name: &str) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Validate the whole pattern up front, as Go does.
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => {
                if i + 1 >= p.len() {
                    return None;
                }
                i += 2;
            }
            '[' => i = class_end(&p, i)?,
            _ => i += 1,
        }
    }
    Some(wild(&p, &n, Dialect::Path))
}

/// git pathspec matching as `git ls-files -- <pattern>` applies it (no
/// `:(glob)` magic): the literal prefix may name a directory, and wildcards
/// match across `/`.
#[must_use]
pub fn git_pathspec_match(pattern: &str, path: &str) -> bool {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    if pattern.is_empty() || pattern == "." {
        return true;
    }
    if let Some(rest) = path.strip_prefix(pattern) {
        if rest.is_empty() || rest.starts_with('/') || pattern.ends_with('/') {
            return true;
        }
    }
    if !pattern.contains(['*', '?', '[', '\\']) {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = path.chars().collect();
    wild(&p, &n, Dialect::Git)
}

/// A pattern for `doublestar.Match` (as used by `FilepathGlob` under the
/// new globbing), its braces expanded once for every path it is matched to.
pub struct Doublestar {
    alternatives: Vec<Vec<char>>,
}

impl Doublestar {
    /// Expands `pattern`'s braces.
    ///
    /// # Errors
    /// Braces that expand to more than [`MAX_BRACE_ALTERNATIVES`]
    /// alternatives: the pattern is refused rather than matched against
    /// some of them, which would silently select fewer files.
    pub fn new(pattern: &str) -> Result<Doublestar, String> {
        let mut alternatives = Vec::new();
        let mut work = 0;
        if !expand_braces(pattern, &mut alternatives, &mut work) {
            return Err(format!(
                "the pattern `{pattern}` expands to more than {MAX_BRACE_ALTERNATIVES} brace alternatives {}", crate::limits::BEYOND_LIMITS
            ));
        }
        Ok(Doublestar {
            alternatives: alternatives
                .into_iter()
                .map(|a| a.chars().collect())
                .collect(),
        })
    }

    /// Whether `path` matches.
    #[must_use]
    pub fn matches(&self, path: &str) -> bool {
        let n: Vec<char> = path.chars().collect();
        self.alternatives
            .iter()
            .any(|p| wild(p, &n, Dialect::Doublestar))
    }
}

/// Most alternatives one pattern's braces may expand to.
pub const MAX_BRACE_ALTERNATIVES: usize = 256;

/// Bytes of intermediate patterns brace expansion may build (a pattern of
/// thousands of one-alternative groups would otherwise be copied once per
/// group per alternative).
const MAX_BRACE_WORK: usize = 16 << 20;

/// The directory part of a pattern before its first wildcard, used to limit tree walks.
#[must_use]
pub fn literal_dir_prefix(pattern: &str) -> &str {
    let cut = pattern
        .find(['*', '?', '[', '\\', '{'])
        .unwrap_or(pattern.len());
    match pattern[..cut].rfind('/') {
        Some(i) => &pattern[..i],
        None => "",
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Path,
    Git,
    Doublestar,
}

fn class_end(p: &[char], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if i < p.len() && (p[i] == '^' || p[i] == '!') {
        i += 1;
    }
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some(i + 1);
        }
        if p[i] == '\\' {
            i += 1;
        }
        first = false;
        i += 1;
    }
    None
}

/// Matches one character class starting at `p[start] == '['`; returns the
/// match result and the index after the class.
fn class_match(p: &[char], start: usize, c: char, dialect: Dialect) -> Option<(bool, usize)> {
    let end = class_end(p, start)?;
    let mut i = start + 1;
    let negated = i < end && (p[i] == '^' || (p[i] == '!' && dialect != Dialect::Path));
    if negated {
        i += 1;
    }
    let mut matched = false;
    while i < end - 1 {
        let mut lo = p[i];
        if lo == '\\' {
            i += 1;
            lo = *p.get(i)?;
        }
        i += 1;
        let mut hi = lo;
        if i + 1 < end && p[i] == '-' && p[i + 1] != ']' {
            hi = p[i + 1];
            if hi == '\\' {
                hi = *p.get(i + 2)?;
                i += 1;
            }
            i += 2;
        }
        if lo <= c && c <= hi {
            matched = true;
        }
    }
    Some((matched != negated, end))
}

fn wild(p: &[char], n: &[char], d: Dialect) -> bool {
    // Iterative matcher with single-star backtracking; `**` segments (doublestar) recurse.
    fn go(p: &[char], n: &[char], d: Dialect, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        let (mut pi, mut ni) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while ni < n.len() || pi < p.len() {
            if pi < p.len() {
                match p[pi] {
                    '*' => {
                        let double = pi + 1 < p.len() && p[pi + 1] == '*';
                        if d == Dialect::Doublestar && double {
                            let seg_start = pi == 0 || p[pi - 1] == '/';
                            let mut after = pi + 2;
                            while after < p.len() && p[after] == '*' {
                                after += 1;
                            }
                            let seg_end = after == p.len() || p[after] == '/';
                            if seg_start && seg_end {
                                // `**` matches zero or more whole path segments.
                                let rest = if after < p.len() {
                                    &p[after + 1..]
                                } else {
                                    &p[after..]
                                };
                                if after == p.len() {
                                    return true;
                                }
                                let mut k = ni;
                                loop {
                                    if go(rest, &n[k..], d, depth + 1) {
                                        return true;
                                    }
                                    match n[k..].iter().position(|c| *c == '/') {
                                        Some(off) => k += off + 1,
                                        None => return false,
                                    }
                                }
                            }
                        }
                        while pi < p.len() && p[pi] == '*' {
                            pi += 1;
                        }
                        star = Some((pi, ni));
                        continue;
                    }
                    '?' if ni < n.len() && (d == Dialect::Git || n[ni] != '/') => {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                    '[' if ni < n.len() => {
                        if let Some((ok, next)) = class_match(p, pi, n[ni], d) {
                            if ok && (d == Dialect::Git || n[ni] != '/') {
                                pi = next;
                                ni += 1;
                                continue;
                            }
                        } else if n[ni] == '[' {
                            pi += 1;
                            ni += 1;
                            continue;
                        }
                    }
                    '\\' if pi + 1 < p.len() && ni < n.len() && p[pi + 1] == n[ni] => {
                        pi += 2;
                        ni += 1;
                        continue;
                    }
                    c if c != '\\' && c != '?' && c != '[' && ni < n.len() && c == n[ni] => {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            // Mismatch: let the last star swallow one more character.
            match star {
                Some((sp, sn)) if sn < n.len() && (d == Dialect::Git || n[sn] != '/') => {
                    star = Some((sp, sn + 1));
                    pi = sp;
                    ni = sn + 1;
                }
                _ => return false,
            }
        }
        true
    }
    go(p, n, d, 0)
}

/// Appends `pattern`'s brace alternatives to `out`, stopping (`false`) as
/// soon as one more than [`MAX_BRACE_ALTERNATIVES`] would be needed or the
/// work passes [`MAX_BRACE_WORK`]: `{a,b}` forty times is refused after 257
/// alternatives, not after computing 2^40.
fn expand_braces(pattern: &str, out: &mut Vec<String>, work: &mut usize) -> bool {
    *work = work.saturating_add(pattern.len() + 1);
    if *work > MAX_BRACE_WORK {
        return false;
    }
    let chars: Vec<char> = pattern.chars().collect();
    let Some(open) = chars.iter().position(|c| *c == '{') else {
        if out.len() >= MAX_BRACE_ALTERNATIVES {
            return false;
        }
        out.push(pattern.to_string());
        return true;
    };
    let mut depth = 0;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        if out.len() >= MAX_BRACE_ALTERNATIVES {
            return false;
        }
        out.push(pattern.to_string());
        return true;
    };
    let head: String = chars[..open].iter().collect();
    let tail: String = chars[close + 1..].iter().collect();
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    for w in bounds.windows(2) {
        let alt: String = chars[w[0] + 1..w[1]].iter().collect();
        if !expand_braces(&format!("{head}{alt}{tail}"), out, work) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_match_star_stays_in_segment() {
        assert_eq!(go_path_match("apps/*", "apps/web"), Some(true));
        assert_eq!(go_path_match("apps/*", "apps/web/base"), Some(false));
        assert_eq!(
            go_path_match("apps/*/overlays/*", "apps/web/overlays/prod"),
            Some(true)
        );
        assert_eq!(go_path_match("apps/[a-c]*", "apps/billing"), Some(true));
        assert_eq!(go_path_match("apps/[^a-c]*", "apps/billing"), Some(false));
        assert_eq!(go_path_match("apps/?eb", "apps/web"), Some(true));
        assert_eq!(go_path_match("apps/[", "apps/x"), None);
        assert_eq!(go_path_match("apps", "apps"), Some(true));
        assert_eq!(go_path_match("apps/*", "apps"), Some(false));
    }

    #[test]
    fn git_pathspec_is_greedy() {
        assert!(git_pathspec_match(
            "clusters/*/config.json",
            "clusters/eu/west/config.json"
        ));
        assert!(git_pathspec_match("*.yaml", "a/b/c.yaml"));
        assert!(git_pathspec_match("clusters", "clusters/eu/config.json"));
        assert!(!git_pathspec_match("cluster", "clusters/eu/config.json"));
        assert!(git_pathspec_match(
            "clusters/eu/config.json",
            "clusters/eu/config.json"
        ));
    }

    /// `doublestar.Match`; a pattern past [`MAX_BRACE_ALTERNATIVES`] matches nothing.
    fn doublestar_match(pattern: &str, path: &str) -> bool {
        Doublestar::new(pattern).is_ok_and(|d| d.matches(path))
    }

    #[test]
    fn doublestar_is_strict() {
        assert!(!doublestar_match(
            "clusters/*/config.json",
            "clusters/eu/west/config.json"
        ));
        assert!(doublestar_match(
            "clusters/*/config.json",
            "clusters/eu/config.json"
        ));
        assert!(doublestar_match(
            "clusters/**/config.json",
            "clusters/eu/west/config.json"
        ));
        assert!(doublestar_match(
            "clusters/**/config.json",
            "clusters/config.json"
        ));
        assert!(doublestar_match(
            "clusters/{eu,us}/config.json",
            "clusters/us/config.json"
        ));
        assert!(!doublestar_match("*.yaml", "a/b.yaml"));
    }

    #[test]
    fn literal_prefix_bounds_the_walk() {
        assert_eq!(literal_dir_prefix("clusters/*/config.json"), "clusters");
        assert_eq!(literal_dir_prefix("a/b/c.json"), "a/b");
        assert_eq!(literal_dir_prefix("*.json"), "");
    }
}
