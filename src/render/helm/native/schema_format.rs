//! The `format` keyword as helm v3.17.1's gojsonschema v1.2.0 checks it
//! (`format_checkers.go` `FormatCheckers`, called from `validateString`
//! and `validateNumber` in `validation.go`): a string is checked by the
//! named checker, a number fails every known format (v1.2.0's checkers
//! return false for what is not a string), anything else and any unknown
//! format pass.
//!
//! Where a checker rests on a Go parser (`url.Parse`, `mail.ParseAddress`,
//! `time.Parse`, `regexp.Compile`), only strings of a plain shape that Go
//! surely accepts are judged valid here; the others are left unjudged, and
//! the values "not supported natively", rather than guessed either way.

use std::net::IpAddr;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// What a format check of one value found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Check {
    /// gojsonschema accepts it.
    Valid,
    /// gojsonschema refuses it.
    Invalid,
    /// Not judged here.
    Unknown,
}

/// The formats gojsonschema v1.2.0 knows.
const KNOWN: &[&str] = &[
    "date",
    "time",
    "date-time",
    "hostname",
    "email",
    "idn-email",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "uuid",
    "regex",
    "json-pointer",
    "relative-json-pointer",
];

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// Whether `re` matches `s`; unknown if the pattern did not compile.
fn matches(re: Option<&Regex>, s: &str) -> Check {
    match re {
        Some(r) if r.is_match(s) => Check::Valid,
        Some(_) => Check::Invalid,
        None => Check::Unknown,
    }
}

/// Valid when `sure` holds, else not judged.
fn sure(ok: bool) -> Check {
    if ok {
        Check::Valid
    } else {
        Check::Unknown
    }
}

/// Checks `v` against the format `name`.
pub(super) fn check(name: &str, v: &Value) -> Check {
    static HOSTNAME: OnceLock<Option<Regex>> = OnceLock::new();
    static UUID: OnceLock<Option<Regex>> = OnceLock::new();
    static POINTER: OnceLock<Option<Regex>> = OnceLock::new();
    static REL_POINTER: OnceLock<Option<Regex>> = OnceLock::new();
    static EMAIL: OnceLock<Option<Regex>> = OnceLock::new();
    if !KNOWN.contains(&name) {
        return Check::Valid;
    }
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Number(_) => return Check::Invalid,
        _ => return Check::Valid,
    };
    match name {
        "hostname" => {
            let r = re(
                &HOSTNAME,
                r"^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])(\.([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9]))*$",
            );
            match matches(r, s) {
                Check::Valid if s.len() >= 256 => Check::Invalid,
                c => c,
            }
        }
        "uuid" => matches(
            re(
                &UUID,
                r"^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$",
            ),
            s,
        ),
        "json-pointer" => matches(re(&POINTER, r"^(?:/(?:[^~/]|~0|~1)*)*$"), s),
        "relative-json-pointer" => matches(
            re(
                &REL_POINTER,
                r"^(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)$",
            ),
            s,
        ),
        // `net.ParseIP` and a `.` (or `:`); Rust's parser refuses what Go's
        // refuses (leading zeros, zones), and reads the same forms.
        "ipv4" => match s.parse::<IpAddr>() {
            Ok(_) if s.contains('.') => Check::Valid,
            Ok(_) => Check::Invalid,
            Err(_) => Check::Unknown,
        },
        "ipv6" => match s.parse::<IpAddr>() {
            Ok(_) if s.contains(':') => Check::Valid,
            Ok(_) => Check::Invalid,
            Err(_) => Check::Unknown,
        },
        // `mail.ParseAddress`: a dot-atom local part and domain.
        "email" | "idn-email" => sure(
            re(
                &EMAIL,
                r"^[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$",
            )
            .is_some_and(|r| r.is_match(s)),
        ),
        "date" => sure(date(s)),
        "time" => sure(time(s)),
        "date-time" => sure(date_time(s) || date(s) || time(s)),
        "uri" | "iri" => sure(uri(s, true)),
        "uri-reference" | "iri-reference" => sure(uri(s, false)),
        "regex" if s.is_empty() => Check::Valid,
        // `regexp.Compile`, `url.Parse` of a template: not judged.
        _ => Check::Unknown,
    }
}

