//! Guardrails: the two places where the bridge changes a message instead of relaying it
//! verbatim, both opt-in through config.toml and both logged (tool filters and pins are
//! `router/tools.rs`).
//!
//! - `clamp` lowers numeric tool arguments to a cap (e.g. mcp-ripgrep's `maxResults`), so a
//!   model's over-eager call still goes through.
//! - `result_soft_cap_bytes` cuts an oversized tool result's text to the cap and says so in
//!   the result, so the model narrows its query instead of the client breaking on the size.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::Value;

/// The note appended to a cut text. Its first words mark a text as already cut.
const CUT_MARK: &str = "\n\n[Warden cut this result";

/// Lowers `params.arguments.<arg>` of a `tools/call` line to its cap. Returns the new line
/// and one note per lowered argument, or `None` when nothing was above its cap.
pub fn clamp(line: &[u8], caps: &BTreeMap<String, f64>) -> Option<(Bytes, Vec<String>)> {
    let mut msg: Value = serde_json::from_slice(line).ok()?;
    let args = msg.pointer_mut("/params/arguments")?.as_object_mut()?;
    let mut notes = Vec::new();
    for (arg, cap) in caps {
        let Some(value) = args.get_mut(arg) else {
            continue;
        };
        let Some(n) = value.as_f64() else { continue };
        if n > *cap {
            *value = if cap.fract() == 0.0 && *cap <= u64::MAX as f64 {
                Value::from(*cap as u64)
            } else {
                Value::from(*cap)
            };
            notes.push(format!("{arg} {n} lowered to {cap}"));
        }
    }
    if notes.is_empty() {
        return None;
    }
    Some((Bytes::from(msg.to_string()), notes))
}

/// Cuts the text content of a `tools/call` result line so that all its text together is at
/// most `cap` bytes, appending a note that tells the model how to see the rest. Returns the
/// new line and the text size before, or `None` when the text is within the cap.
pub fn soft_cap(line: &[u8], cap: usize) -> Option<(Bytes, usize)> {
    let mut msg: Value = serde_json::from_slice(line).ok()?;
    let content = msg.pointer_mut("/result/content")?.as_array_mut()?;
    let text_of = |item: &Value| {
        item.get("text")
            .and_then(Value::as_str)
            .map(|t| visible(t).len())
    };
    let before: usize = content.iter().filter_map(text_of).sum();
    if before <= cap {
        return None;
    }
    let mut budget = cap;
    for item in content.iter_mut() {
        let Some(Value::String(text)) = item.get_mut("text") else {
            continue;
        };
        let len = visible(text).len();
        if len <= budget {
            budget -= len;
            continue;
        }
        let mut end = budget;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        budget -= end;
        text.truncate(end);
        text.push_str(&format!(
            "{CUT_MARK} at {cap} of {before} bytes (result_soft_cap_bytes). To see what is missing, narrow the request: a more specific pattern or query, a smaller path, a file filter, or a lower maxResults.]"
        ));
    }
    Some((Bytes::from(msg.to_string()), before))
}

/// The text without an earlier cut note, so cutting twice never stacks notes.
fn visible(text: &str) -> &str {
    text.find(CUT_MARK).map_or(text, |at| &text[..at])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn clamp_lowers_only_what_is_above_the_cap() {
        let caps = BTreeMap::from([
            ("maxResults".to_owned(), 500.0),
            ("context".to_owned(), 3.0),
        ]);
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"advanced-search","arguments":{"pattern":"x","maxResults":100000,"context":2}}}"#;
        let (out, notes) = clamp(line, &caps).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["params"]["arguments"]["maxResults"], 500);
        assert_eq!(v["params"]["arguments"]["context"], 2);
        assert_eq!(v["params"]["arguments"]["pattern"], "x");
        assert_eq!(notes, ["maxResults 100000 lowered to 500"]);
        let small = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":{"maxResults":5}}}"#;
        assert!(clamp(small, &caps).is_none());
    }

    #[test]
    fn soft_cap_cuts_text_with_a_note_and_is_stable_when_repeated() {
        let text = "é".repeat(1000); // 2000 bytes, cut on a char boundary
        let line = serde_json::json!({"jsonrpc":"2.0","id":3,"result":{"content":[
            {"type":"text","text":"head "},{"type":"image","data":"AAA"},{"type":"text","text":text}]}});
        let (out, before) = soft_cap(line.to_string().as_bytes(), 1001).unwrap();
        assert_eq!(before, 2005);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(v["result"]["content"][0]["text"], "head ");
        assert_eq!(v["result"]["content"][1]["data"], "AAA");
        let cut = v["result"]["content"][2]["text"].as_str().unwrap();
        assert!(cut.starts_with(&"é".repeat(498)));
        assert_eq!(visible(cut).len(), 996);
        assert!(cut.contains("narrow the request"));
        // Cutting the cut result again changes nothing and never stacks notes.
        assert!(soft_cap(&out, 1001).is_none());
        let (again, _) = soft_cap(&out, 500).unwrap();
        let again: Value = serde_json::from_slice(&again).unwrap();
        let again = again["result"]["content"][2]["text"].as_str().unwrap();
        assert_eq!(again.matches("[Warden cut").count(), 1);
        assert!(soft_cap(line.to_string().as_bytes(), 5000).is_none());
    }
}
