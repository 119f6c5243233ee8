//! Tolerant parsers of what LLM endpoints really answer.
//!
//! Small models (and large ones, as HippoRAG's users report) wrap JSON in code fences or prose,
//! return an array where an object was asked, rename keys (`triplets`, `relations`), use
//! `{"subject", "predicate", "object"}` objects instead of `[s, r, o]` arrays, use Python-style
//! single quotes, or stop mid-way at `max_tokens`. [`extract_json`] finds and repairs the JSON;
//! the task parsers then read what they can and drop what they cannot, never panicking. The
//! test cases include answers collected from the real SmolLM2-135M server (`tools/llm_server.py`).

use std::borrow::Cow;

use serde_json::Value;

/// The four relevance labels the tiering prompt ([`super::prompts::tier_prompt`]) asks the
/// model to choose from (CatRAG §3, stage II), as read from its answer. The engine maps them to
/// its edge tiers; this module knows only the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TierLabel {
    /// `irrelevant` (also `none`, `unrelated`).
    Irrelevant,
    /// `weak` (also `low`).
    Weak,
    /// `high` (also `relevant`).
    High,
    /// `direct`.
    Direct,
}

/// The answer without the reasoning of a "thinking" model: every `<think>…</think>` block
/// (Qwen3, DeepSeek-R1 and other reasoning models served by llama.cpp, Ollama or vLLM; also
/// `<thinking>` and `<reasoning>`) is removed, case-insensitively, and an unterminated block
/// (cut at `max_tokens`) removes everything after its opening tag. A stray closing tag without
/// an opening one (servers that strip only the opening tag) removes everything before it. Every
/// parser of this module calls it first. Never panics.
pub fn strip_think(text: &str) -> Cow<'_, str> {
    const TAGS: [(&str, &str); 3] =
        [("<think>", "</think>"), ("<thinking>", "</thinking>"), ("<reasoning>", "</reasoning>")];
    if !text.contains('<') {
        return Cow::Borrowed(text);
    }
    let mut s: Cow<'_, str> = Cow::Borrowed(text);
    for (open, close) in TAGS {
        // A closing tag before any opening one: the opening tag was eaten by the server.
        if let Some((c0, c1)) = find_ci(&s, close) {
            if find_ci(&s[..c0], open).is_none() {
                s = Cow::Owned(s[c1..].to_string());
            }
        }
        while let Some((o0, o1)) = find_ci(&s, open) {
            let rest = match find_ci(&s[o1..], close) {
                Some((_, c1)) => s[o1 + c1..].to_string(),
                None => String::new(),
            };
            s = Cow::Owned(format!("{}{}", &s[..o0], rest));
        }
    }
    s
}

/// The byte range in `haystack` of the first case-insensitive (Unicode simple lower-casing)
/// occurrence of `needle`, or `None`. The range is in `haystack`'s own bytes, always on
/// character boundaries, even where lower-casing changes a character's length (`İ`, `ẞ`): a
/// copy made with `to_lowercase` would give offsets into the copy.
pub fn find_ci(haystack: &str, needle: &str) -> Option<(usize, usize)> {
    find_ci_all(haystack, needle).next()
}

/// The byte range of the last case-insensitive occurrence of `needle` in `haystack` (see
/// [`find_ci`]).
pub fn rfind_ci(haystack: &str, needle: &str) -> Option<(usize, usize)> {
    find_ci_all(haystack, needle).last()
}

fn find_ci_all<'a>(haystack: &'a str, needle: &str) -> impl Iterator<Item = (usize, usize)> + 'a {
    let lower = |c: char| c.to_lowercase().next().unwrap_or(c);
    let pat: Vec<char> = needle.chars().map(lower).collect();
    let chars: Vec<(usize, char)> = haystack.char_indices().map(|(i, c)| (i, lower(c))).collect();
    let len = haystack.len();
    let n = pat.len();
    (0..chars.len()).filter_map(move |i| {
        if n == 0 || i + n > chars.len() {
            return None;
        }
        if chars[i..i + n].iter().map(|&(_, c)| c).eq(pat.iter().copied()) {
            let end = chars.get(i + n).map_or(len, |&(j, _)| j);
            Some((chars[i].0, end))
        } else {
            None
        }
    })
}

