//! A borrowed, lenient peek at the routing fields of a JSON-RPC message.
//!
//! The relay forwards the original bytes (but for the id of a server's request, [`with_id`]);
//! it only needs `id`, `method` and a few `params` fields to route and time a message. Parsing is one pass over the line, borrows from it,
//! ignores every unknown field and tolerates unexpected shapes (a `name` that is not a string
//! does not make a valid message invalid).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON-RPC id (or progress token): integers and strings, the same space MCP allows.
/// Other numbers keep their JSON text so they still match and echo back.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    Num(i64),
    Str(Box<str>),
    Other(Box<str>),
}

impl Id {
    /// `None` for `null` (which is no id at all).
    pub fn from_raw(raw: &RawValue) -> Option<Id> {
        let text = raw.get();
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str::<Cow<'_, str>>(text)
                .ok()
                .map(|s| Id::Str(s.into())),
            b'n' => None,
            _ => Some(match text.parse::<i64>() {
                Ok(n) => Id::Num(n),
                Err(_) => Id::Other(text.into()),
            }),
        }
    }

    /// The id as JSON text, for messages the bridge writes itself.
    pub fn to_json(&self) -> String {
        match self {
            Id::Num(n) => n.to_string(),
            Id::Str(s) => serde_json::Value::from(&**s).to_string(),
            Id::Other(raw) => raw.to_string(),
        }
    }

    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Id::Num(n) => (*n).into(),
            Id::Str(s) => (&**s).into(),
            Id::Other(raw) => serde_json::from_str(raw).unwrap_or(serde_json::Value::Null),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// What a line is, as far as routing goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Notification,
    Response,
    /// JSON, but not a JSON-RPC object we can route (a batch array, a scalar, an object with
    /// neither `method` nor `result`/`error`). Relayed untouched, but for a batch
    /// ([`Peek::is_batch`]), which the router refuses.
    Other,
}

/// The routing view of one message.
#[derive(Debug, Default)]
pub struct Peek<'a> {
    pub id: Option<Id>,
    pub method: Option<Cow<'a, str>>,
    pub result: Option<&'a RawValue>,
    pub has_error: bool,
    /// `params.name` when it is a string (the tool of `tools/call`).
    pub name: Option<Cow<'a, str>>,
    /// `params._meta.progressToken` of a request, or `params.progressToken` of a progress note.
    pub progress_token: Option<Id>,
    /// `params.requestId` of `notifications/cancelled`.
    pub request_id: Option<Id>,
    /// `params.taskId` (tasks/result, tasks/get, tasks/cancel).
    pub task_id: Option<Cow<'a, str>>,
    /// `params.message` when it is a string (progress messages).
    pub message: Option<Cow<'a, str>>,
    /// Whether `params.task` is present (a task-augmented request).
    pub task_augmented: bool,
    /// `params` as it is on the wire, when it is an object.
    pub params: Option<&'a RawValue>,
    is_object: bool,
    is_array: bool,
}

impl<'a> Peek<'a> {
    /// Parses `line`; an error means it is not JSON, or not entirely UTF-8 (serde_json does
    /// not check the strings it skips, so the whole line is validated first).
    pub fn parse(line: &'a [u8]) -> Result<Peek<'a>, serde_json::Error> {
        let text = std::str::from_utf8(line).map_err(|e| {
            <serde_json::Error as de::Error>::custom(format_args!(
                "invalid UTF-8 at byte {}",
                e.valid_up_to()
            ))
        })?;
        serde_json::from_str::<PeekDe<'a>>(text).map(|p| p.0)
    }

    /// Whether the line is a JSON array: a JSON-RPC batch (gone from MCP since 2025-06-18).
    pub fn is_batch(&self) -> bool {
        self.is_array
    }

    pub fn kind(&self) -> Kind {
        if !self.is_object {
            Kind::Other
        } else if self.method.is_some() {
            if self.id.is_some() {
                Kind::Request
            } else {
                Kind::Notification
            }
        } else if self.result.is_some() || self.has_error {
            Kind::Response
        } else {
            Kind::Other
        }
    }
}

struct PeekDe<'a>(Peek<'a>);

fn str_of(raw: &RawValue) -> Option<Cow<'_, str>> {
    if raw.get().starts_with('"') {
        serde_json::from_str(raw.get()).ok()
    } else {
        None
    }
}

