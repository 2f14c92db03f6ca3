//! Sprig's `urlParse` and `urlJoin` (v3.3.0 `url.go`) over Go's
//! `net/url` (`Parse`, `URL.String`, `Userinfo.String`, `Hostname`).

use std::collections::BTreeMap;

use super::args::{arity, type_err, R};
use super::value::V;
use crate::go::quote::go_quote;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    Fragment,
}

/// `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::Fragment => false,
            // Go's host modes fall through to "escape everything else".
            Mode::Host | Mode::Zone => true,
        },
        b'!' | b'(' | b')' | b'*' if mode == Mode::Fragment => false,
        _ => true,
    }
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// `unescape`.
fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, String> {
    let escape_error = |e: &[u8]| format!("invalid URL escape {}", quote(e));
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                if i + 2 >= s.len()
                    || !s[i + 1].is_ascii_hexdigit()
                    || !s[i + 2].is_ascii_hexdigit()
                {
                    let rest = &s[i..];
                    return Err(escape_error(&rest[..rest.len().min(3)]));
                }
                // In a host only non-ASCII bytes are %-encoded, and %25
                // (RFC 6874).
                if mode == Mode::Host && unhex(s[i + 1]) < 8 && &s[i..i + 3] != b"%25" {
                    return Err(escape_error(&s[i..i + 3]));
                }
                if mode == Mode::Zone {
                    let v = unhex(s[i + 1]) << 4 | unhex(s[i + 2]);
                    if &s[i..i + 3] != b"%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(escape_error(&s[i..i + 3]));
                    }
                }
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        quote(&s[i..=i])
                    ));
                }
                i += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            out.push(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// `strconv.Quote` of bytes: those that are not UTF-8 as `\xNN`.
fn quote(b: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in b.utf8_chunks() {
        let q = go_quote(chunk.valid());
        out.push_str(&q[1..q.len() - 1]);
        for x in chunk.invalid() {
            out.push_str(&format!("\\x{x:02x}"));
        }
    }
    out.push('"');
    out
}

/// `escape`.
fn escape(s: &[u8], mode: Mode) -> Vec<u8> {
    const HEX: &[u8] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        if should_escape(c, mode) {
            out.extend([b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        } else {
            out.push(c);
        }
    }
    out
}

/// `url.Userinfo`.
#[derive(Debug, Clone)]
struct User {
    name: Vec<u8>,
    password: Option<Vec<u8>>,
}

impl User {
    /// `Userinfo.String`.
    fn string(&self) -> Vec<u8> {
        let mut out = escape(&self.name, Mode::UserPassword);
        if let Some(p) = &self.password {
            out.push(b':');
            out.extend(escape(p, Mode::UserPassword));
        }
        out
    }
}

/// What `url.Parse` fills of a `url.URL` (the raw hints are not kept:
/// `urlParse` reads the decoded fields).
#[derive(Debug, Default)]
struct Url {
    scheme: Vec<u8>,
    opaque: Vec<u8>,
    user: Option<User>,
    host: Vec<u8>,
    path: Vec<u8>,
    raw_query: Vec<u8>,
    force_query: bool,
    fragment: Vec<u8>,
}

/// `getScheme`.
fn get_scheme(raw: &[u8]) -> Result<(&[u8], &[u8]), String> {
    for (i, &c) in raw.iter().enumerate() {
        match c {
            b'0'..=b'9' | b'+' | b'-' | b'.' if i == 0 => return Ok((b"", raw)),
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'+' | b'-' | b'.' => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok((b"", raw)),
        }
    }
    Ok((b"", raw))
}

fn find(s: &[u8], c: u8) -> Option<usize> {
    s.iter().position(|&b| b == c)
}

fn rfind(s: &[u8], c: u8) -> Option<usize> {
    s.iter().rposition(|&b| b == c)
}

/// `url.Parse`.
fn parse(raw: &[u8]) -> Result<Url, String> {
    let (u, frag) = match find(raw, b'#') {
        Some(i) => (&raw[..i], Some(&raw[i + 1..])),
        None => (raw, None),
    };
    let wrap = |url: &[u8], e: String| format!("parse {}: {e}", quote(url));
    let mut url = parse_inner(u).map_err(|e| wrap(u, e))?;
    if let Some(f) = frag.filter(|f| !f.is_empty()) {
        url.fragment = unescape(f, Mode::Fragment).map_err(|e| wrap(raw, e))?;
    }
    Ok(url)
}

fn parse_inner(raw: &[u8]) -> Result<Url, String> {
    if raw.iter().any(|&b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = Url::default();
    if raw == b"*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with(b"?") && find(rest, b'?') == Some(rest.len() - 1) {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some(i) = find(rest, b'?') {
        url.raw_query = rest[i + 1..].to_vec();
        rest = &rest[..i];
    }
    if !rest.starts_with(b"/") {
        if !url.scheme.is_empty() {
            // A rootless path is opaque (RFC 3986).
            url.opaque = rest.to_vec();
            return Ok(url);
        }
        let segment = find(rest, b'/').map_or(rest, |i| &rest[..i]);
        if segment.contains(&b':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with(b"///")) && rest.starts_with(b"//") {
        let mut authority = &rest[2..];
        rest = b"";
        if let Some(i) = find(authority, b'/') {
            rest = &authority[i..];
            authority = &authority[..i];
        }
        let (user, host) = parse_authority(authority)?;
        url.user = user;
        url.host = host;
    }
    url.path = unescape(rest, Mode::Path)?;
    Ok(url)
}

/// `parseAuthority`.
fn parse_authority(authority: &[u8]) -> Result<(Option<User>, Vec<u8>), String> {
    let at = rfind(authority, b'@');
    let host = parse_host(at.map_or(authority, |i| &authority[i + 1..]))?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..i];
    let valid = std::str::from_utf8(userinfo).is_ok_and(|s| {
        s.chars().all(|r| {
            r.is_ascii_alphanumeric()
                || matches!(
                    r,
                    '-' | '.'
                        | '_'
                        | ':'
                        | '~'
                        | '!'
                        | '$'
                        | '&'
                        | '\''
                        | '('
                        | ')'
                        | '*'
                        | '+'
                        | ','
                        | ';'
                        | '='
                        | '%'
                        | '@'
                )
        })
    });
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    let user = match find(userinfo, b':') {
        None => User {
            name: unescape(userinfo, Mode::UserPassword)?,
            password: None,
        },
        Some(c) => User {
            name: unescape(&userinfo[..c], Mode::UserPassword)?,
            password: Some(unescape(&userinfo[c + 1..], Mode::UserPassword)?),
        },
    };
    Ok((Some(user), host))
}

/// `validOptionalPort`: empty, or `:` and digits.
fn valid_optional_port(port: &[u8]) -> bool {
    port.is_empty() || (port[0] == b':' && port[1..].iter().all(u8::is_ascii_digit))
}

/// `parseHost`: `host[:port]`, an IP literal in brackets with a zone.
fn parse_host(host: &[u8]) -> Result<Vec<u8>, String> {
    let bad_port = |p: &[u8]| format!("invalid port {} after host", quote(p));
    if host.starts_with(b"[") {
        let Some(i) = rfind(host, b']') else {
            return Err("missing ']' in host".into());
        };
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port) {
            return Err(bad_port(colon_port));
        }
        if let Some(zone) = host[..i].windows(3).position(|w| w == b"%25") {
            let mut out = unescape(&host[..zone], Mode::Host)?;
            out.extend(unescape(&host[zone..i], Mode::Zone)?);
            out.extend(unescape(&host[i..], Mode::Host)?);
            return Ok(out);
        }
    } else if let Some(i) = rfind(host, b':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port) {
            return Err(bad_port(colon_port));
        }
    }
    unescape(host, Mode::Host)
}