/// Strip Markdown code fences (```json … ```), keeping what is inside the first fenced block, or
/// the text itself when there is none; an unclosed fence (truncated answer) keeps the rest.
pub fn strip_fences(text: &str) -> &str {
    let Some(open) = text.find("```") else { return text.trim() };
    let after = &text[open + 3..];
    // Skip the info string (json, JSON, python …) up to the end of the line.
    let body = match after.find('\n') {
        Some(nl)
            if after[..nl].chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == ' ') =>
        {
            &after[nl + 1..]
        }
        _ => after,
    };
    match body.find("```") {
        Some(close) => body[..close].trim(),
        None => body.trim(),
    }
}

/// Close a JSON text cut short: scan it (strings, escapes, brackets), cut back to the last
/// point where a value inside an array or object had just ended, and append the closing
/// brackets still open there. `None` when nothing complete is left.
pub fn repair_truncated(json: &str) -> Option<String> {
    let mut stack: Vec<char> = Vec::new();
    let mut in_str = false;
    let mut esc = false;
    // Inside an object, whether the current string is a value (after ':') rather than a key.
    let mut in_value = false;
    // (byte position just after a closed value, stack at that point)
    let mut best: Option<(usize, Vec<char>)> = None;
    for (i, c) in json.char_indices() {
        if in_str {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
                // A closed string inside an array, or an object's value, is complete.
                if stack.last() == Some(&']') || (stack.last() == Some(&'}') && in_value) {
                    best = Some((i + 1, stack.clone()));
                }
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            ':' => in_value = true,
            ',' => in_value = false,
            '{' => {
                stack.push('}');
                in_value = false;
            }
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return None;
                }
                best = Some((i + 1, stack.clone()));
                if stack.is_empty() {
                    return Some(json[..=i].to_string());
                }
            }
            _ => {}
        }
    }
    let (end, open) = best?;
    let mut out = json[..end].to_string();
    for c in open.iter().rev() {
        out.push(*c);
    }
    Some(out)
}

fn parse_from(s: &str) -> Option<Value> {
    // The first complete JSON value; prose after it is ignored.
    let mut de = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    if let Some(Ok(v)) = de.next() {
        return Some(v);
    }
    let repaired = repair_truncated(s)?;
    serde_json::from_str(&repaired).ok()
}

/// Find the JSON in an answer: inside code fences or not, after or before prose, truncated or
/// not, with Python-style single quotes or not. Returns the first object or array that parses
/// (after repair), or `None`.
pub fn extract_json(text: &str) -> Option<Value> {
    let body = strip_fences(text);
    for candidate in [body, text] {
        for (i, c) in candidate.char_indices() {
            if c == '{' || c == '[' {
                if let Some(v) = parse_from(&candidate[i..]) {
                    if v.is_object() || v.is_array() {
                        return Some(v);
                    }
                }
                // Python-style quotes: only when there is no double quote to confuse.
                if !candidate[i..].contains('"') && candidate[i..].contains('\'') {
                    if let Some(v) = parse_from(&candidate[i..].replace('\'', "\"")) {
                        return Some(v);
                    }
                }
            }
        }
    }
    None
}

/// A tier name as a model may write it (`High`, `"direct"`, `Tier: weak`, `HIGH.`), or `None`.
pub fn tier_word(s: &str) -> Option<TierLabel> {
    let w: String = s.trim().to_ascii_lowercase();
    let w = w.trim_matches(|c: char| !c.is_ascii_alphabetic());
    let w = w.rsplit(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or(w);
    match w {
        "irrelevant" | "none" | "unrelated" => Some(TierLabel::Irrelevant),
        "weak" | "low" => Some(TierLabel::Weak),
        "high" | "relevant" => Some(TierLabel::High),
        "direct" => Some(TierLabel::Direct),
        _ => None,
    }
}

fn edge_index(id: &str, n: usize) -> Option<usize> {
    let t = id.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '[' || c == ']');
    let digits = t.strip_prefix('e').or_else(|| t.strip_prefix('E')).unwrap_or(t);
    let k: usize = digits.trim().parse().ok()?;
    (1..=n).contains(&k).then(|| k - 1)
}

