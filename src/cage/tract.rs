//! The trained CAGE encoder run by tract (cargo feature `cage`): the int8 ONNX models of
//! `assets/cage/` (`rgcn-int8.onnx`, `gcn-int8.onnx`) made by `tools/train_cage.py`.
//!
//! Inputs `features` `[batch, nodes, 256]` and `adjacency` `[batch, channels, nodes, nodes]`
//! (float32, [`super::GraphBatch`]), output `z` `[batch, 128]`; weights are int8 behind ONNX
//! `DequantizeLinear`. The same code runs natively and in wasm.

use std::sync::Arc;

use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

use super::{GraphBatch, GraphEncoder};
use crate::error::{Error, Result};

type Plan = Arc<TypedRunnableModel>;

/// A CAGE graph encoder loaded from ONNX bytes and optimised by tract.
pub struct RgcnModel {
    plan: Plan,
    feature_dim: usize,
    channels: usize,
    dim: usize,
    fingerprint: u32,
}

impl std::fmt::Debug for RgcnModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RgcnModel")
            .field("feature_dim", &self.feature_dim)
            .field("channels", &self.channels)
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

fn model_error(message: impl Into<String>) -> Error {
    Error::Model { what: "CAGE graph encoder".into(), message: message.into() }
}

fn tract_error(context: &str, e: &TractError) -> Error {
    model_error(format!("{context}: {e:#}"))
}

fn fixed(fact: &InferenceFact, axis: usize) -> Option<usize> {
    fact.shape
        .dims()
        .nth(axis)
        .and_then(|d| d.concretize())
        .and_then(|d| d.as_i64())
        .and_then(|d| usize::try_from(d).ok())
}

impl RgcnModel {
    /// The R-GCN shipped in the crate (`assets/cage/rgcn-int8.onnx`, 10 channels).
    ///
    /// # Errors
    /// As [`RgcnModel::from_onnx_bytes`] (never, for the shipped file).
    pub fn bundled_rgcn() -> Result<RgcnModel> {
        Self::from_onnx_bytes(include_bytes!("../../assets/cage/rgcn-int8.onnx"))
    }

    /// The diversity-trained (GraphCL) R-GCN shipped for the `graphcl` ablation
    /// (`assets/cage/rgcn-graphcl-int8.onnx`, 10 channels).
    ///
    /// # Errors
    /// As [`RgcnModel::from_onnx_bytes`].
    pub fn bundled_graphcl() -> Result<RgcnModel> {
        Self::from_onnx_bytes(include_bytes!("../../assets/cage/rgcn-graphcl-int8.onnx"))
    }

    /// The plain-GCN ablation shipped in the crate (`assets/cage/gcn-int8.onnx`, 2 channels).
    ///
    /// # Errors
    /// As [`RgcnModel::from_onnx_bytes`].
    pub fn bundled_gcn() -> Result<RgcnModel> {
        Self::from_onnx_bytes(include_bytes!("../../assets/cage/gcn-int8.onnx"))
    }

    /// Load a CAGE encoder from ONNX bytes: inputs `features` `[batch, nodes, F]` and
    /// `adjacency` `[batch, C, nodes, nodes]` with fixed F and C, output `[batch, H]`.
    ///
    /// # Errors
    /// [`Error::Model`] when the bytes are not such an ONNX model tract can optimise.
    pub fn from_onnx_bytes(bytes: &[u8]) -> Result<RgcnModel> {
        if bytes.is_empty() {
            return Err(model_error("no bytes (is the model file empty?)"));
        }
        let mut model = onnx()
            .model_for_read(&mut &bytes[..])
            .map_err(|e| tract_error("not a readable ONNX model", &e))?;
        let (f_fact, a_fact) = (
            model.input_fact(0).map_err(|e| tract_error("reading input 0", &e))?.clone(),
            model.input_fact(1).map_err(|e| tract_error("reading input 1", &e))?.clone(),
        );
        let (Some(feature_dim), Some(channels)) = (fixed(&f_fact, 2), fixed(&a_fact, 1)) else {
            return Err(model_error(format!(
                "expected inputs features [batch, nodes, F] and adjacency [batch, C, nodes, nodes], found {f_fact:?} and {a_fact:?}"
            )));
        };
        let batch = model.symbols.sym("batch");
        let nodes = model.symbols.sym("nodes");
        model
            .set_input_fact(0, f32::fact([batch.to_dim(), nodes.to_dim(), feature_dim.to_dim()]).into())
            .map_err(|e| tract_error("setting the input shapes", &e))?;
        model
            .set_input_fact(
                1,
                f32::fact([batch.to_dim(), channels.to_dim(), nodes.to_dim(), nodes.to_dim()]).into(),
            )
            .map_err(|e| tract_error("setting the input shapes", &e))?;
        let typed = model.into_optimized().map_err(|e| tract_error("optimising the graph", &e))?;
        let out = typed.output_fact(0).map_err(|e| tract_error("reading the output", &e))?;
        let dim =
            if out.rank() == 2 { out.shape[1].as_i64().and_then(|d| usize::try_from(d).ok()) } else { None };
        let Some(dim) = dim.filter(|&d| d > 0) else {
            return Err(model_error(format!("expected an output of shape [batch, H], found {out:?}")));
        };
        let plan = typed.into_runnable().map_err(|e| tract_error("planning the graph", &e))?;
        Ok(RgcnModel { plan, feature_dim, channels, dim, fingerprint: crc32fast::hash(bytes) })
    }
}

impl GraphEncoder for RgcnModel {
    fn dim(&self) -> usize {
        self.dim
    }

    fn channels(&self) -> usize {
        self.channels
    }

    fn feature_dim(&self) -> usize {
        self.feature_dim
    }

    fn fingerprint(&self) -> u32 {
        self.fingerprint
    }

    fn encode(&self, batch: &GraphBatch) -> Result<Vec<f32>> {
        if batch.batch == 0 {
            return Ok(Vec::new());
        }
        if batch.feature_dim != self.feature_dim || batch.channels != self.channels {
            return Err(model_error(format!(
                "the batch has {}-d features and {} channels; the model takes {} and {}",
                batch.feature_dim, batch.channels, self.feature_dim, self.channels
            )));
        }
        let (b, n) = (batch.batch, batch.nodes);
        let x = Tensor::from_shape(&[b, n, self.feature_dim], &batch.features)
            .map_err(|e| tract_error("building the features", &e))?;
        let a = Tensor::from_shape(&[b, self.channels, n, n], &batch.adjacency)
            .map_err(|e| tract_error("building the adjacency", &e))?;
        let result =
            self.plan.run(tvec![x.into(), a.into()]).map_err(|e| tract_error("running the model", &e))?;
        let z = result
            .first()
            .ok_or_else(|| model_error("the model returned no output"))?
            .to_plain_array_view::<f32>()
            .map_err(|e| tract_error("reading the output", &e))?;
        if z.shape() != [b, self.dim] {
            return Err(model_error(format!(
                "expected an output of shape [{b}, {}], got {:?}",
                self.dim,
                z.shape()
            )));
        }
        Ok(z.iter().copied().collect())
    }
}
