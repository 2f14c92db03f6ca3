//! Go's `fmt.Sprintf` for the verbs templates use: `%v %s %d %q %t %f %F %e
//! %g %x %X %c %%`, with flags, width and precision. Any other verb fails
//! rather than printing something Go would not.

use std::fmt::Write as _;

use super::value::{format_float_g, V};
use crate::go::quote::go_quote;

#[derive(Default)]
#[allow(clippy::struct_excessive_bools)] // Go's fmt flags, one bool each
struct Spec {
    minus: bool,
    plus: bool,
    zero: bool,
    space: bool,
    sharp: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// Formats `args` with Go's `fmt.Sprintf(format, args...)`.
///
/// # Errors
/// A verb this implementation does not support.
pub(crate) fn sprintf(format: &str, args: &[V]) -> Result<String, String> {
    let mut out = String::new();
    let chars: Vec<char> = format.chars().collect();
    let mut i = 0;
    let mut argi = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let mut spec = Spec::default();
        while let Some(&f) = chars.get(i) {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '0' => spec.zero = true,
                ' ' => spec.space = true,
                '#' => spec.sharp = true,
                _ => break,
            }
            i += 1;
        }
        // Go's `parsenum`: a number that grows past 1e6 before its last
        // digit is "crazy long" and swallows the rest of the format, which
        // then ends in `%!(NOVERB)`; so no width reaches 10^7.
        let num = |i: &mut usize| -> Option<usize> {
            let mut n: usize = 0;
            let mut seen = false;
            while let Some(d) = chars.get(*i).and_then(|c| c.to_digit(10)) {
                if n > 1_000_000 {
                    *i = chars.len();
                    return None;
                }
                n = n * 10 + d as usize;
                seen = true;
                *i += 1;
            }
            seen.then_some(n)
        };
        spec.width = num(&mut i);
        if chars.get(i) == Some(&'.') {
            i += 1;
            spec.prec = Some(num(&mut i).unwrap_or(0));
        }
        let Some(&verb) = chars.get(i) else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += 1;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(argi) else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        argi += 1;
        let body = format_one(verb, &spec, arg)?;
        out.push_str(&pad(
            &body,
            &spec,
            matches!(arg, V::Int(_) | V::Int64(_) | V::Float(_))
                && !matches!(verb, 's' | 'q' | 'T'),
        ));
    }
    if argi < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[argi..]
            .iter()
            .map(|a| format!("{}={}", a.type_name(), a.go_string()))
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    Ok(out)
}

fn bad(verb: char, arg: &V) -> String {
    match arg {
        V::Missing | V::Nil => format!("%!{verb}(<nil>)"),
        other => format!("%!{verb}({}={})", other.type_name(), other.go_string()),
    }
}