/// Read one tier per edge id `e1` … `en` from a tiering answer (after [`strip_think`]).
///
/// Strict about ids, tolerant about the wrapping: accepts `{"e1": "high", …}`, `[{"id": "e1",
/// "tier": "high"}, …]`, the same inside code fences or prose, truncated JSON, and plain lines
/// `e1: high`. An id that is missing, out of range, or given two different tiers is `None` (the
/// caller makes it Weak and logs it). Never panics.
pub fn parse_tiers(text: &str, n: usize) -> Vec<Option<TierLabel>> {
    let text = strip_think(text);
    let text = text.as_ref();
    let mut out: Vec<Option<Option<TierLabel>>> = vec![None; n]; // None: not seen; Some(None): conflict
    let mut put = |i: usize, t: TierLabel| {
        out[i] = match out[i] {
            None => Some(Some(t)),
            Some(Some(prev)) if prev == t => Some(Some(t)),
            _ => Some(None),
        };
    };
    match extract_json(text) {
        Some(Value::Object(map)) => {
            // Possibly wrapped: {"tiers": {...}} or {"edges": [...]}.
            let inner = map.values().find(|v| v.is_object() || v.is_array()).cloned();
            let direct_hits = map.keys().filter(|k| edge_index(k, n).is_some()).count();
            if direct_hits == 0 {
                if let Some(v) = inner {
                    return parse_tiers(&v.to_string(), n);
                }
            }
            for (k, v) in &map {
                if let (Some(i), Some(t)) = (edge_index(k, n), v.as_str().and_then(tier_word)) {
                    put(i, t);
                }
            }
        }
        Some(Value::Array(items)) => {
            for (pos, item) in items.iter().enumerate() {
                match item {
                    Value::Object(o) => {
                        let id = ["id", "edge", "edge_id", "key"].iter().find_map(|k| o.get(*k));
                        let tier =
                            ["tier", "label", "rating", "class", "relevance"].iter().find_map(|k| o.get(*k));
                        let i = id.and_then(|v| match v {
                            Value::String(s) => edge_index(s, n),
                            Value::Number(x) => x.as_u64().and_then(|x| edge_index(&x.to_string(), n)),
                            _ => None,
                        });
                        if let (Some(i), Some(t)) = (i, tier.and_then(|v| v.as_str()).and_then(tier_word)) {
                            put(i, t);
                        }
                    }
                    // A bare list of tiers, in edge order, of exactly n items.
                    Value::String(s) if items.len() == n => {
                        if let Some(t) = tier_word(s) {
                            put(pos, t);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {
            for line in text.lines() {
                let line = line.trim().trim_start_matches(['-', '*', ' ']);
                if let Some((id, rest)) = line.split_once([':', '=', '-']) {
                    if let (Some(i), Some(t)) = (edge_index(id, n), tier_word(rest)) {
                        put(i, t);
                    }
                }
            }
        }
    }
    out.into_iter().map(|x| x.flatten()).collect()
}

/// A triple from LLM OpenIE: subject, relation, object (trimmed, non-empty).
pub type LlmTriple = [String; 3];

fn scalar(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

fn triple_of(v: &Value) -> Option<LlmTriple> {
    match v {
        Value::Array(a) if a.len() == 3 => Some([scalar(&a[0])?, scalar(&a[1])?, scalar(&a[2])?]),
        Value::Object(o) => {
            let get = |keys: &[&str]| keys.iter().find_map(|k| o.get(*k)).and_then(scalar);
            Some([
                get(&["subject", "subj", "head", "s", "source"])?,
                get(&["predicate", "relation", "rel", "verb", "r", "p"])?,
                get(&["object", "obj", "tail", "o", "target"])?,
            ])
        }
        _ => None,
    }
}

fn collect_triples(v: &Value, out: &mut Vec<LlmTriple>, depth: usize) {
    if depth > 4 {
        return;
    }
    if let Some(t) = triple_of(v) {
        out.push(t);
        return;
    }
    match v {
        Value::Array(a) => a.iter().for_each(|x| collect_triples(x, out, depth + 1)),
        // Any key: "triples", "triplets", "relations", "extracted_triples", "result" …
        Value::Object(o) => o.values().for_each(|x| collect_triples(x, out, depth + 1)),
        _ => {}
    }
}

/// Read OpenIE triples (HippoRAG's `{"triples": [[s, r, o], …]}`) from an answer that may be
/// fenced, surrounded by prose, an array instead of an object, use other key names, use
/// `{"subject","predicate","object"}` objects, or be truncated (the complete triples before the
/// cut are kept). Items that are not three non-empty scalars are dropped. Duplicates are removed,
/// order kept.
pub fn parse_triples(text: &str) -> Vec<LlmTriple> {
    let text = strip_think(text);
    let text = text.as_ref();
    let mut out = Vec::new();
    if let Some(v) = extract_json(text) {
        collect_triples(&v, &mut out, 0);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|t| seen.insert(t.clone()));
    out
}

/// Read named entities (HippoRAG's `{"named_entities": [...]}`) from an answer: any array of
/// strings in the JSON (fenced, in prose, truncated, renamed key), else one entity per
/// non-empty line or comma-separated item of the answer with bullets and numbering removed.
/// Trimmed, bullets and quotes stripped, deduplicated case-insensitively; items of more than
/// 8 words (prose) are dropped.
pub fn parse_entities(text: &str) -> Vec<String> {
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let text = strip_think(text);
    let text = text.as_ref();
    let mut raw = Vec::new();
    match extract_json(text) {
        Some(v) => strings(&v, &mut raw),
        None => {
            for line in strip_fences(text).lines() {
                for item in line.split(',') {
                    raw.push(item.to_string());
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    raw.into_iter()
        .map(|s| {
            s.trim()
                .trim_start_matches(|c: char| {
                    c == '-' || c == '*' || c.is_ascii_digit() || c == '.' || c == ')'
                })
                .trim()
                .trim_matches(|c: char| c == '"' || c == '\'' || c == '.')
                .trim()
                .to_string()
        })
        // A sentence of prose is not an entity: at most 8 words.
        .filter(|s| !s.is_empty() && s.split_whitespace().count() <= 8)
        .filter(|s| seen.insert(s.to_lowercase()))
        .collect()
}

/// The short answer in a generated reply (after [`strip_think`]): after the last `Answer:` marker if there is one (else
/// the whole reply), its first non-empty line, with quotes, a trailing full stop and Markdown
/// emphasis removed; a JSON `{"answer": …}` is read too. Empty when nothing is left.
pub fn parse_answer(text: &str) -> String {
    let text = strip_think(text);
    let text = text.as_ref();
    if let Some(Value::Object(o)) = extract_json(text) {
        if let Some(a) = o.get("answer").and_then(scalar) {
            return a;
        }
    }
    // The marker's range in `text` itself (a lower-cased copy can be longer or shorter).
    let start = rfind_ci(text, "answer:").map_or(0, |(_, end)| end);
    let rest = &text[start..];
    let line = rest.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    line.trim_matches(|c: char| matches!(c, '*' | '"' | '\'' | '`' | '.' | ' ')).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use TierLabel::*;

    #[test]
    fn fences_and_prose() {
        assert_eq!(strip_fences("```json\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(strip_fences("Sure!\n```\n[1]\n```\nDone."), "[1]");
        assert_eq!(strip_fences("no fence"), "no fence");
        assert_eq!(
            extract_json("Here you go: {\"a\": [1, 2]} hope it helps {"),
            Some(serde_json::json!({"a": [1, 2]}))
        );
        assert_eq!(extract_json("nothing here"), None);
        assert_eq!(extract_json("{'a': 'b'}"), Some(serde_json::json!({"a": "b"})));
    }

    #[test]
    fn truncation_is_repaired_to_the_last_complete_value() {
        assert_eq!(
            repair_truncated(r#"{"t": [["a","b","c"], ["d","e"#).as_deref(),
            Some(r#"{"t": [["a","b","c"], ["d"]]}"#)
        );
        assert_eq!(repair_truncated(r#"{"e1": "high", "e2": "dir"#).as_deref(), Some(r#"{"e1": "high"}"#));
        assert_eq!(repair_truncated(r#"["x", "y", "z"#).as_deref(), Some(r#"["x", "y"]"#));
        assert_eq!(repair_truncated(r#"{"a"#), None);
        assert_eq!(repair_truncated("]"), None);
    }

    #[test]
    fn tiers_from_objects_arrays_lines_and_broken_answers() {
        assert_eq!(
            parse_tiers(r#"{"e1": "High", "e2": "irrelevant", "e3": "DIRECT"}"#, 3),
            vec![Some(High), Some(Irrelevant), Some(Direct)]
        );
        assert_eq!(
            parse_tiers(
                "```json\n[{\"id\": \"e2\", \"tier\": \"weak\"}, {\"id\": 1, \"tier\": \"high\"}]\n```",
                2
            ),
            vec![Some(High), Some(Weak)]
        );
        assert_eq!(parse_tiers("e1: high\n- e2 = Direct.\ne9: high", 2), vec![Some(High), Some(Direct)]);
        assert_eq!(parse_tiers(r#"{"tiers": {"e1": "weak"}}"#, 2), vec![Some(Weak), None]);
        // Truncated at max_tokens: e1 survives, e2 is lost.
        assert_eq!(parse_tiers(r#"{"e1": "high", "e2": "dir"#, 2), vec![Some(High), None]);
        // Conflicting answers for one id, unknown words, out-of-range ids.
        assert_eq!(parse_tiers("e1: high\ne1: weak\ne2: maybe\ne0: high", 2), vec![None, None]);
        assert_eq!(parse_tiers(r#"["high", "weak"]"#, 2), vec![Some(High), Some(Weak)]);
        assert_eq!(
            parse_tiers(r#"["high"]"#, 2),
            vec![None, None],
            "a bare list must have one tier per edge"
        );
        assert_eq!(parse_tiers("", 3), vec![None, None, None]);
    }

    #[test]
    fn tiers_from_real_smollm2_answers() {
        // SmolLM2-135M-Instruct Q4_1 (tools/llm_server.py, temperature 0) on a 3-edge tier prompt
        // (Inception -> Christopher Nolan / 2010 / Leonardo DiCaprio): no JSON, no edge ids, a loop
        // until max_tokens. Nothing can be read: every edge is unparsed (the tierer makes them Weak).
        let a = "Inception: Christopher Nolan\nInception: 2010\nInception: 2010\nInception: 2010\nInception: 2010\nInception: 2010\n";
        assert_eq!(parse_tiers(a, 3), vec![None, None, None]);
    }

    #[test]
    fn triples_survive_what_users_report() {
        let want = vec![
            ["Radio City".to_string(), "located in".into(), "India".into()],
            ["Radio City".to_string(), "is".into(), "radio station".into()],
        ];
        let plain =
            r#"{"triples": [["Radio City", "located in", "India"], ["Radio City", "is", "radio station"]]}"#;
        assert_eq!(parse_triples(plain), want);
        assert_eq!(parse_triples(&format!("```json\n{plain}\n```")), want);
        assert_eq!(parse_triples(&format!("Here are the triples:\n{plain}\nLet me know!")), want);
        // An array instead of an object.
        assert_eq!(
            parse_triples(
                r#"[["Radio City", "located in", "India"], ["Radio City", "is", "radio station"]]"#
            ),
            want
        );
        // Renamed key and object items.
        let renamed = r#"{"triplets": [{"subject": "Radio City", "predicate": "located in", "object": "India"},
                           {"subject": "Radio City", "relation": "is", "object": "radio station"}]}"#;
        assert_eq!(parse_triples(renamed), want);
        // Truncated mid-triple: the complete ones are kept.
        let cut = r#"{"triples": [["Radio City", "located in", "India"], ["Radio City", "is", "radio station"], ["Radio City", "launch"#;
        assert_eq!(parse_triples(cut), want);
        // Python quotes; bad items (two elements, empty, nested junk) are dropped; duplicates once.
        assert_eq!(
            parse_triples("[['A', 'b', 'C'], ['x', 'y'], ['', 'r', 'o'], ['A', 'b', 'C']]"),
            vec![["A".to_string(), "b".into(), "C".into()]]
        );
        assert!(parse_triples("I could not find any triples.").is_empty());
    }

    #[test]
    fn real_smollm2_openie_and_ner_answers() {
        // SmolLM2-135M on the OpenIE prompt for "Radio City (Indian radio station)": prose, then
        // JSON of another shape, cut at max_tokens inside a repeated key. No triple in it.
        let a = "Title: Radio City (Indian radio station)\n\nJSON:\n{\n  \"title\": \"Radio City (Indian radio station)\",\n  \"content\": {\n    \"title\": \"Radio City (Indian radio station)\",\n    \"content\": {\n      \"title\": \"India\'s first private FM radio station\",\n      \"content\": \"Radio City (Indian radio station)\"\n    },\n    \"contentType\": \"json\",\n    \"contentType\": \"json\",\n    \"contentType";
        assert!(extract_json(a).is_some(), "the truncated JSON is repaired");
        assert!(parse_triples(a).is_empty());
        // The same model on the NER prompt: one sentence of prose, no list. A sentence is not an entity.
        let n = "The Playboy Club in Las Vegas is a luxury hotel located in the 11000 El Camino Ranch.";
        assert!(parse_entities(n).is_empty());
    }

    #[test]
    fn entities_and_answers() {
        assert_eq!(
            parse_entities(r#"{"named_entities": ["Playboy Club", "Hilton", "playboy club"]}"#),
            vec!["Playboy Club", "Hilton"]
        );
        assert_eq!(parse_entities("```json\n[\"A\", \"B\"\n"), vec!["A", "B"]);
        assert_eq!(parse_entities("```json\n[\"A\", \"B"), vec!["A"]);
        assert_eq!(parse_entities("1. Paris\n2. France, Europe"), vec!["Paris", "France", "Europe"]);
        assert_eq!(parse_answer("Thought: it is in Chicago.\nAnswer: **Chicago**."), "Chicago");
        assert_eq!(parse_answer("```json\n{\"answer\": \"1994\"}\n```"), "1994");
        assert_eq!(parse_answer("\n  yes\nbecause"), "yes");
        assert_eq!(parse_answer(""), "");
    }

    #[test]
    fn answers_where_lower_casing_changes_byte_lengths() {
        // 'İ' (2 bytes) lower-cases to "i̇" (3 bytes): offsets of a lower-cased copy are wrong.
        assert_eq!(parse_answer("İ answer:é"), "é");
        assert_eq!(parse_answer("İİİ answer: 703"), "703");
        // 'ẞ' (3 bytes) lower-cases to 'ß' (2 bytes): the copy is shorter.
        assert_eq!(parse_answer("ẞẞ Answer: Zürich"), "Zürich");
        assert_eq!(find_ci("İİ ANSWER: x", "answer:"), Some((5, 12)));
        assert_eq!(rfind_ci("a A a", "a"), Some((4, 5)));
        assert_eq!(find_ci("abc", ""), None);
        assert_eq!(find_ci("ab", "abc"), None);
    }

    #[test]
    fn think_blocks_are_stripped_before_every_parser() {
        let tiers = "<think>e1: irrelevant\ne2: irrelevant</think>\n{\"e1\": \"high\", \"e2\": \"direct\"}";
        assert_eq!(parse_tiers(tiers, 2), vec![Some(High), Some(Direct)]);
        assert_eq!(parse_answer("<think>Answer: WRONG</think>\nAnswer: 703"), "703");
        assert_eq!(parse_answer("<THINK>\nmaybe 12\n</THINK>703"), "703");
        // A server that strips the opening tag: the closing one still ends the reasoning.
        assert_eq!(parse_answer("Answer: WRONG\n</think>\n\nAnswer: 703"), "703");
        // Unterminated (cut at max_tokens): nothing in it is an answer.
        assert_eq!(parse_answer("<think>Answer: WRONG, let me check"), "");
        assert_eq!(parse_tiers("<think>e1: high", 1), vec![None]);
        assert_eq!(
            parse_triples("<think>[[\"A\", \"b\", \"C\"]]</think>[[\"X\", \"y\", \"Z\"]]"),
            vec![["X".to_string(), "y".into(), "Z".into()]]
        );
        assert_eq!(parse_entities("<think>[\"Draft\"]</think>[\"Paris\"]"), vec!["Paris"]);
        assert_eq!(strip_think("<think>a</think>b<think>c</think>d"), "bd");
        assert_eq!(strip_think("no tags"), "no tags");
    }
}
