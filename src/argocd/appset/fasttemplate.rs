//! Argo CD's default templating: `valyala/fasttemplate` with `{{` `}}`
//! (AC `applicationset/utils/utils.go` `Replace`). A tag is replaced only
//! when its trimmed name is a *string* parameter; anything else, including
//! a missing key, is written back literally as `{{tag}}`.

use serde_json::{Map, Value};

/// The longest string one substitution builds, as one Go template
/// execution's output is bounded: the ApplicationSet's whole budget (512
/// MiB) in one string would have its buffer doubled to 1 GiB on the way.
pub const MAX_OUTPUT: usize = 10 << 20;

/// Replaces `{{ key }}` tags in `tmpl`, refusing to build more than `room`
/// bytes, nor more than [`MAX_OUTPUT`] (a 1 MiB parameter named by 200,000
/// tags would be 200 GB); the size is checked before each piece is added.
///
/// # Errors
/// A `{{` with no closing `}}` on a line that also has `{{...}}` (fasttemplate
/// refuses to parse it), or a result longer than `room`.
pub fn replace(tmpl: &str, params: &Map<String, Value>, room: usize) -> Result<String, String> {
    // Argo CD skips strings that do not match `.*{{.*}}.*` (`.` stops at a newline).
    if !tmpl
        .lines()
        .any(|l| l.find("{{").is_some_and(|i| l[i + 2..].contains("}}")))
    {
        return Ok(tmpl.to_string());
    }
    let room = room.min(MAX_OUTPUT);
    let mut out = String::with_capacity(tmpl.len().min(room));
    let mut rest = tmpl;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            return Err(format!(
                "invalid template {:?}: cannot find end tag \"}}}}\"",
                gotemplate::bounded_text(tmpl, 1024)
            ));
        };
        let tag = &after[..close];
        let value = params.get(tag.trim());
        let grows = match value {
            Some(Value::String(v)) => v.len(),
            _ => tag.len() + 4,
        };
        if out.len().saturating_add(open).saturating_add(grows) > room {
            return Err(format!(
                "the rendered string would be longer than the {room} bytes one string or what is left to this ApplicationSet's templates may take {}", super::BEYOND_LIMITS
            ));
        }
        match value {
            Some(Value::String(s)) if !tag.trim().is_empty() => out.push_str(s),
            _ => {
                out.push_str("{{");
                out.push_str(tag);
                out.push_str("}}");
            }
        }
        rest = &after[close + 2..];
    }
    if out.len().saturating_add(rest.len()) > room {
        return Err(format!(
            "the rendered string would be longer than the {room} bytes one string or what is left to this ApplicationSet's templates may take {}", super::BEYOND_LIMITS
        ));
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, Value)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn documented_examples() {
        let p = params(&[
            ("cluster", Value::from("engineering-dev")),
            ("url", Value::from("https://1.2.3.4")),
            ("path.basename", Value::from("guestbook")),
            ("path[0]", Value::from("apps")),
        ]);
        assert_eq!(
            replace("{{cluster}}-guestbook", &p, usize::MAX).as_deref(),
            Ok("engineering-dev-guestbook")
        );
        assert_eq!(
            replace("{{ path.basename }}", &p, usize::MAX).as_deref(),
            Ok("guestbook")
        );
        assert_eq!(
            replace("{{path[0]}}/{{url}}", &p, usize::MAX).as_deref(),
            Ok("apps/https://1.2.3.4")
        );
    }

    #[test]
    fn missing_and_non_string_keys_stay_literal() {
        let p = params(&[("n", Value::from(3))]);
        assert_eq!(
            replace("{{missing}}-{{ n }}", &p, usize::MAX).as_deref(),
            Ok("{{missing}}-{{ n }}")
        );
        assert_eq!(replace("{{}}", &p, usize::MAX).as_deref(), Ok("{{}}"));
    }

    #[test]
    fn unclosed_tags() {
        let p = params(&[("a", Value::from("x"))]);
        assert!(replace("{{a}} {{b", &p, usize::MAX).is_err());
        // No complete tag on any line: returned unchanged, as Argo CD does.
        assert_eq!(replace("{{a\n}}", &p, usize::MAX).as_deref(), Ok("{{a\n}}"));
    }
}
