//! Go's `strconv.Quote`, the one quoting of every caller: Sprig's `quote`
//! and `squote`'s neighbours, `printf "%q"`, `%#v`, and the error messages
//! that quote a template name or a version (`strconv/quote.go`
//! `appendQuotedWith` and `appendEscapedRune`, with `ASCIIonly` and
//! `graphicOnly` false).
//!
//! A rune is kept as it is when `strconv.IsPrint` holds (a letter, mark,
//! number, punctuation or symbol, or the ASCII space); otherwise it is
//! escaped: `\a \b \f \n \r \t \v`, `\xHH` below U+0020 and for DEL,
//! `\uHHHH` or `\UHHHHHHHH` above. Strings here are UTF-8, so the `\xHH`
//! of an invalid byte never arises (the template parser refuses such
//! escapes). The categories come from `unicode-general-category`
//! (Unicode 16.0; helm v3.17.1's Go 1.23 has 15.0: a code point first
//! assigned in 16.0 is printed where helm escapes it).

use std::fmt::Write as _;

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// `strconv.IsPrint`.
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !matches!(
        get_general_category(c),
        G::Control
            | G::Format
            | G::Surrogate
            | G::PrivateUse
            | G::Unassigned
            | G::SpaceSeparator
            | G::LineSeparator
            | G::ParagraphSeparator
    )
}

/// Go's `strconv.Quote(s)`.
#[must_use]
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if is_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if u32::from(c) < 0x1_0000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::go_quote;

    #[test]
    fn quotes_as_go_strconv_quote() {
        // helm v3.17.1: `{{ printf "%q" "a\x01\x7f\u00ad\u2028é\t" }}` and
        // `quote` of the same string print `"a\x01\x7f\u00ad\u2028é\t"`.
        assert_eq!(
            go_quote("a\u{1}\u{7f}\u{ad}\u{2028}é\t"),
            r#""a\x01\x7f\u00ad\u2028é\t""#
        );
        assert_eq!(go_quote("\u{7}\u{8}\u{c}\u{b}\r\n"), r#""\a\b\f\v\r\n""#);
        assert_eq!(go_quote("\u{a0}x\u{3000}"), r#""\u00a0x\u3000""#);
        assert_eq!(go_quote("\u{e000}\u{f0000}"), r#""\ue000\U000f0000""#);
        assert_eq!(go_quote("say \"hi\" \\ 😀 ü"), r#""say \"hi\" \\ 😀 ü""#);
        assert_eq!(go_quote("\u{85}\u{9f}"), r#""\u0085\u009f""#);
    }
}
