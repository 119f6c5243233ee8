//! The prompts Cairn sends (CatRAG §3 edge tiering and target summaries; HippoRAG 2's OpenIE and
//! query NER; answers from the top-5 passages). Each builder returns a [`ChatRequest`] with a
//! token cap sized for its answer.

use super::{ChatMessage, ChatRequest};

/// One edge of a tiering batch: the neighbour's name, the facts joining it to the seed, and its
/// context (its facts joined, or their summary when it has more than τ = 3).
#[derive(Debug, Clone, PartialEq)]
pub struct TierEdge {
    /// The neighbour entity's name.
    pub target: String,
    /// Facts joining seed and neighbour ("s r o"), at most a few.
    pub linking_facts: Vec<String>,
    /// The neighbour's context.
    pub context: String,
}

/// The tier words the tiering prompt asks for, weakest first.
pub const TIER_WORDS: [&str; 4] = ["irrelevant", "weak", "high", "direct"];

/// CatRAG's batched tiering prompt (one per seed): edges `e1` … `en`, answer one JSON object
/// `{"e1": "<tier>", …}` with tiers irrelevant / weak / high / direct. Token cap 12 per edge + 16.
///
/// Fitted to small local models: the reply template lists every edge id of this batch (a
/// template with two example ids made Qwen2.5-Coder-1.5B copy the example and stop after two
/// edges), and the request carries a JSON schema of exactly these ids, each one of the four
/// tiers ([`tier_schema`]), which llama.cpp's server enforces as a grammar and other servers
/// may ignore.
pub fn tier_prompt(query: &str, seed: &str, edges: &[TierEdge]) -> ChatRequest {
    let mut list = String::new();
    for (i, e) in edges.iter().enumerate() {
        list.push_str(&format!(
            "e{}: {seed} -> {} | linking facts: {} | context of {}: {}\n",
            i + 1,
            e.target,
            e.linking_facts.join("; "),
            e.target,
            e.context
        ));
    }
    let system = "You judge knowledge-graph edges for answering a question. For each edge id, choose one tier: \
irrelevant (unrelated to the question), weak (loosely related), high (relevant, likely on the path to the answer), \
direct (states what the question asks). Reply with one JSON object mapping every edge id to its tier and nothing else.";
    let template: Vec<String> = (1..=edges.len()).map(|i| format!("\"e{i}\": \"<tier>\"")).collect();
    let user = format!(
        "Question: {query}\nSource entity: {seed}\nEdges:\n{list}\nReply with this JSON, each <tier> replaced by irrelevant, weak, high or direct:\n{{{}}}",
        template.join(", ")
    );
    ChatRequest {
        messages: vec![ChatMessage::system(system), ChatMessage::user(user)],
        max_tokens: Some(16 + 12 * edges.len() as u32),
        response_format: Some(tier_schema(edges.len())),
    }
}

/// OpenAI's `response_format` for a tier answer of `n` edges: a JSON object with exactly the
/// keys `e1` … `en`, in order, each one of [`TIER_WORDS`].
pub fn tier_schema(n: usize) -> serde_json::Value {
    let ids: Vec<String> = (1..=n).map(|i| format!("e{i}")).collect();
    let tier = serde_json::json!({"type": "string", "enum": TIER_WORDS});
    let properties: serde_json::Map<String, serde_json::Value> =
        ids.iter().map(|id| (id.clone(), tier.clone())).collect();
    serde_json::json!({
        "type": "json_schema",
        "json_schema": {
            "name": "edge_tiers",
            "strict": true,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": ids,
                "additionalProperties": false,
            },
        },
    })
}

/// Summarise an entity's facts (used when it has more than τ = 3) into one sentence. Cap 64.
pub fn summary_prompt(entity: &str, facts: &[String]) -> ChatRequest {
    let user = format!(
        "Summarise in one short sentence what these facts say about {entity}.\nFacts:\n- {}\nSummary:",
        facts.join("\n- ")
    );
    ChatRequest { messages: vec![ChatMessage::user(user)], max_tokens: Some(64), response_format: None }
}

/// HippoRAG 2's OpenIE prompt, shortened: triples of one passage as
/// `{"triples": [["subject", "relation", "object"], …]}`. Cap 512.
pub fn openie_prompt(title: &str, text: &str) -> ChatRequest {
    let system = "Extract factual triples from the passage. Each triple is [subject, relation, object] with \
named entities as subjects or objects where possible. Reply with JSON {\"triples\": [[...], ...]} only.";
    ChatRequest {
        messages: vec![
            ChatMessage::system(system),
            ChatMessage::user(format!("Title: {title}\nPassage: {text}")),
        ],
        max_tokens: Some(512),
        response_format: None,
    }
}

/// Query NER: `{"named_entities": [...]}` of the question. Cap 96.
pub fn ner_prompt(query: &str) -> ChatRequest {
    let system = "List the named entities (people, places, organisations, works, dates) in the question. \
Reply with JSON {\"named_entities\": [...]} only.";
    ChatRequest {
        messages: vec![ChatMessage::system(system), ChatMessage::user(query.to_string())],
        max_tokens: Some(96),
        response_format: None,
    }
}

/// Answer `query` from passages (title, text), HippoRAG's QA style: a short answer after
/// `Answer:`. Cap 48.
pub fn answer_prompt(query: &str, passages: &[(String, String)]) -> ChatRequest {
    let mut ctx = String::new();
    for (title, text) in passages {
        ctx.push_str(&format!("Wikipedia Title: {title}\n{text}\n\n"));
    }
    let system = "Answer the question from the passages with a few words only (a name, a date, yes or no). \
Write the final answer after 'Answer:'.";
    ChatRequest {
        messages: vec![
            ChatMessage::system(system),
            ChatMessage::user(format!("{ctx}Question: {query}\nAnswer:")),
        ],
        max_tokens: Some(48),
        response_format: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(t: &str) -> TierEdge {
        TierEdge {
            target: t.into(),
            linking_facts: vec![format!("S founded {t}")],
            context: format!("{t} is a firm"),
        }
    }

    #[test]
    fn the_tier_template_names_every_edge_and_the_schema_only_them() {
        let r = tier_prompt("Who founded C?", "S", &[edge("A"), edge("B"), edge("C")]);
        let user = &r.messages[1].content;
        assert!(
            user.ends_with(r#"{"e1": "<tier>", "e2": "<tier>", "e3": "<tier>"}"#),
            "the reply template lists e1 … e3: {user}"
        );
        assert!(user.contains("e3: S -> C | linking facts: S founded C | context of C: C is a firm"));
        assert_eq!(r.max_tokens, Some(16 + 36));
        let f = r.response_format.as_ref().unwrap();
        let schema = &f["json_schema"]["schema"];
        assert_eq!(schema["required"], serde_json::json!(["e1", "e2", "e3"]));
        assert_eq!(schema["additionalProperties"], serde_json::json!(false));
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["e1", "e2", "e3"]);
        assert_eq!(schema["properties"]["e1"]["enum"], serde_json::json!(TIER_WORDS));
        assert_eq!(r.without_format().response_format, None);
        assert_eq!(r.without_format().messages, r.messages);
    }

    #[test]
    fn only_the_tier_prompt_constrains_its_answer() {
        assert!(summary_prompt("A", &["A is a firm".into()]).response_format.is_none());
        assert!(answer_prompt("Q?", &[]).response_format.is_none());
        assert!(ner_prompt("Q?").response_format.is_none());
        assert!(openie_prompt("T", "x").response_format.is_none());
    }
}