fn format_one(verb: char, spec: &Spec, arg: &V) -> Result<String, String> {
    let sign = |neg: bool, body: String| -> String {
        if neg {
            format!("-{body}")
        } else if spec.plus {
            format!("+{body}")
        } else if spec.space {
            format!(" {body}")
        } else {
            body
        }
    };
    Ok(match (verb, arg) {
        ('v', V::Missing | V::Nil) => "<nil>".into(),
        ('v', V::Float(f)) => match spec.prec {
            Some(_) => return format_one('g', spec, arg),
            None => sign(f.is_sign_negative() && *f != 0.0, format_float_g(f.abs())),
        },
        // fmt's `%T`: the type's name, as a string (`<nil>` for nil); a
        // host object's Go type is refused below.
        ('T', other) if !matches!(other, V::Host(_)) => truncate(arg.type_name(), spec.prec),
        ('v' | 'd', V::Int(n) | V::Int64(n)) => sign(*n < 0, n.unsigned_abs().to_string()),
        ('v', other) => truncate(&other.go_string(), spec.prec),
        // A `[]byte` prints as text with `%s` and `%q`; what a struct or a
        // map of them prints with another verb is not modelled.
        ('s' | 'q', V::Host(h)) => match h.0.as_text() {
            Some(Ok(t)) if verb == 's' => truncate(&t, spec.prec),
            Some(Ok(t)) => go_quote(&t),
            Some(Err(e)) => return Err(e),
            None if verb == 's'
                && matches!(h.0.value(), V::List(l) if l.iter().all(|e| matches!(e, V::Str(_)))) =>
            {
                h.0.value().go_string()
            }
            None => {
                return Err(format!(
                    "printf `%{verb}` of a {} is not supported by gitops-lint",
                    h.0.type_name()
                ))
            }
        },
        (_, V::Host(h)) => {
            return Err(format!(
                "printf `%{verb}` of a {} is not supported by gitops-lint",
                h.0.type_name()
            ))
        }
        ('s', V::Str(s)) => truncate(s, spec.prec),
        ('s', V::List(_) | V::Map(_)) => arg.go_string(),
        ('q', V::Str(s)) => go_quote(s),
        ('t', V::Bool(b)) => b.to_string(),
        ('x' | 'X', V::Int(n) | V::Int64(n)) => {
            let h = format!("{:x}", n.unsigned_abs());
            let h = if spec.sharp { format!("0x{h}") } else { h };
            let h = if verb == 'X' { h.to_uppercase() } else { h };
            sign(*n < 0, h)
        }
        ('x' | 'X', V::Str(s)) => {
            let h: String = s.bytes().fold(String::new(), |mut acc, b| {
                let _ = write!(acc, "{b:02x}");
                acc
            });
            if verb == 'X' {
                h.to_uppercase()
            } else {
                h
            }
        }
        ('c', V::Int(n) | V::Int64(n)) => u32::try_from(*n)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or('\u{fffd}')
            .to_string(),
        ('f' | 'F', V::Float(f)) => sign(
            f.is_sign_negative() && *f != 0.0,
            format!("{:.*}", spec.prec.unwrap_or(6), f.abs()),
        ),
        ('e' | 'E', V::Float(f)) => {
            let s = go_exp(f.abs(), spec.prec.unwrap_or(6));
            sign(
                f.is_sign_negative() && *f != 0.0,
                if verb == 'E' { s.to_uppercase() } else { s },
            )
        }
        ('g', V::Float(f)) => {
            if spec.prec.is_some() {
                return Err("printf `%g` with a precision is not supported by gitops-lint".into());
            }
            sign(f.is_sign_negative() && *f != 0.0, format_float_g(f.abs()))
        }
        ('s' | 'q' | 't' | 'd' | 'x' | 'X' | 'c' | 'f' | 'F' | 'e' | 'E' | 'g', other) => {
            bad(verb, other)
        }
        (v, _) => {
            return Err(format!(
                "printf verb `%{v}` is not supported by gitops-lint"
            ))
        }
    })
}

fn truncate(s: &str, prec: Option<usize>) -> String {
    match prec {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    }
}

fn go_exp(f: f64, prec: usize) -> String {
    let s = format!("{f:.prec$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn pad(body: &str, spec: &Spec, numeric: bool) -> String {
    let Some(w) = spec.width else {
        return body.to_string();
    };
    let len = body.chars().count();
    if len >= w {
        return body.to_string();
    }
    let fill = w - len;
    if spec.minus {
        format!("{body}{}", " ".repeat(fill))
    } else if spec.zero && numeric {
        let (sign, digits) = match body.chars().next() {
            Some(c @ ('-' | '+' | ' ')) => (c.to_string(), &body[1..]),
            _ => (String::new(), body),
        };
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_verbs_match_go() {
        let r = sprintf(
            "%s-%d-%05d-%v-%q-%.2f-%x",
            &[
                V::Str("a".into()),
                V::Int(7),
                V::Int(42),
                V::Float(3.0),
                V::Str("q".into()),
                V::Float(1.5),
                V::Int(255),
            ],
        )
        .expect("formats");
        assert_eq!(r, "a-7-00042-3-\"q\"-1.50-ff");
    }

    #[test]
    fn wrong_types_and_missing_args_print_go_markers() {
        assert_eq!(
            sprintf("%d", &[V::Float(3.0)]).expect("formats"),
            "%!d(float64=3)"
        );
        assert_eq!(
            sprintf("%s %s", &[V::Str("a".into())]).expect("formats"),
            "a %!s(MISSING)"
        );
        assert!(sprintf("%p", &[V::Int(1)]).is_err());
    }
}
