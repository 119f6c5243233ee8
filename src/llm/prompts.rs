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

/// CatRAG's batched tiering prompt (one per seed): edges `e1` … `en`, answer one JSON object
/// `{"e1": "<tier>", …}` with tiers irrelevant / weak / high / direct. Token cap 12 per edge + 16.
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
    let user = format!(
        "Question: {query}\nSource entity: {seed}\nEdges:\n{list}\nReply with JSON like {{\"e1\": \"high\", \"e2\": \"irrelevant\"}}."
    );
    ChatRequest {
        messages: vec![ChatMessage::system(system), ChatMessage::user(user)],
        max_tokens: Some(16 + 12 * edges.len() as u32),
    }
}

/// Summarise an entity's facts (used when it has more than τ = 3) into one sentence. Cap 64.
pub fn summary_prompt(entity: &str, facts: &[String]) -> ChatRequest {
    let user = format!(
        "Summarise in one short sentence what these facts say about {entity}.\nFacts:\n- {}\nSummary:",
        facts.join("\n- ")
    );
    ChatRequest { messages: vec![ChatMessage::user(user)], max_tokens: Some(64) }
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
    }
}

/// Query NER: `{"named_entities": [...]}` of the question. Cap 96.
pub fn ner_prompt(query: &str) -> ChatRequest {
    let system = "List the named entities (people, places, organisations, works, dates) in the question. \
Reply with JSON {\"named_entities\": [...]} only.";
    ChatRequest {
        messages: vec![ChatMessage::system(system), ChatMessage::user(query.to_string())],
        max_tokens: Some(96),
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
    }
}
