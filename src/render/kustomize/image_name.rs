//! Which images an `images:` entry rewrites. Kustomize compiles
//! `"^" + name + "(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$"` for
//! every entry (`api/internal/image/image.go` `IsImageMatched`), with `name`
//! unescaped: a dot in `registry.example.com/app` matches any character.
//!
//! Compiling that pattern once per entry of every overlay was a tenth of a
//! render of thousands of overlays. Nearly every image name is letters,
//! digits, `/ _ - : @` and dots: as a pattern that is a fixed run of
//! single characters, each a literal or a dot (any character but a
//! newline), so it is matched here character by character, then the tag
//! and digest. Any other name is compiled as Kustomize does.

/// One `images:` entry's `name`, ready to match.
pub(super) enum ImageName {
    /// Only characters that stand for themselves, and dots.
    Plain(String),
    /// Anything else, compiled.
    Pattern(regex::Regex),
}

impl ImageName {
    /// The matcher of `name`.
    ///
    /// # Errors
    /// A name that is not a valid pattern (kubectl v5.5.0 panics on it).
    pub(super) fn new(name: &str) -> Result<ImageName, regex::Error> {
        let plain = |b: u8| {
            b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b':' | b'@' | b'.')
        };
        if name.bytes().all(plain) {
            return Ok(ImageName::Plain(name.to_string()));
        }
        let pattern = format!("^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$");
        regex::Regex::new(&pattern).map(ImageName::Pattern)
    }

    /// Whether `image` is `name`, with any tag and `sha256` digest.
    pub(super) fn matches(&self, image: &str) -> bool {
        match self {
            ImageName::Pattern(re) => re.is_match(image),
            ImageName::Plain(name) => {
                let mut rest = image;
                for b in name.bytes() {
                    let mut chars = rest.chars();
                    match chars.next() {
                        Some(c) if c == char::from(b) || (b == b'.' && c != '\n') => {
                            rest = chars.as_str();
                        }
                        _ => return false,
                    }
                }
                tag_and_digest(rest)
            }
        }
    }
}

/// Whether `rest` is `(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?`
/// whole. Neither `:` nor `@` is in the class, so taking as much of it as
/// there is never passes a match by.
fn tag_and_digest(rest: &str) -> bool {
    let class = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '{' | '}' | '-');
    let mut rest = rest;
    if let Some(tag) = rest.strip_prefix(':') {
        rest = tag.trim_start_matches(class);
    }
    if let Some(digest) = rest.strip_prefix("@sha256:") {
        rest = digest.trim_start_matches(class);
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::ImageName;

    /// Kustomize's own pattern, compiled whatever the name.
    fn kustomize(name: &str) -> regex::Regex {
        regex::Regex::new(&format!(
            "^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$"
        ))
        .expect("a plain name is a valid pattern")
    }

    #[test]
    fn a_plain_name_matches_exactly_what_kustomizes_pattern_matches() {
        let names = [
            "",
            "nginx",
            "registry.example.com/svc-0001",
            "a.b",
            "x:y",
            "img@sha256",
            "ghcr.io/org/app_x-y",
            "..",
        ];
        // Every string of up to three pieces drawn from these: near misses
        // of each name, tags, digests, characters the dot must or must not
        // match, and characters outside the tag class.
        let mut pieces: Vec<String> = names.iter().map(|n| (*n).to_string()).collect();
        pieces.extend(
            [
                ":",
                ":1.4.0",
                ":v{x}",
                "@sha256:",
                "@sha256:abc",
                "@sha25",
                ".",
                "a",
                "b",
                "y",
                "\n",
                "é",
                "/",
                "-",
                "_",
                " ",
                ":a:b",
                "@",
                "x",
                "com",
                "Registry",
            ]
            .map(String::from),
        );
        let mut images = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..3 {
            let next: Vec<String> = last
                .iter()
                .flat_map(|s| pieces.iter().map(move |p| format!("{s}{p}")))
                .collect();
            images.extend(next.iter().cloned());
            last = next;
        }
        let mut matched = 0;
        for name in names {
            let ours = ImageName::new(name).expect("valid");
            assert!(matches!(ours, ImageName::Plain(_)), "{name:?} is plain");
            let theirs = kustomize(name);
            for image in &images {
                let want = theirs.is_match(image);
                assert_eq!(ours.matches(image), want, "name {name:?}, image {image:?}");
                matched += usize::from(want);
            }
        }
        assert!(
            matched > 1_000,
            "the cases include many matches ({matched})"
        );
    }

    #[test]
    fn other_names_are_patterns_and_a_bad_one_is_an_error() {
        let star = ImageName::new("nginx.*").expect("valid");
        assert!(matches!(star, ImageName::Pattern(_)));
        assert!(star.matches("nginx-unprivileged:1.25"));
        assert!(!star.matches("docker.io/nginx"));
        assert!(ImageName::new("nginx[").is_err());
    }
}
