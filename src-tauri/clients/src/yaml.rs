//! YAML read with byte spans, for minimal edits of Continue's and Goose's config files.
//!
//! `saphyr-parser` does the parsing (and so the validation); this module turns its events
//! into a small tree whose scalars carry exact byte ranges. Only the first document is used.

use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::doc::DocError;

#[derive(Debug, Clone)]
pub(crate) enum YNode {
    Scalar(YScalar),
    Seq(YSeq),
    Map(YMap),
    Alias,
}

#[derive(Debug, Clone)]
pub(crate) struct YScalar {
    pub span: Range<usize>,
    pub value: String,
    pub style: ScalarStyle,
    /// Carries a tag (`!!str x`) or an anchor (`&a x`): the span may not be the value alone.
    pub decorated: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct YSeq {
    pub flow: bool,
    /// For a flow sequence: the offsets of `[` and just after `]`.
    pub start: usize,
    pub end: usize,
    pub items: Vec<YNode>,
}

#[derive(Debug, Clone)]
pub(crate) struct YMap {
    pub flow: bool,
    pub entries: Vec<(YNode, YNode)>,
    /// Has a `<<` merge key: some values come from elsewhere.
    pub merges: bool,
}

impl YNode {
    pub fn as_map(&self) -> Option<&YMap> {
        match self {
            YNode::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&YScalar> {
        match self {
            YNode::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            YNode::Scalar(_) => "a single value",
            YNode::Seq(_) => "a list",
            YNode::Map(_) => "a mapping",
            YNode::Alias => "an alias (*name)",
        }
    }
}

impl YMap {
    /// The last entry whose key is the plain text `key`.
    pub fn entry(&self, key: &str) -> Option<(&YScalar, &YNode)> {
        self.entries.iter().rev().find_map(|(k, v)| match k {
            YNode::Scalar(s) if s.value == key => Some((s, v)),
            _ => None,
        })
    }

    pub fn get(&self, key: &str) -> Option<&YNode> {
        self.entry(key).map(|(_, v)| v)
    }
}

/// Parses the first document of `text`; `Ok(None)` when there is none (an empty file).
pub(crate) fn parse(text: &str) -> Result<Option<YNode>, DocError> {
    // saphyr's markers count characters; map them to byte offsets.
    let mut byte_at: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    byte_at.push(text.len());
    let to_byte = |ci: usize| byte_at.get(ci).copied().unwrap_or(text.len());

    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<YNode> = None;
    let mut documents = 0;
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| {
            let m = e.marker();
            DocError {
                line: m.line(),
                col: m.col() + 1,
                message: e.info().to_owned(),
            }
        })?;
        let start = to_byte(span.start.index());
        let end = to_byte(span.end.index());
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                continue;
            }
            Event::DocumentEnd if documents == 1 => break,
            Event::SequenceStart(_, _) => {
                stack.push(Frame::Seq(YSeq {
                    flow: text[start..end.max(start)].starts_with('['),
                    start,
                    end,
                    items: Vec::new(),
                }));
                continue;
            }
            Event::MappingStart(_, _) => {
                stack.push(Frame::Map(
                    YMap {
                        flow: text[start..end.max(start)].starts_with('{'),
                        entries: Vec::new(),
                        merges: false,
                    },
                    None,
                ));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq(mut s)) => {
                    // Like quoted scalars, the span of `]` can run over the blanks after it.
                    s.end = if s.flow {
                        text[start..end.max(start)]
                            .find(']')
                            .map_or(end, |i| start + i + 1)
                    } else {
                        end
                    };
                    YNode::Seq(s)
                }
                _ => return Err(DocError::at(text, start, "unbalanced list".to_owned())),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map(m, _)) => YNode::Map(m),
                _ => return Err(DocError::at(text, start, "unbalanced mapping".to_owned())),
            },
            Event::Scalar(value, style, anchor, tag) => {
                let end = scalar_end(text, start, end, style);
                YNode::Scalar(YScalar {
                    span: start..end,
                    value: value.into_owned(),
                    style,
                    decorated: anchor != 0 || tag.is_some(),
                })
            }
            Event::Alias(_) => YNode::Alias,
            _ => continue,
        };
        match stack.last_mut() {
            None => {
                if root.is_none() {
                    root = Some(node);
                }
            }
            Some(Frame::Seq(s)) => s.items.push(node),
            Some(Frame::Map(m, pending)) => match pending.take() {
                None => {
                    if matches!(&node, YNode::Scalar(s) if s.value == "<<") {
                        m.merges = true;
                    }
                    *pending = Some(node);
                }
                Some(key) => m.entries.push((key, node)),
            },
        }
    }
    Ok(root)
}

enum Frame {
    Seq(YSeq),
    Map(YMap, Option<YNode>),
}

/// saphyr's span of a quoted scalar can run past the closing quote (over spaces and a
/// comment); find the quote. Plain scalars lose trailing blanks.
fn scalar_end(text: &str, start: usize, end: usize, style: ScalarStyle) -> usize {
    let bytes = text.as_bytes();
    match style {
        ScalarStyle::DoubleQuoted if bytes.get(start) == Some(&b'"') => {
            let mut i = start + 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
            end
        }
        ScalarStyle::SingleQuoted if bytes.get(start) == Some(&b'\'') => {
            let mut i = start + 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            end
        }
        ScalarStyle::Plain => {
            let mut e = end.min(text.len());
            while e > start && matches!(bytes[e - 1], b' ' | b'\t' | b'\r' | b'\n') {
                e -= 1;
            }
            e
        }
        _ => end,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quoted_spans_stop_at_the_quote() {
        let text = "a: \"x\\\"y\"  # c\nb: 'it''s' \nc: [p, \"q\" , r]\nd:\n  - --\n";
        let root = parse(text).unwrap().unwrap();
        let m = root.as_map().unwrap();
        let a = m.get("a").unwrap().as_scalar().unwrap();
        assert_eq!(&text[a.span.clone()], "\"x\\\"y\"");
        assert_eq!(a.value, "x\"y");
        let b = m.get("b").unwrap().as_scalar().unwrap();
        assert_eq!(&text[b.span.clone()], "'it''s'");
        let YNode::Seq(c) = m.get("c").unwrap() else {
            panic!()
        };
        assert!(c.flow);
        let q = c.items[1].as_scalar().unwrap();
        assert_eq!(&text[q.span.clone()], "\"q\"");
        let YNode::Seq(d) = m.get("d").unwrap() else {
            panic!()
        };
        assert!(!d.flow);
        assert_eq!(d.items[0].as_scalar().unwrap().value, "--");
    }

    #[test]
    fn unicode_offsets_are_bytes() {
        let text = "\u{feff}é: ü\nk: v\n";
        let root = parse(text).unwrap().unwrap();
        let k = root
            .as_map()
            .unwrap()
            .get("k")
            .unwrap()
            .as_scalar()
            .unwrap();
        assert_eq!(&text[k.span.clone()], "v");
    }

    #[test]
    fn errors_say_where() {
        let err = parse("a: [1, 2\nb: x\n").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