/// `URL.Hostname`: the host less a valid port, and less the brackets of
/// an IP literal.
fn hostname(host: &[u8]) -> &[u8] {
    let mut h = host;
    if let Some(c) = rfind(h, b':') {
        if valid_optional_port(&h[c..]) {
            h = &h[..c];
        }
    }
    if h.len() >= 2 && h.starts_with(b"[") && h.ends_with(b"]") {
        h = &h[1..h.len() - 1];
    }
    h
}

/// Bytes as a template string; a part decoded to bytes that are not UTF-8
/// is refused (Go's string would hold them as they are).
fn text(b: Vec<u8>) -> Result<V, String> {
    String::from_utf8(b).map(V::Str).map_err(|_| {
        "a URL whose decoded parts are not UTF-8 is not supported by gitops-lint, so this template cannot be evaluated offline".to_string()
    })
}

/// `urlParse`: the URL's parts as a dict; what does not parse is Sprig's
/// panic, which text/template reports as the call's error.
pub(super) fn f_url_parse(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let V::Str(raw) = &a[0] else {
        return Err(type_err("string", &a[0]));
    };
    let url = parse(raw.as_bytes()).map_err(|e| format!("unable to parse url: {e}"))?;
    let host = url.host.clone();
    let mut m = BTreeMap::new();
    m.insert("scheme".to_string(), text(url.scheme)?);
    m.insert("hostname".to_string(), text(hostname(&host).to_vec())?);
    m.insert("host".to_string(), text(url.host)?);
    m.insert("path".to_string(), text(url.path)?);
    m.insert("query".to_string(), text(url.raw_query)?);
    m.insert("opaque".to_string(), text(url.opaque)?);
    m.insert("fragment".to_string(), text(url.fragment)?);
    m.insert(
        "userinfo".to_string(),
        text(url.user.map(|u| u.string()).unwrap_or_default())?,
    );
    Ok(V::Map(m.into()))
}

