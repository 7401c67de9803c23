//! A small lossless JSON/JSONC reader: it keeps the byte span of every value so that edits
//! can replace exactly the bytes of one value and leave every other byte of the file alone.
//!
//! Accepted: strict JSON plus what JSONC adds (`//` and `/* */` comments, trailing commas),
//! and a leading byte-order mark. Duplicate keys are kept in order; readers that follow
//! `JSON.parse` take the last one.

use std::ops::Range;

use super::doc::DocError;

/// Deeper nesting than this is refused instead of risking the stack.
const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone)]
pub(crate) enum JVal {
    Obj(JObj),
    Arr(JArr),
    Str(JStr),
    /// A number, `true`, `false` or `null`.
    Other(Range<usize>),
}

#[derive(Debug, Clone)]
pub(crate) struct JObj {
    pub span: Range<usize>,
    pub members: Vec<JMember>,
}

#[derive(Debug, Clone)]
pub(crate) struct JMember {
    pub key: String,
    pub key_span: Range<usize>,
    pub value: JVal,
}

#[derive(Debug, Clone)]
pub(crate) struct JArr {
    pub span: Range<usize>,
    pub items: Vec<JVal>,
}

#[derive(Debug, Clone)]
pub(crate) struct JStr {
    pub span: Range<usize>,
    pub value: String,
}

impl JVal {
    pub fn span(&self) -> Range<usize> {
        match self {
            JVal::Obj(o) => o.span.clone(),
            JVal::Arr(a) => a.span.clone(),
            JVal::Str(s) => s.span.clone(),
            JVal::Other(r) => r.clone(),
        }
    }

    pub fn as_obj(&self) -> Option<&JObj> {
        match self {
            JVal::Obj(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&JStr> {
        match self {
            JVal::Str(s) => Some(s),
            _ => None,
        }
    }

    #[cfg(test)]
    pub fn as_arr(&self) -> Option<&JArr> {
        match self {
            JVal::Arr(a) => Some(a),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            JVal::Obj(_) => "an object",
            JVal::Arr(_) => "a list",
            JVal::Str(_) => "a string",
            JVal::Other(_) => "a number, boolean or null",
        }
    }
}

impl JObj {
    /// The last member named `key` (what `JSON.parse` keeps).
    pub fn member(&self, key: &str) -> Option<&JMember> {
        self.members.iter().rev().find(|m| m.key == key)
    }

    pub fn get(&self, key: &str) -> Option<&JVal> {
        self.member(key).map(|m| &m.value)
    }
}

/// Parses `text`. `Ok(None)` for a file that holds nothing but whitespace (and a BOM).
pub(crate) fn parse(text: &str) -> Result<Option<JVal>, DocError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    if text.starts_with('\u{feff}') {
        p.pos = 3;
    }
    p.skip_trivia()?;
    if p.pos >= p.bytes.len() {
        return Ok(None);
    }
    let root = p.value(0)?;
    p.skip_trivia()?;
    if p.pos < p.bytes.len() {
        return Err(p.error(p.pos, "unexpected text after the end of the document"));
    }
    Ok(Some(root))
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, at: usize, message: &str) -> DocError {
        DocError::at(self.text, at, message.to_owned())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_trivia(&mut self) -> Result<(), DocError> {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => {
                        while let Some(b) = self.peek() {
                            if b == b'\n' {
                                break;
                            }
                            self.pos += 1;
                        }
                    }
                    Some(b'*') => {
                        let start = self.pos;
                        self.pos += 2;
                        loop {
                            match self.peek() {
                                None => return Err(self.error(start, "unterminated /* comment")),
                                Some(b'*') if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                                    self.pos += 2;
                                    break;
                                }
                                Some(_) => self.pos += 1,
                            }
                        }
                    }
                    _ => return Err(self.error(self.pos, "unexpected '/'")),
                },
                _ => break,
            }
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<JVal, DocError> {
        if depth > MAX_DEPTH {
            return Err(self.error(self.pos, "nested too deeply"));
        }
        match self.peek() {
            Some(b'{') => self.object(depth).map(JVal::Obj),
            Some(b'[') => self.array(depth).map(JVal::Arr),
            Some(b'"') => self.string().map(JVal::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'}' | b']') => Err(self.error(self.pos, "expected a value")),
            Some(b',') => Err(self.error(self.pos, "unexpected ',' (a value is missing)")),
            Some(_) => Err(self.error(
                self.pos,
                "unexpected character (strings need double quotes)",
            )),
            None => Err(self.error(self.pos, "unexpected end of file (a value is missing)")),
        }
    }