impl<'de> Deserialize<'de> for PeekDe<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PeekDe<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut p = Peek {
                    is_object: true,
                    ..Peek::default()
                };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "id" => p.id = map.next_value::<&RawValue>().map(Id::from_raw)?,
                        "method" => p.method = str_of(map.next_value::<&RawValue>()?),
                        "result" => p.result = Some(map.next_value::<&RawValue>()?),
                        "error" => {
                            map.next_value::<IgnoredAny>()?;
                            p.has_error = true;
                        }
                        "params" => map.next_value_seed(ParamsSeed(&mut p))?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(PeekDe(p))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(PeekDe(Peek {
                    is_array: true,
                    ..Peek::default()
                }))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(PeekDe(Peek::default()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(PeekDe(Peek::default()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(PeekDe(Peek::default()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(PeekDe(Peek::default()))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(PeekDe(Peek::default()))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(PeekDe(Peek::default()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads `params` into the peek; anything but an object is skipped.
struct ParamsSeed<'p, 'de>(&'p mut Peek<'de>);

impl<'de> de::DeserializeSeed<'de> for ParamsSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let raw = <&RawValue>::deserialize(d)?;
        let p = self.0;
        // A repeated `params` replaces what an earlier one set, as in `JSON.parse`.
        p.params = None;
        (p.name, p.task_id, p.message) = (None, None, None);
        (p.request_id, p.progress_token, p.task_augmented) = (None, None, false);
        if !raw.get().starts_with('{') {
            return Ok(());
        }
        let params: Members<'de> = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
        p.params = Some(raw);
        p.name = params.last("name").and_then(str_of);
        p.task_id = params.last("taskId").and_then(str_of);
        p.message = params.last("message").and_then(str_of);
        p.request_id = params.last("requestId").and_then(Id::from_raw);
        p.task_augmented = params.last("task").is_some();
        p.progress_token = params
            .last("progressToken")
            .and_then(Id::from_raw)
            .or_else(|| {
                let meta = params.last("_meta").filter(|m| m.get().starts_with('{'))?;
                let meta: Members<'de> = serde_json::from_str(meta.get()).ok()?;
                meta.last("progressToken").and_then(Id::from_raw)
            });
        Ok(())
    }
}

/// The members of a JSON object, in order. A key may repeat (JSON allows it); like
/// `JSON.parse`, readers take the last one. A derived struct would refuse the message
/// ("duplicate field"), which fuzzing found.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    fn last(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// `line` (a JSON object) with every top-level `id` member set to `id`, the other members as
/// they were; `None` when it is not an object. For the few messages whose id the bridge
/// renames (a server's requests and their answers), not for ordinary traffic.
pub fn with_id(line: &[u8], id: &Id) -> Option<bytes::Bytes> {
    let members: Members<'_> = serde_json::from_slice(line).ok()?;
    let id = id.to_json();
    let mut out = Vec::with_capacity(line.len() + id.len());
    out.push(b'{');
    for (i, (key, value)) in members.0.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(serde_json::to_string(key).ok()?.as_bytes());
        out.push(b':');
        let value = if key == "id" { &id } else { value.get() };
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'}');
    Some(out.into())
}

/// The elements of a batch (a JSON array), as they are on the wire.
pub fn batch_elements(line: &[u8]) -> Option<Vec<&RawValue>> {
    serde_json::from_slice(line).ok()
}

/// Finds the `id` of a message from the kept head and tail of a line that was too large (or
/// not valid JSON) to parse whole: a top-level `"id"` key in the head
/// (`{"jsonrpc":"2.0","id":3,…`), else an `"id"` that closes the message in the tail
/// (`…,"id":3}`: SDKs often serialise it last). Callers act on it only when it names a
/// request they are waiting for.
pub fn find_id_in_fragments(head: &[u8], tail: &[u8]) -> Option<Id> {
    top_level_id_in_head(head).or_else(|| {
        let at = memchr::memmem::rfind(tail, b"\"id\"")?;
        // `{…,"a\"id":5}`: the end of a key with an escaped quote, not the key `id`. When
        // the tail starts at (or in the backslashes before) the match, nobody can tell.
        let backslashes = tail[..at].iter().rev().take_while(|b| **b == b'\\').count();
        if backslashes % 2 == 1 || backslashes == at {
            return None;
        }
        let (id, rest) = id_value(&tail[at + 4..])?;
        (trim_start(rest) == b"}").then_some(id)
    })
}

fn top_level_id_in_head(head: &[u8]) -> Option<Id> {
    let (mut depth, mut i) = (0usize, 0usize);
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b'"' => {
                let len = string_len(&head[i..])?;
                if depth == 1
                    && &head[i..i + len] == b"\"id\""
                    && let Some((id, _)) = id_value(&head[i + len..])
                {
                    return Some(id);
                }
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Length of the JSON string literal at the start of `b`, quotes included.
fn string_len(b: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Parses `: <id>` and returns the id and what follows it.
fn id_value(b: &[u8]) -> Option<(Id, &[u8])> {
    let rest = trim_start(trim_start(b).strip_prefix(b":")?);
    let end = if rest.first() == Some(&b'"') {
        string_len(rest)?
    } else {
        // The whole number: `1e2` or `1.5` cut at the first non-digit would read as id 1;
        // a number that runs to the end of a head may be cut short there: no id.
        rest.iter()
            .position(|b| !(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')))?
    };
    let raw: &RawValue = serde_json::from_slice(&rest[..end]).ok()?;
    Some((Id::from_raw(raw)?, &rest[end..]))
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Renaming touches the id only: numbers, escapes and order stay as they were, and a
    /// repeated `id` (which a client reads as the last one) cannot keep the old value.
    #[test]
    fn with_id_replaces_every_top_level_id_and_nothing_else() {
        let line = br#"{"id":"__warden/ask/1","jsonrpc":"2.0","method":"x","params":{"id":3,"n":1.10000000000000009,"s":"\u00e9"},"id":"again"}"#;
        let renamed = with_id(line, &Id::Str("__warden/s/1".into())).unwrap();
        assert_eq!(
            &renamed[..],
            br#"{"id":"__warden/s/1","jsonrpc":"2.0","method":"x","params":{"id":3,"n":1.10000000000000009,"s":"\u00e9"},"id":"__warden/s/1"}"#
        );
        assert!(with_id(b"[1]", &Id::Num(1)).is_none());
    }

    #[test]
    fn a_batch_is_told_apart() {
        assert!(
            Peek::parse(br#"[{"id":1,"method":"ping"}]"#)
                .unwrap()
                .is_batch()
        );
        assert!(
            !Peek::parse(br#"{"id":1,"method":"ping"}"#)
                .unwrap()
                .is_batch()
        );
        assert!(!Peek::parse(b"5").unwrap().is_batch());
    }

    #[test]
    fn request_with_progress_token_and_tool() {
        let line = br#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"search","arguments":{"name":5},"_meta":{"progressToken":"p1"}}}"#;
        let p = Peek::parse(line).unwrap();
        assert_eq!(p.kind(), Kind::Request);
        assert_eq!(p.id, Some(Id::Num(0)));
        assert_eq!(p.method.as_deref(), Some("tools/call"));
        assert_eq!(p.name.as_deref(), Some("search"));
        assert_eq!(p.progress_token, Some(Id::Str("p1".into())));
    }

    #[test]
    fn notifications_and_responses() {
        let p = Peek::parse(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"message":"half"}}"#).unwrap();
        assert_eq!(p.kind(), Kind::Notification);
        assert_eq!(p.progress_token, Some(Id::Num(3)));
        assert_eq!(p.message.as_deref(), Some("half"));
        let p = Peek::parse(br#"{"method":"notifications/cancelled","params":{"requestId":"a\"b"},"jsonrpc":"2.0"}"#).unwrap();
        assert_eq!(p.request_id, Some(Id::Str("a\"b".into())));
        let p = Peek::parse(br#"{"result":{"content":[]},"jsonrpc":"2.0","id":"x"}"#).unwrap();
        assert_eq!(p.kind(), Kind::Response);
        assert_eq!(p.id, Some(Id::Str("x".into())));
        let p =
            Peek::parse(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#)
                .unwrap();
        assert_eq!((p.kind(), p.id), (Kind::Response, None));
        let p = Peek::parse(br#"{"jsonrpc":"2.0","id":5,"result":null}"#).unwrap();
        assert_eq!(p.kind(), Kind::Response);
    }

    #[test]
    fn lenient_about_unexpected_shapes() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":{"a":1},"_meta":7,"message":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
        ] {
            assert_eq!(Peek::parse(line).unwrap().kind(), Kind::Request);
        }
        assert_eq!(
            Peek::parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
                .unwrap()
                .kind(),
            Kind::Other
        );
        assert_eq!(Peek::parse(b"42").unwrap().kind(), Kind::Other);
        assert!(Peek::parse(b"not json").is_err());
        assert!(Peek::parse(b"{\"a\":\"\xff\"}").is_err());
    }

    #[test]
    fn ids_echo_back() {
        for text in ["0", "-3", "\"a\\u0041\"", "1.5", "18446744073709551615"] {
            let raw: &RawValue = serde_json::from_str(text).unwrap();
            let id = Id::from_raw(raw).unwrap();
            let again: &RawValue =
                serde_json::from_str(Box::leak(id.to_json().into_boxed_str())).unwrap();
            assert_eq!(Id::from_raw(again), Some(id));
        }
    }

    #[test]
    fn id_from_fragments() {
        assert_eq!(
            find_id_in_fragments(br#"{"jsonrpc":"2.0","id": 12,"result":{"te"#, b""),
            Some(Id::Num(12))
        );
        assert_eq!(
            find_id_in_fragments(
                br#"{"result":{"content":[{"text":"aaa"#,
                br#"aaa"}]},"jsonrpc":"2.0","id":"r-1"}"#
            ),
            Some(Id::Str("r-1".into()))
        );
        assert_eq!(find_id_in_fragments(b"garbage", b"more garbage"), None);
        // An "id" inside params is not the message's id.
        assert_eq!(
            find_id_in_fragments(
                br#"{"jsonrpc":"2.0","method":"x","params":{"id":5,"a":"#,
                b"xx\"}}"
            ),
            None
        );
        assert_eq!(
            find_id_in_fragments(br#"{"params":{"id":5},"id":"k\"q","#, b""),
            Some(Id::Str("k\"q".into()))
        );
    }
}