/// Sprig's `dictGetOrEmpty`: a string, "" when absent, else its panic.
fn dict_string(d: &BTreeMap<String, V>, key: &str) -> Result<String, String> {
    let kind = match d.get(key) {
        None | Some(V::Missing) => return Ok(String::new()),
        Some(V::Str(s)) => return Ok(s.clone()),
        Some(V::Nil) => {
            return Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        Some(V::Bool(_)) => "bool",
        Some(V::Float(_)) => "float64",
        Some(V::List(_)) => "slice",
        Some(V::Map(_)) => "map",
        Some(V::Int(_)) => "int",
        Some(V::Int64(_)) => "int64",
        Some(V::Host(_)) => {
            return Err(format!("urlJoin of a {key} that is no string is not supported by gitops-lint, so this template cannot be evaluated offline"))
        }
    };
    Err(format!(
        "unable to parse {key} key, must be of type string, but {kind} found"
    ))
}

/// `urlJoin`: `url.URL{...}.String()` of the dict's parts.
pub(super) fn f_url_join(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let V::Map(m) = &a[0] else {
        return Err(type_err("map[string]interface {}", &a[0]));
    };
    let d = m.entries();
    let scheme = dict_string(&d, "scheme")?;
    let host = dict_string(&d, "host")?;
    let path = dict_string(&d, "path")?;
    let query = dict_string(&d, "query")?;
    let opaque = dict_string(&d, "opaque")?;
    let fragment = dict_string(&d, "fragment")?;
    let userinfo = dict_string(&d, "userinfo")?;
    let user = if userinfo.is_empty() {
        None
    } else {
        parse(format!("proto://{userinfo}@host").as_bytes())
            .map_err(|e| format!("unable to parse userinfo in dict: {e}"))?
            .user
    };
    // `URL.String`
    let mut out: Vec<u8> = Vec::new();
    if !scheme.is_empty() {
        out.extend(scheme.as_bytes());
        out.push(b':');
    }
    if opaque.is_empty() {
        if !scheme.is_empty() || !host.is_empty() || user.is_some() {
            if !host.is_empty() || !path.is_empty() || user.is_some() {
                out.extend(b"//");
            }
            if let Some(u) = &user {
                out.extend(u.string());
                out.push(b'@');
            }
            out.extend(escape(host.as_bytes(), Mode::Host));
        }
        let escaped = if path == "*" {
            b"*".to_vec()
        } else {
            escape(path.as_bytes(), Mode::Path)
        };
        if !escaped.is_empty() && escaped[0] != b'/' && !host.is_empty() {
            out.push(b'/');
        }
        if out.is_empty() {
            // A first segment with a colon would read as a scheme.
            let segment = find(&escaped, b'/').map_or(&escaped[..], |i| &escaped[..i]);
            if segment.contains(&b':') {
                out.extend(b"./");
            }
        }
        out.extend(escaped);
    } else {
        out.extend(opaque.as_bytes());
    }
    if !query.is_empty() {
        out.push(b'?');
        out.extend(query.as_bytes());
    }
    if !fragment.is_empty() {
        out.push(b'#');
        out.extend(escape(fragment.as_bytes(), Mode::Fragment));
    }
    text(out)
}

#[cfg(test)]
mod tests {
    use super::{f_url_join, f_url_parse, V};

    fn parsed(url: &str) -> Result<String, String> {
        f_url_parse("urlParse", &[V::Str(url.into())], 0).map(|m| {
            let V::Map(m) = m else { panic!("a map") };
            let e = m.entries();
            let get = |k: &str| match e.get(k) {
                Some(V::Str(s)) => s.clone(),
                other => panic!("{k}: {other:?}"),
            };
            [
                "scheme", "userinfo", "host", "hostname", "path", "query", "opaque", "fragment",
            ]
            .map(get)
            .join("|")
        })
    }

    #[test]
    fn urls_parse_as_go_parses_them() {
        // helm v3.17.1: `urlParse URL | toJson`, fields in the order
        // scheme|userinfo|host|hostname|path|query|opaque|fragment.
        for (url, want) in [
            (
                "https://user:p%40ss@example.com:8443/a%20b/c?x=1&y=2#frag%20x",
                "https|user:p%40ss|example.com:8443|example.com|/a b/c|x=1&y=2||frag x",
            ),
            (
                "ldap://ldap.example.com:389",
                "ldap||ldap.example.com:389|ldap.example.com||||",
            ),
            (
                "ldaps://[fe80::1%25en0]:636/dc=x",
                "ldaps||[fe80::1%en0]:636|fe80::1%en0|/dc=x|||",
            ),
            (
                "mailto:someone@example.com",
                "mailto||||||someone@example.com|",
            ),
            ("//host/path", "||host|host|/path|||"),
            ("/just/a/path?q", "||||/just/a/path|q||"),
            ("*", "||||*|||"),
            ("HTTP://Example.COM", "http||Example.COM|Example.COM||||"),
            ("http://[::1]:/", "http||[::1]:|::1|/|||"),
            ("http://us%3Aer:@host", "http|us%3Aer:|host|host||||"),
            ("http://%41b@host", "http|Ab|host|host||||"),
            ("http://host/%2Fslash", "http||host|host|//slash|||"),
            ("http://host#a#b", "http||host|host||||a#b"),
            ("http://host:80:80/", "http||host:80:80|host:80|/|||"),
            (
                "redis://:secret@redis:6379/0",
                "redis|:secret|redis:6379|redis|/0|||",
            ),
            ("http://host/?a=%zz", "http||host|host|/|a=%zz||"),
            ("http://h/#%41!()*", "http||h|h|/|||A!()*"),
            ("", "|||||||"),
        ] {
            assert_eq!(parsed(url), Ok(want.to_string()), "{url}");
        }
    }

    #[test]
    fn bad_urls_fail_as_sprigs_panic_reads() {
        for (url, want) in [
            (
                "http://host:port/",
                r#"parse "http://host:port/": invalid port ":port" after host"#,
            ),
            (":foo", r#"parse ":foo": missing protocol scheme"#),
            (
                "http://[::1/",
                r#"parse "http://[::1/": missing ']' in host"#,
            ),
            (
                "http://h/%zz",
                r#"parse "http://h/%zz": invalid URL escape "%zz""#,
            ),
            (
                "http://h/#%",
                r#"parse "http://h/#%": invalid URL escape "%""#,
            ),
            (
                "http://us er@h",
                r#"parse "http://us er@h": net/url: invalid userinfo"#,
            ),
            (
                "http://h%41/",
                r#"parse "http://h%41/": invalid URL escape "%41""#,
            ),
            (
                "http://a b.com/",
                r#"parse "http://a b.com/": invalid character " " in host name"#,
            ),
            (
                "x\tz",
                r#"parse "x\tz": net/url: invalid control character in URL"#,
            ),
            (
                "1http://h",
                r#"parse "1http://h": first path segment in URL cannot contain colon"#,
            ),
        ] {
            assert_eq!(
                parsed(url),
                Err(format!("unable to parse url: {want}")),
                "{url}"
            );
        }
    }

    fn joined(pairs: &[(&str, V)]) -> Result<V, String> {
        let m: std::collections::BTreeMap<String, V> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect();
        f_url_join("urlJoin", &[V::Map(m.into())], 0)
    }

    #[test]
    fn urls_join_as_go_prints_them() {
        // helm v3.17.1: `urlJoin (dict ...)`
        let s = |x: &str| V::Str(x.into());
        for (pairs, want) in [
            (
                vec![
                    ("scheme", s("https")),
                    ("host", s("example.com:443")),
                    ("path", s("/a b/c?")),
                    ("query", s("x=1")),
                    ("fragment", s("f g#")),
                ],
                "https://example.com:443/a%20b/c%3F?x=1#f%20g%23",
            ),
            (
                vec![("scheme", s("http")), ("host", s("h")), ("path", s("rel"))],
                "http://h/rel",
            ),
            (vec![("path", s("a:b/c"))], "./a:b/c"),
            (
                vec![
                    ("scheme", s("mailto")),
                    ("opaque", s("x@y.com")),
                    ("query", s("s=1")),
                ],
                "mailto:x@y.com?s=1",
            ),
            (
                vec![("userinfo", s("u:p@ss")), ("host", s("h"))],
                "//u:p%40ss@h",
            ),
            // "proto://u/p@host" has no userinfo
            (vec![("userinfo", s("u/p")), ("host", s("h"))], "//h"),
            (
                vec![("host", s("\u{fc}n\u{ef}.com")), ("path", s("/p\u{e4}"))],
                "//%C3%BCn%C3%AF.com/p%C3%A4",
            ),
            (vec![("scheme", s("http"))], "http:"),
            (vec![], ""),
            (vec![("path", s("*"))], "*"),
            (
                vec![
                    ("scheme", s("http")),
                    ("host", s("h")),
                    ("fragment", s("a!b(c)*d'e")),
                ],
                "http://h#a!b(c)*d%27e",
            ),
        ] {
            assert_eq!(joined(&pairs), Ok(s(want)), "{pairs:?}");
        }
        for (pairs, want) in [
            (
                vec![("scheme", V::Float(1.5))],
                "unable to parse scheme key, must be of type string, but float64 found",
            ),
            (
                vec![("host", V::Bool(true))],
                "unable to parse host key, must be of type string, but bool found",
            ),
            (
                vec![("path", V::List(vec![]))],
                "unable to parse path key, must be of type string, but slice found",
            ),
            (
                vec![("scheme", V::Nil)],
                "runtime error: invalid memory address or nil pointer dereference",
            ),
            (
                vec![("userinfo", s("a b"))],
                r#"unable to parse userinfo in dict: parse "proto://a b@host": net/url: invalid userinfo"#,
            ),
        ] {
            assert_eq!(joined(&pairs), Err(want.to_string()), "{pairs:?}");
        }
    }
}
