//! The string formats jsonschema/v6 knows (`format.go`), which `format`
//! asserts before draft 2019-09.

/// The formats v6 knows (`format.go` `formats`, and `regex`).
pub(super) const V6_FORMATS: &[&str] = &[
    "regex",
    "json-pointer",
    "relative-json-pointer",
    "uuid",
    "duration",
    "period",
    "ipv4",
    "ipv6",
    "hostname",
    "email",
    "date",
    "time",
    "date-time",
    "uri",
    "iri",
    "uri-reference",
    "iri-reference",
    "uri-template",
    "semver",
];

/// Whether the string `s` is of the format `name` as v6's checker
/// (`format.go`) says; `None` where that rests on a Go parser and is not
/// plainly so.
pub(super) fn format_holds(name: &str, s: &str) -> Option<bool> {
    let all = |t: &str, f: fn(char) -> bool| t.chars().all(f);
    match name {
        // `validateUUID`: five groups of 8-4-4-4-12 hex digits.
        "uuid" => {
            let groups: Vec<&str> = s.split('-').collect();
            Some(
                groups.len() == 5
                    && groups
                        .iter()
                        .zip([8, 4, 4, 4, 12])
                        .all(|(g, n)| g.len() == n && all(g, |c| c.is_ascii_hexdigit())),
            )
        }
        // `validateIPV4`: four `strconv.Atoi` decimals of 0 to 255, none
        // with a leading zero.
        "ipv4" => {
            let groups: Vec<&str> = s.split('.').collect();
            Some(
                groups.len() == 4
                    && groups.iter().all(|g| {
                        !(g.len() > 1 && g.starts_with('0'))
                            && go_atoi(g).is_some_and(|n| (0..=255).contains(&n))
                    }),
            )
        }
        // `validateHostname`.
        "hostname" => {
            let h = s.strip_suffix('.').unwrap_or(s);
            Some(
                h.len() <= 253
                    && h.split('.').all(|l| {
                        (1..=63).contains(&l.len())
                            && !l.starts_with('-')
                            && !l.ends_with('-')
                            && all(l, |c| c.is_ascii_alphanumeric() || c == '-')
                    }),
            )
        }
        "email" => email(s),
        "json-pointer" => Some(json_pointer(s)),
        // `validateRelativeJSONPointer`.
        "relative-json-pointer" => {
            let digits = s.bytes().take_while(u8::is_ascii_digit).count();
            let rest = &s[digits..];
            Some(
                digits > 0
                    && !(digits > 1 && s.starts_with('0'))
                    && (rest == "#" || json_pointer(rest)),
            )
        }
        // `validateURI`: `url.Parse`, and absolute; `validateURIReference`:
        // no backslash, and `url.Parse`.
        "uri" | "iri" => super::super::schema_format::uri(s, true).then_some(true),
        "uri-reference" | "iri-reference" if s.contains('\\') => Some(false),
        "uri-reference" | "iri-reference" => {
            super::super::schema_format::uri(s, false).then_some(true)
        }
        _ => None,
    }
}

/// `validateEmail`: at most 254 bytes, split at the last `@`; a local
/// part of at most 64 bytes, either quoted (it only tests the opening
/// quote, and refuses a backslash or quote between the first and last
/// byte) or of the allowed characters without a leading, trailing or
/// doubled dot; a domain that is a bracketed IPv4 address or a host name.
/// `None` for a bracketed IPv6 address (`netip.ParseAddr`).
fn email(s: &str) -> Option<bool> {
    if s.len() > 254 {
        return Some(false);
    }
    let Some(at) = s.rfind('@') else {
        return Some(false);
    };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    if local.len() > 64 {
        return Some(false);
    }
    if local.len() > 1 && local.starts_with('"') {
        let inner = &local.as_bytes()[1..local.len() - 1];
        if inner.contains(&b'\\') || inner.contains(&b'"') {
            return Some(false);
        }
    } else if local.starts_with('.')
        || local.ends_with('.')
        || local.contains("..")
        || !local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".!#$%&'*+-/=?^_`{|}~".contains(c))
    {
        return Some(false);
    }
    match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(ip) if ip.starts_with("IPv6:") => None,
        Some(ip) => format_holds("ipv4", ip),
        None => format_holds("hostname", domain),
    }
}

/// `validateJSONPointer`: empty, or `/` tokens whose `~` escapes are
/// `~0` or `~1`. (Its character ranges leave out only `/`, which splits.)
fn json_pointer(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    let Some(rest) = s.strip_prefix('/') else {
        return false;
    };
    rest.split('/').all(|tok| {
        let mut chars = tok.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                return false;
            }
        }
        true
    })
}

/// `strconv.Atoi`: an optional sign and decimal digits.
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}
