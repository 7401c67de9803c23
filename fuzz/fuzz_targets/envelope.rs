//! Envelope peek: arbitrary bytes → `Peek::parse`, and the id search in the head and tail
//! kept of an oversized line.
//!
//! Invariants:
//! - no panic;
//! - whenever serde_json reads the line as a JSON value, the peek parses too and agrees
//!   with it: the kind, `id`, `method`, `result`, `error`, and the `params` fields the
//!   bridge routes on (tool name, progress token, request id, task id, message);
//! - `Id::to_json` reads back as the same id;
//! - `find_id_in_fragments` never names an id the message does not have: for a JSON
//!   object, what it finds in any head/tail cut of the line is the message's own `id`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use warden_wire::protocol::{Id, Kind, Peek, find_id_in_fragments};

/// The id serde_json sees, in the peek's terms.
fn id_of(v: &Value, raw: &str) -> Option<Id> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(Id::Str(s.as_str().into())),
        // Integers by their text (`-0` is the integer 0, though serde_json reads a float).
        Value::Number(_) => Some(match raw.parse::<i64>() {
            Ok(i) => Id::Num(i),
            Err(_) => Id::Other(raw.into()),
        }),
        _ => Some(Id::Other(raw.into())),
    }
}

/// The raw JSON text of member `key` (the last one: serde_json keeps the last duplicate).
fn raw_member<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let map: std::collections::HashMap<String, &RawValue> = serde_json::from_str(line).ok()?;
    map.get(key).map(|r| r.get())
}

/// How often the top-level object of `text` has the key `id` (JSON allows duplicates;
/// which one counts is then up to the reader, so fragments are only checked without).
fn id_keys(text: &str) -> usize {
    struct Count(usize);
    impl<'de> serde::Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Count;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<Count, A::Error> {
                    let mut n = 0;
                    while let Some(k) = m.next_key::<String>()? {
                        n += usize::from(k == "id");
                        m.next_value::<serde::de::IgnoredAny>()?;
                    }
                    Ok(Count(n))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Count>(text).map_or(0, |c| c.0)
}

fn str_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn id_field(obj: &Map<String, Value>, text: &str, key: &str) -> Option<Id> {
    let v = obj.get(key)?;
    let raw = raw_member(text, key)?;
    id_of(v, raw.trim())
}

fn check_id_roundtrip(id: &Id) {
    let json = id.to_json();
    let raw: &RawValue = serde_json::from_str(&json).expect("to_json is JSON");
    assert_eq!(Id::from_raw(raw).as_ref(), Some(id), "{json}");
}

fn agree(line: &[u8], text: &str, value: &Value, peek: &Peek<'_>) {
    let Value::Object(obj) = value else {
        assert_eq!(peek.kind(), Kind::Other, "a non-object is Other");
        return;
    };
    let id = id_field(obj, text, "id");
    assert_eq!(peek.id, id, "id of {text}");
    let method = str_field(obj, "method");
    assert_eq!(
        peek.method.as_deref(),
        method.as_deref(),
        "method of {text}"
    );
    assert_eq!(peek.result.is_some(), obj.contains_key("result"));
    assert_eq!(peek.has_error, obj.contains_key("error"));
    let kind = match (&method, &id) {
        (Some(_), Some(_)) => Kind::Request,
        (Some(_), None) => Kind::Notification,
        _ if obj.contains_key("result") || obj.contains_key("error") => Kind::Response,
        _ => Kind::Other,
    };
    assert_eq!(peek.kind(), kind, "kind of {text}");
    match obj.get("params") {
        Some(Value::Object(params)) => {
            let raw = raw_member(text, "params").expect("params is there");
            assert_eq!(peek.params.map(RawValue::get), Some(raw.trim()));
            assert_eq!(peek.name.as_deref(), str_field(params, "name").as_deref());
            assert_eq!(
                peek.task_id.as_deref(),
                str_field(params, "taskId").as_deref()
            );
            assert_eq!(
                peek.message.as_deref(),
                str_field(params, "message").as_deref()
            );
            assert_eq!(peek.task_augmented, params.contains_key("task"));
            assert_eq!(peek.request_id, id_field(params, raw, "requestId"));
            let token =
                id_field(params, raw, "progressToken").or_else(|| match params.get("_meta") {
                    Some(Value::Object(meta)) => {
                        let meta_raw = raw_member(raw, "_meta")?;
                        id_field(meta, meta_raw, "progressToken")
                    }
                    _ => None,
                });
            assert_eq!(peek.progress_token, token, "progress token of {text}");
        }
        _ => {
            assert!(peek.params.is_none());
            assert!(peek.name.is_none() && peek.progress_token.is_none());
        }
    }
    for id in [&peek.id, &peek.progress_token, &peek.request_id]
        .into_iter()
        .flatten()
    {
        check_id_roundtrip(id);
    }
    // Fragments of the line: whatever id they yield is the message's own.
    if id_keys(text) > 1 {
        return;
    }
    let n = line.len();
    for (h, t) in [(n, 0), (n / 2, n / 2), (n / 3, 2 * n / 3), (0, n), (n, n)] {
        let (head, tail) = (&line[..h], &line[n - t..]);
        if let Some(found) = find_id_in_fragments(head, tail) {
            assert_eq!(
                Some(&found),
                id.as_ref(),
                "fragments {:?} / {:?} of {text}",
                String::from_utf8_lossy(head),
                String::from_utf8_lossy(tail)
            );
        }
    }
}

fuzz_target!(|line: &[u8]| {
    let peek = Peek::parse(line);
    // No panic on any cut, whatever the bytes.
    let cut = line.len() / 2;
    let _ = find_id_in_fragments(&line[..cut], &line[cut..]);
    let _ = find_id_in_fragments(line, line);
    let Ok(text) = std::str::from_utf8(line) else {
        assert!(peek.is_err(), "not UTF-8 yet parsed");
        return;
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let peek = peek.unwrap_or_else(|e| panic!("serde_json reads {text:?} but the peek fails: {e}"));
    agree(line, text, &value, &peek);
});