    fn literal(&mut self, word: &str) -> Result<JVal, DocError> {
        let start = self.pos;
        if self.text[start..].starts_with(word) {
            self.pos += word.len();
            if matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
                return Err(self.error(start, "unexpected word (strings need double quotes)"));
            }
            Ok(JVal::Other(start..self.pos))
        } else {
            Err(self.error(start, "unexpected word (strings need double quotes)"))
        }
    }

    fn number(&mut self) -> Result<JVal, DocError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.pos += 1;
            }
            p.pos > s
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else if !digits(self) {
            return Err(self.error(start, "malformed number"));
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !digits(self) {
                return Err(self.error(start, "malformed number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return Err(self.error(start, "malformed number"));
            }
        }
        if matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'.') {
            return Err(self.error(start, "malformed number"));
        }
        Ok(JVal::Other(start..self.pos))
    }

    fn string(&mut self) -> Result<JStr, DocError> {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        let mut run = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error(start, "unterminated string"));
            };
            match b {
                b'"' => {
                    value.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok(JStr {
                        span: start..self.pos,
                        value,
                    });
                }
                b'\\' => {
                    value.push_str(&self.text[run..self.pos]);
                    let esc_at = self.pos;
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error(start, "unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => value.push('"'),
                        b'\\' => value.push('\\'),
                        b'/' => value.push('/'),
                        b'b' => value.push('\u{8}'),
                        b'f' => value.push('\u{c}'),
                        b'n' => value.push('\n'),
                        b'r' => value.push('\r'),
                        b't' => value.push('\t'),
                        b'u' => {
                            let hi = self.hex4(esc_at)?;
                            let c = if (0xD800..0xDC00).contains(&hi)
                                && self.text[self.pos..].starts_with("\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4(esc_at)?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                } else {
                                    self.pos = save;
                                    None
                                }
                            } else {
                                char::from_u32(hi)
                            };
                            // A lone surrogate is legal JSON but not a Rust char.
                            value.push(c.unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error(esc_at, "invalid escape in string")),
                    }
                    run = self.pos;
                }
                0..=0x1f => {
                    return Err(self.error(
                        self.pos,
                        "control character inside a string (write it as an escape like \\n)",
                    ));
                }
                _ => self.pos += 1,
            }
        }
    }

    fn hex4(&mut self, esc_at: usize) -> Result<u32, DocError> {
        let hex = self
            .text
            .get(self.pos..self.pos + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.error(esc_at, "invalid \\u escape in string"))?;
        self.pos += 4;
        Ok(hex)
    }

    fn object(&mut self, depth: usize) -> Result<JObj, DocError> {
        let start = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(JObj {
                        span: start..self.pos,
                        members,
                    });
                }
                Some(b'"') => {}
                None => return Err(self.error(start, "unterminated object (a '}' is missing)")),
                Some(_) => {
                    return Err(self.error(self.pos, "expected a key in double quotes or '}'"));
                }
            }
            let key = self.string()?;
            self.skip_trivia()?;
            if self.peek() != Some(b':') {
                return Err(self.error(self.pos, "expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_trivia()?;
            let value = self.value(depth + 1)?;
            members.push(JMember {
                key: key.value,
                key_span: key.span,
                value,
            });
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                None => return Err(self.error(start, "unterminated object (a '}' is missing)")),
                Some(_) => {
                    return Err(self.error(self.pos, "expected ',' or '}' (a comma is missing?)"));
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<JArr, DocError> {
        let start = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(JArr {
                        span: start..self.pos,
                        items,
                    });
                }
                None => return Err(self.error(start, "unterminated list (a ']' is missing)")),
                _ => {}
            }
            items.push(self.value(depth + 1)?);
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                None => return Err(self.error(start, "unterminated list (a ']' is missing)")),
                Some(_) => {
                    return Err(self.error(self.pos, "expected ',' or ']' (a comma is missing?)"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn spans_and_values() {
        let text = "\u{feff}{ // c\n \"a\": [1, \"x\\u00e9\\ud83d\\ude00\",],\n /* b */ \"a\": {\"k\": null}, }";
        let root = parse(text).unwrap().unwrap();
        let obj = root.as_obj().unwrap();
        assert_eq!(obj.members.len(), 2);
        let last = obj.get("a").unwrap().as_obj().unwrap();
        assert_eq!(last.members[0].key, "k");
        let arr = obj.members[0].value.as_arr().unwrap();
        let s = arr.items[1].as_str().unwrap();
        assert_eq!(s.value, "xé😀");
        assert_eq!(&text[s.span.clone()], "\"x\\u00e9\\ud83d\\ude00\"");
    }

    #[test]
    fn errors_say_where() {
        let err = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!((err.line, err.col), (3, 3));
        assert!(parse("{\"a\": 'x'}").is_err());
        assert!(parse("{\"a\": 01}").is_err());
        assert!(parse("{\"a\": tru}").is_err());
        assert!(parse("{} x").is_err());
        assert!(parse("[1,,2]").is_err());
        assert!(parse("{\"a\":\"b\nc\"}").is_err());
        assert!(parse("   \n").unwrap().is_none());
        let deep = "[".repeat(1000);
        assert!(parse(&deep).is_err());
    }
}