/// `time.Parse("2006-01-02", s)`: four-digit year, a real day of the month.
fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS`, optionally `Z` or `±HH:MM` (`15:04:05`, `15:04:05Z07:00`).
fn time(s: &str) -> bool {
    let (clock, zone) = if let Some(c) = s.strip_suffix('Z') {
        (c, "")
    } else if s.len() > 8 && matches!(s.as_bytes()[8], b'+' | b'-') {
        (&s[..8], &s[9..])
    } else {
        (s, "")
    };
    let two = |t: &str, max: u32| {
        t.len() == 2
            && t.bytes().all(|c| c.is_ascii_digit())
            && t.parse::<u32>().is_ok_and(|n| n <= max)
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let clock_ok = parts.len() == 3 && two(parts[0], 23) && two(parts[1], 59) && two(parts[2], 59);
    let zone_ok = zone.is_empty()
        || zone
            .split_once(':')
            .is_some_and(|(h, m)| two(h, 23) && two(m, 59));
    clock_ok && zone_ok
}

/// RFC 3339 with an optional fraction: `2006-01-02T15:04:05.999Z07:00`.
fn date_time(s: &str) -> bool {
    let Some((d, rest)) = s.split_once('T') else {
        return false;
    };
    if !date(d) || rest.len() < 9 {
        return false;
    }
    let (clock, tail) = rest.split_at(8);
    let tail = match tail.strip_prefix('.') {
        Some(f) => {
            let digits = f.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            &f[digits..]
        }
        None => tail,
    };
    !tail.is_empty() && time(&format!("{clock}{tail}"))
}

/// A URI (`scheme:` first when `absolute`) of plain ASCII that
/// `url.Parse` surely accepts: no backslash, `%` only before two hex
/// digits, an authority of a host name and an optional numeric port.
pub(super) fn uri(s: &str, absolute: bool) -> bool {
    const OTHER: &[u8] = b"-._~:/?#[]@!$&'()*+,;=%";
    let b = s.as_bytes();
    if !b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || OTHER.contains(c))
    {
        return false;
    }
    for (i, c) in b.iter().enumerate() {
        if *c == b'%'
            && !(b
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)))
        {
            return false;
        }
    }
    let scheme_end = s.find(':').filter(|&i| {
        i > 0
            && b[0].is_ascii_alphabetic()
            && b[..i]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
    });
    let rest = match scheme_end {
        Some(i) => &s[i + 1..],
        None if absolute => return false,
        None => {
            // A relative reference whose first segment holds a colon is an
            // error of `url.Parse`.
            let first = s.split(['/', '?', '#']).next().unwrap_or("");
            if first.contains(':') {
                return false;
            }
            s
        }
    };
    if let Some(after) = rest.strip_prefix("//") {
        let authority = after.split(['/', '?', '#']).next().unwrap_or("");
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = host_port.split_once(':').unwrap_or((host_port, ""));
        if !host
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'-')
            || !port.bytes().all(|c| c.is_ascii_digit())
            || authority.contains(['[', ']'])
        {
            return false;
        }
    }
    // Brackets are only for IPv6 hosts, which are left unjudged.
    !rest.contains(['[', ']'])
}

#[cfg(test)]
mod tests {
    use super::{check, Check};
    use serde_json::json;

    #[test]
    fn formats_are_judged_only_where_go_surely_agrees() {
        let c = |f: &str, v: serde_json::Value| check(f, &v);
        for (f, ok) in [
            ("hostname", "api.example.com"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            ("ipv4", "10.0.0.1"),
            ("ipv6", "fe80::1"),
            ("email", "ops+alerts@example.com"),
            ("date", "2024-02-29"),
            ("time", "23:59:59Z"),
            ("date-time", "2024-02-29T23:59:59.5+01:00"),
            ("uri", "https://charts.example.com:8443/a/b?x=1#top"),
            ("uri-reference", "../values.yaml"),
            ("json-pointer", "/a/b~1c"),
            ("x-not-known", "anything"),
        ] {
            assert_eq!(c(f, json!(ok)), Check::Valid, "{f} {ok}");
        }
        for (f, bad) in [
            ("hostname", "-bad-.example"),
            ("uuid", "123E4567-E89B-12D3-A456-426614174000"),
            ("ipv4", "fe80::1"),
            ("json-pointer", "a/b"),
        ] {
            assert_eq!(c(f, json!(bad)), Check::Invalid, "{f} {bad}");
        }
        // gojsonschema v1.2.0 fails a number against any known format,
        // and ignores booleans, objects and arrays.
        assert_eq!(c("hostname", json!(1)), Check::Invalid);
        assert_eq!(c("hostname", json!(true)), Check::Valid);
        // What rests on a Go parser and is not plainly valid is not judged.
        for (f, odd) in [
            ("uri", "http://[::1]:80/"),
            ("uri", "relative/path"),
            ("uri", "http://h/%zz"),
            ("email", "\"quoted\"@example.com"),
            ("date", "2023-02-29"),
            ("time", "24:00:00"),
            ("regex", "a+"),
            ("uri-template", "/a/{b}"),
        ] {
            assert_eq!(c(f, json!(odd)), Check::Unknown, "{f} {odd}");
        }
    }
}
