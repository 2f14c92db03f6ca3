//! The token scanners of go-yaml v2's `scannerc.go` (`yaml_parser_scan_*`):
//! directives, anchors, tags and the four kinds of scalar.

use super::*;

impl Scanner<'_> {
    pub(super) fn scan_to_next_token(&mut self) {
        loop {
            if self.mark.column == 0
                && self.cur() == 0xEF
                && self.at(1) == 0xBB
                && self.at(2) == 0xBF
            {
                self.skip();
            }
            while self.cur() == b' '
                || ((self.flow_level > 0 || !self.simple_key_allowed) && self.cur() == b'\t')
            {
                self.skip();
            }
            if self.cur() == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                }
            }
            if self.is_break(0) {
                self.skip_line();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                break;
            }
        }
    }

    fn skip_blanks_and_comment(&mut self) {
        while self.is_blank(0) {
            self.skip();
        }
        if self.cur() == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
    }

    pub(super) fn scan_directive(&mut self) -> Res<Token> {
        const CX: &str = "while scanning a directive";
        let start = self.mark;
        self.skip();
        let mut name = Vec::new();
        while self.is_alpha(0) {
            self.read(&mut name);
        }
        if name.is_empty() {
            return Err(self.error(start, "could not find expected directive name"));
        }
        if !self.is_blankz(0) {
            return Err(self.error(start, "found unexpected non-alphabetical character"));
        }
        let _ = CX;
        let kind = if name == b"YAML" {
            while self.is_blank(0) {
                self.skip();
            }
            let major = self.scan_version_number(start)?;
            if self.cur() != b'.' {
                return Err(self.error(start, "did not find expected digit or '.' character"));
            }
            self.skip();
            let minor = self.scan_version_number(start)?;
            Tok::Version(major, minor)
        } else if name == b"TAG" {
            while self.is_blank(0) {
                self.skip();
            }
            let handle = self.scan_tag_handle(true, start)?;
            if !self.is_blank(0) {
                return Err(self.error(start, "did not find expected whitespace"));
            }
            while self.is_blank(0) {
                self.skip();
            }
            let prefix = self.scan_tag_uri(true, b"", start)?;
            if !self.is_blankz(0) {
                return Err(self.error(start, "did not find expected whitespace or line break"));
            }
            Tok::TagDirective(lossy(handle), lossy(prefix))
        } else {
            return Err(self.error(start, "found unknown directive name"));
        };
        let end = self.mark;
        self.skip_blanks_and_comment();
        if !self.is_breakz(0) {
            return Err(self.error(start, "did not find expected comment or line break"));
        }
        if self.is_break(0) {
            self.skip_line();
        }
        Ok(Token { kind, start, end })
    }

    fn scan_version_number(&mut self, start: Mark) -> Res<u8> {
        let mut value: u8 = 0;
        let mut length = 0;
        while self.cur().is_ascii_digit() {
            length += 1;
            if length > 2 {
                return Err(self.error(start, "found extremely long version number"));
            }
            value = value * 10 + (self.cur() - b'0');
            self.skip();
        }
        if length == 0 {
            return Err(self.error(start, "did not find expected version number"));
        }
        Ok(value)
    }

    pub(super) fn scan_anchor(&mut self, alias: bool) -> Res<Token> {
        let start = self.mark;
        self.skip();
        let mut s = Vec::new();
        while self.is_alpha(0) {
            self.read(&mut s);
        }
        let end = self.mark;
        let c = self.cur();
        if s.is_empty()
            || !(self.is_blankz(0)
                || matches!(c, b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'))
        {
            return Err(self.error(
                start,
                "did not find expected alphabetic or numeric character",
            ));
        }
        let name = lossy(s);
        let kind = if alias {
            Tok::Alias(name)
        } else {
            Tok::Anchor(name)
        };
        Ok(Token { kind, start, end })
    }

    pub(super) fn scan_tag(&mut self) -> Res<Token> {
        let start = self.mark;
        let (handle, suffix);
        if self.at(1) == b'<' {
            self.skip();
            self.skip();
            suffix = self.scan_tag_uri(false, b"", start)?;
            if self.cur() != b'>' {
                return Err(self.error(start, "did not find the expected '>'"));
            }
            self.skip();
            handle = Vec::new();
        } else {
            let h = self.scan_tag_handle(false, start)?;
            if h.len() > 1 && h[0] == b'!' && h[h.len() - 1] == b'!' {
                suffix = self.scan_tag_uri(false, b"", start)?;
                handle = h;
            } else {
                let s = self.scan_tag_uri(false, &h, start)?;
                if s.is_empty() {
                    handle = Vec::new();
                    suffix = b"!".to_vec();
                } else {
                    handle = b"!".to_vec();
                    suffix = s;
                }
            }
        }
        if !self.is_blankz(0) {
            return Err(self.error(start, "did not find expected whitespace or line break"));
        }
        let end = self.mark;
        Ok(Token {
            kind: Tok::Tag(lossy(handle), lossy(suffix)),
            start,
            end,
        })
    }

    fn scan_tag_handle(&mut self, directive: bool, start: Mark) -> Res<Vec<u8>> {
        if self.cur() != b'!' {
            return Err(self.error(start, "did not find expected '!'"));
        }
        let mut s = Vec::new();
        self.read(&mut s);
        while self.is_alpha(0) {
            self.read(&mut s);
        }
        if self.cur() == b'!' {
            self.read(&mut s);
        } else if directive && s != b"!" {
            return Err(self.error(start, "did not find expected '!'"));
        }
        Ok(s)
    }

    /// `yaml_parser_scan_tag_uri`; `head` is a handle read before (its
    /// `!` dropped) that is part of the tag.
    fn scan_tag_uri(&mut self, directive: bool, head: &[u8], start: Mark) -> Res<Vec<u8>> {
        let mut has_tag = !head.is_empty();
        let mut s = Vec::new();
        if head.len() > 1 {
            s.extend_from_slice(&head[1..]);
        }
        loop {
            let c = self.cur();
            let uri_char = self.is_alpha(0)
                || matches!(
                    c,
                    b';' | b'/'
                        | b'?'
                        | b':'
                        | b'@'
                        | b'&'
                        | b'='
                        | b'+'
                        | b'$'
                        | b','
                        | b'.'
                        | b'!'
                        | b'~'
                        | b'*'
                        | b'\''
                        | b'('
                        | b')'
                        | b'['
                        | b']'
                        | b'%'
                );
            if !uri_char {
                break;
            }
            if c == b'%' {
                self.scan_uri_escapes(directive, start, &mut s)?;
            } else {
                self.read(&mut s);
            }
            has_tag = true;
        }
        if !has_tag {
            return Err(self.error(start, "did not find expected tag URI"));
        }
        Ok(s)
    }

    fn scan_uri_escapes(&mut self, _directive: bool, start: Mark, s: &mut Vec<u8>) -> Res<()> {
        let mut w = usize::MAX;
        while w > 0 {
            if !(self.cur() == b'%' && self.is_hex(1) && self.is_hex(2)) {
                return Err(self.error(start, "did not find URI escaped octet"));
            }
            let octet = u8::try_from((self.as_hex(1) << 4) + self.as_hex(2)).unwrap_or(0);
            if w == usize::MAX {
                w = width(octet);
                if w == 0 {
                    return Err(self.error(start, "found an incorrect leading UTF-8 octet"));
                }
            } else if octet & 0xC0 != 0x80 {
                return Err(self.error(start, "found an incorrect trailing UTF-8 octet"));
            }
            s.push(octet);
            self.skip();
            self.skip();
            self.skip();
            w -= 1;
        }
        Ok(())
    }

    pub(super) fn scan_block_scalar(&mut self, literal: bool) -> Res<Token> {
        const CX: &str = "found an indentation indicator equal to 0";
        let start = self.mark;
        self.skip();
        let mut chomping = 0i8;
        let mut increment = 0isize;
        if matches!(self.cur(), b'+' | b'-') {
            chomping = if self.cur() == b'+' { 1 } else { -1 };
            self.skip();
            if self.cur().is_ascii_digit() {
                if self.cur() == b'0' {
                    return Err(self.error(start, CX));
                }
                increment = isize::from(self.cur() - b'0');
                self.skip();
            }
        } else if self.cur().is_ascii_digit() {
            if self.cur() == b'0' {
                return Err(self.error(start, CX));
            }
            increment = isize::from(self.cur() - b'0');
            self.skip();
            if matches!(self.cur(), b'+' | b'-') {
                chomping = if self.cur() == b'+' { 1 } else { -1 };
                self.skip();
            }
        }
        self.skip_blanks_and_comment();
        if !self.is_breakz(0) {
            return Err(self.error_in(
                "while scanning a block scalar",
                start,
                "did not find expected comment or line break",
            ));
        }
        if self.is_break(0) {
            self.skip_line();
        }
        let mut end = self.mark;
        let mut indent: isize = 0;
        if increment > 0 {
            indent = if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            };
        }
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        self.block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        let mut leading_blank = false;
        while self.column() == indent && !self.is_z(0) {
            let trailing_blank = self.is_blank(0);
            if !literal
                && !leading_blank
                && !trailing_blank
                && leading_break.first() == Some(&b'\n')
            {
                if trailing_breaks.is_empty() {
                    s.push(b' ');
                }
            } else {
                s.extend_from_slice(&leading_break);
            }
            leading_break.clear();
            s.append(&mut trailing_breaks);
            leading_blank = self.is_blank(0);
            while !self.is_breakz(0) {
                self.read(&mut s);
            }
            self.read_line(&mut leading_break);
            self.block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        }
        if chomping != -1 {
            s.extend_from_slice(&leading_break);
        }
        if chomping == 1 {
            s.extend_from_slice(&trailing_breaks);
        }
        let style = if literal {
            Style::Literal
        } else {
            Style::Folded
        };
        Ok(Token {
            kind: Tok::Scalar(lossy(s), style),
            start,
            end,
        })
    }

    fn block_scalar_breaks(
        &mut self,
        indent: &mut isize,
        breaks: &mut Vec<u8>,
        start: Mark,
        end: &mut Mark,
    ) -> Res<()> {
        *end = self.mark;
        let mut max_indent: isize = 0;
        loop {
            while (*indent == 0 || self.column() < *indent) && self.cur() == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.column());
            if (*indent == 0 || self.column() < *indent) && self.cur() == b'\t' {
                return Err(self.error(
                    start,
                    "found a tab character where an indentation space is expected",
                ));
            }
            if !self.is_break(0) {
                break;
            }
            self.read_line(breaks);
            *end = self.mark;
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        Ok(())
    }

    pub(super) fn scan_flow_scalar(&mut self, single: bool) -> Res<Token> {
        let start = self.mark;
        self.skip();
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        let mut whitespaces = Vec::new();
        loop {
            if self.mark.column == 0
                && ((self.cur() == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                    || (self.cur() == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
                && self.is_blankz(3)
            {
                return Err(self.error(start, "found unexpected document indicator"));
            }
            if self.is_z(0) {
                return Err(self.error(start, "found unexpected end of stream"));
            }
            let mut leading_blanks = false;
            while !self.is_blankz(0) {
                let c = self.cur();
                if single && c == b'\'' && self.at(1) == b'\'' {
                    s.push(b'\'');
                    self.skip();
                    self.skip();
                } else if (single && c == b'\'') || (!single && c == b'"') {
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    self.skip();
                    self.skip_line();
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    self.scan_escape(start, &mut s)?;
                } else {
                    self.read(&mut s);
                }
            }
            let quote = if single { b'\'' } else { b'"' };
            if self.cur() == quote {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else if leading_blanks {
                    self.read_line(&mut trailing_breaks);
                } else {
                    whitespaces.clear();
                    self.read_line(&mut leading_break);
                    leading_blanks = true;
                }
            }
            if leading_blanks {
                if leading_break.first() == Some(&b'\n') {
                    if trailing_breaks.is_empty() {
                        s.push(b' ');
                    } else {
                        s.extend_from_slice(&trailing_breaks);
                    }
                } else {
                    s.extend_from_slice(&leading_break);
                    s.extend_from_slice(&trailing_breaks);
                }
                trailing_breaks.clear();
                leading_break.clear();
            } else {
                s.append(&mut whitespaces);
            }
        }
        self.skip();
        let end = self.mark;
        let style = if single { Style::Single } else { Style::Double };
        Ok(Token {
            kind: Tok::Scalar(lossy(s), style),
            start,
            end,
        })
    }

    /// One escape in a double-quoted scalar, the `\` at the cursor.
    fn scan_escape(&mut self, start: Mark, s: &mut Vec<u8>) -> Res<()> {
        let mut code_length = 0;
        let simple: &[u8] = match self.at(1) {
            b'0' => b"\0",
            b'a' => b"\x07",
            b'b' => b"\x08",
            b't' | b'\t' => b"\t",
            b'n' => b"\n",
            b'v' => b"\x0B",
            b'f' => b"\x0C",
            b'r' => b"\r",
            b'e' => b"\x1B",
            b' ' => b" ",
            b'"' => b"\"",
            b'\'' => b"'",
            b'\\' => b"\\",
            b'N' => "\u{85}".as_bytes(),
            b'_' => "\u{A0}".as_bytes(),
            b'L' => "\u{2028}".as_bytes(),
            b'P' => "\u{2029}".as_bytes(),
            b'x' => {
                code_length = 2;
                b""
            }
            b'u' => {
                code_length = 4;
                b""
            }
            b'U' => {
                code_length = 8;
                b""
            }
            // go-yaml v2 rejects `\/`, which YAML 1.2 allows.
            _ => return Err(self.error(start, "found unknown escape character")),
        };
        s.extend_from_slice(simple);
        self.skip();
        self.skip();
        if code_length > 0 {
            let mut value: u32 = 0;
            for k in 0..code_length {
                if !self.is_hex(k) {
                    return Err(self.error(start, "did not find expected hexdecimal number"));
                }
                value = (value << 4) + self.as_hex(k);
            }
            let Some(c) = char::from_u32(value) else {
                return Err(self.error(start, "found invalid Unicode character escape code"));
            };
            let mut buf = [0u8; 4];
            s.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            for _ in 0..code_length {
                self.skip();
            }
        }
        Ok(())
    }

    pub(super) fn scan_plain_scalar(&mut self) -> Res<Token> {
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        let mut whitespaces = Vec::new();
        let mut leading_blanks = false;
        let indent = self.indent + 1;
        let start = self.mark;
        let mut end = self.mark;
        loop {
            if self.mark.column == 0
                && ((self.cur() == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                    || (self.cur() == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
                && self.is_blankz(3)
            {
                break;
            }
            if self.cur() == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.cur();
                if (c == b':' && self.is_blankz(1))
                    || (self.flow_level > 0 && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                if leading_blanks || !whitespaces.is_empty() {
                    if leading_blanks {
                        if leading_break.first() == Some(&b'\n') {
                            if trailing_breaks.is_empty() {
                                s.push(b' ');
                            } else {
                                s.extend_from_slice(&trailing_breaks);
                            }
                        } else {
                            s.extend_from_slice(&leading_break);
                            s.extend_from_slice(&trailing_breaks);
                        }
                        trailing_breaks.clear();
                        leading_break.clear();
                        leading_blanks = false;
                    } else {
                        s.append(&mut whitespaces);
                    }
                }
                self.read(&mut s);
                end = self.mark;
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks && self.column() < indent && self.cur() == b'\t' {
                        return Err(
                            self.error(start, "found a tab character that violates indentation")
                        );
                    }
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else if leading_blanks {
                    self.read_line(&mut trailing_breaks);
                } else {
                    whitespaces.clear();
                    self.read_line(&mut leading_break);
                    leading_blanks = true;
                }
            }
            if self.flow_level == 0 && self.column() < indent {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(Token {
            kind: Tok::Scalar(lossy(s), Style::Plain),
            start,
            end,
        })
    }
}
