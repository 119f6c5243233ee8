//! Fact scoring and entity anchoring from the texts' tokens, for graphs embedded with the static
//! embedder (CatRAG §3 and HippoRAG 2 §3, "score every fact by cosine"; CatRAG §3, "Symbolic
//! Anchoring"; docs/method/spec.md §3).
//!
//! The static embedder's vector of a text is a normalised sum of table rows,
//! `v(f) = Σₜ rₜ / ‖Σₜ rₜ‖` over the text's WordPiece ids `t` without `[UNK]`
//! ([`StaticEmbedder::row_ids_into`]), each row `rₜ = sₜ·r̂ₜ` stored in `i8` with one scale. So
//! the cosine of a query `q` with a fact is `(Σₜ sₜ·(r̂ₜ·q)) / ‖Σₜ rₜ‖`: one dot product per
//! *distinct token* of the facts, then a sum over each fact's tokens. The graph of
//! 2wiki-corpus-6k has 47,602 facts of 8.7 tokens on average but only 16,657 distinct tokens,
//! so a query reads 16,657 rows (4.3 MB of `i8`) and 1.65 MB of token slots instead of 47,602
//! fact vectors (12.2 MB of `i8`). With the entity names below, the graph holds 7.9 MB for
//! its facts' and names' vectors (token rows 4.6, fact bags 2.2, name bags 1.1) instead of
//! 23.5 MB (`i8` fact rows 12.6, `i8` entity copy 10.9). The vectors are not quantised: the token dot products come from an integer scan
//! with the query as `i16` (error about 10⁻⁵ per cosine), and the texts that decide a result
//! (the best [`super::EXACT_TOP`] facts and the minimum; the candidates for the best entity)
//! are scored again in `f32`, so those equal the dot product of `q` with the embedder's vector
//! of the text up to the order of `f32` additions ([`TokenBags::cosines`],
//! [`TokenBags::best`]; the tests bound it by 10⁻⁶).
//!
//! The entity names are held the same way ([`BagSet::Entities`]), for anchoring a query mention
//! on its nearest entity, in place of the `f32` entity vectors (42.1 MB on 2wiki-corpus-6k) and
//! of their `i8` copy (10.9 MB); facts and names share one copy of each token's row. The work
//! that needs whole vectors (the synonym kNN, the saved synonym lists' cosines) makes each one
//! from its bag when it needs it ([`TokenBags::vectors`]), with the embedder's bits.
//!
//! Kept per text: its token slots, `1/‖Σₜ rₜ‖` (0 for a text with no known token, whose
//! vector is the zero vector) and its rows' L1 norm over that. Kept per distinct token: its
//! table row (`i8`), scale and L1 norm, copied from the table once, so the graph scores texts
//! without the embedder.

use super::quant::{dot_i8_f32, exact_band, row_dots, scaled_query, ROUNDING};
use crate::embed::{dot, ScoredRow, StaticEmbedder};
use crate::error::{Error, Result};

/// Texts (facts, entity names) as bags of the static embedder's table rows (module docs). Texts
/// are appended in order; entry `i` of [`TokenBags::cosines`] is text `i`.
///
/// Bags are grouped by their number of tokens: a query sums each group's bags with a loop of
/// one fixed length (the branch predictor learns it; each bag in a loop of its own length cost
/// about as much as the dot products), writing each text's cosine at its index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenBags {
    dim: usize,
    /// Slot → the table id it copies (distinct, in order of first use).
    ids: Vec<u32>,
    /// Table id → its slot (`u32::MAX` for none); as long as the table, filled as tokens come.
    slot_of: Vec<u32>,
    /// `[slots × dim]`: each slot's table row as stored (`i8`).
    rows: Vec<i8>,
    /// Per slot: the row's scale.
    scales: Vec<f32>,
    /// Per slot: `scale · Σ|r̂ᵢ|`, the row's L1 norm.
    l1: Vec<f32>,
    /// The bags of each [`BagSet`], by its index.
    sets: [Bags; 2],
}

/// Which texts: the graph keeps its facts and its entity names in one [`TokenBags`], so a token
/// both use has one copy of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BagSet {
    /// The fact texts ([`super::Fact::text`]), in fact id order.
    Facts = 0,
    /// The entity names, in entity ordinal order.
    Entities = 1,
}

/// One set's bags: `groups[l]` holds the texts of `l` tokens.
#[derive(Debug, Clone, Default, PartialEq)]
struct Bags {
    groups: Vec<BagGroup>,
}

/// The texts of one set whose bags have one length `l`, in order.
#[derive(Debug, Clone, Default, PartialEq)]
struct BagGroup {
    /// Text indices (fact ids, entity ordinals).
    texts: Vec<u32>,
    /// Per text: `1 / ‖Σₜ rₜ‖`, 0 when the sum is zero or not finite.
    inv_norms: Vec<f32>,
    /// Per text: `Σₜ sₜ‖r̂ₜ‖₁ / ‖Σₜ rₜ‖`, the L1 norm of its rows in the normalised vector's
    /// units, which bounds the integer scan's error ([`TokenBags::cosines`]).
    l1: Vec<f32>,
    /// `[texts × l]`: each text's token slots in text order, with repeats.
    slots: Vec<u32>,
}

impl TokenBags {
    /// No texts, rows of `dim` entries.
    pub fn with_dim(dim: usize) -> Self {
        TokenBags { dim, ..TokenBags::default() }
    }

    /// Dimension of the rows (the embedder's).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of texts of `set`.
    pub fn len(&self, set: BagSet) -> usize {
        self.sets[set as usize].groups.iter().map(|g| g.inv_norms.len()).sum()
    }

    /// True without texts in either set.
    pub fn is_empty(&self) -> bool {
        self.len(BagSet::Facts) == 0 && self.len(BagSet::Entities) == 0
    }

    /// Number of distinct tokens (rows copied from the table).
    pub fn distinct_tokens(&self) -> usize {
        self.ids.len()
    }

    /// Token occurrences over all texts of `set`.
    pub fn token_count(&self, set: BagSet) -> usize {
        self.sets[set as usize].groups.iter().map(|g| g.slots.len()).sum()
    }

    /// Heap bytes held: the rows, 16 bytes per distinct token, 4 per table row (the slot
    /// lookup), 4 per token occurrence and 12 per text.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity()
            + (self.ids.capacity() + self.slot_of.capacity() + self.scales.capacity() + self.l1.capacity())
                * 4
            + self.heap_bytes_of(BagSet::Facts)
            + self.heap_bytes_of(BagSet::Entities)
    }

    /// Heap bytes of `set`'s bags alone (4 per token occurrence and 12 per text); the rows are
    /// [`TokenBags::heap_bytes`] less both sets'.
    pub fn heap_bytes_of(&self, set: BagSet) -> usize {
        let groups = &self.sets[set as usize].groups;
        groups.capacity() * std::mem::size_of::<BagGroup>()
            + groups
                .iter()
                .map(|g| {
                    (g.texts.capacity() + g.inv_norms.capacity() + g.l1.capacity() + g.slots.capacity()) * 4
                })
                .sum::<usize>()
    }

    /// Release spare capacity (after the last [`TokenBags::extend`] of a build).
    pub fn shrink_to_fit(&mut self) {
        self.ids.shrink_to_fit();
        self.rows.shrink_to_fit();
        self.scales.shrink_to_fit();
        self.l1.shrink_to_fit();
        for g in self.sets.iter_mut().flat_map(|b| b.groups.iter_mut()) {
            g.texts.shrink_to_fit();
            g.inv_norms.shrink_to_fit();
            g.l1.shrink_to_fit();
            g.slots.shrink_to_fit();
        }
    }

    /// Append `texts` to `set` (its next indices, in order), tokenised with `embedder`, whose
    /// rows they copy. O(total tokens + new distinct tokens × dim). Each text's `1/‖Σₜ rₜ‖` is
    /// the embedder's (the same additions in its order), so [`BagVectors::vector_into`] gives
    /// the bits of [`crate::embed::Embedder::embed_batch`]'s vector of the text. On an error the
    /// texts before the failing one are kept and the failing one is not added.
    ///
    /// # Errors
    /// [`Error::Config`] when `embedder`'s dimension is not this one's; [`Error::Model`] when a
    /// token has no row (a tokenizer the table was not made for) or the set's indices pass
    /// `u32::MAX`.
    pub fn extend(&mut self, set: BagSet, embedder: &StaticEmbedder, texts: &[&str]) -> Result<()> {
        self.extend_cached(set, embedder, texts, &mut crate::embed::wordpiece::WordCache::new())
    }

    /// As [`TokenBags::extend`], reading and filling `cache` with each word's WordPiece ids: the
    /// same bags, with less tokenising when one cache serves every chunk of a graph's names and
    /// facts (the facts are made of the names' words).
    ///
    /// # Errors
    /// As [`TokenBags::extend`].
    pub fn extend_cached(
        &mut self,
        set: BagSet,
        embedder: &StaticEmbedder,
        texts: &[&str],
        cache: &mut crate::embed::wordpiece::WordCache,
    ) -> Result<()> {
        let dim = embedder.table().dims();
        if dim != self.dim {
            return Err(Error::Config(format!(
                "the graph holds {}-dimensional vectors and this embedder gives {dim}",
                self.dim
            )));
        }
        let vocab = embedder.table().vocab_size();
        if self.slot_of.len() < vocab {
            self.slot_of.resize(vocab, u32::MAX);
        }
        let (mut ids, mut slots, mut scratch) = (Vec::new(), Vec::new(), String::new());
        let mut sum = vec![0.0f32; dim];
        let bad = |message: String| Error::Model { what: "static embedder".into(), message };
        let mut next = self.len(set);
        for text in texts {
            let index = u32::try_from(next).map_err(|_| bad("more than 2³² texts".into()))?;
            embedder.row_ids_into(text, &mut scratch, Some(&mut *cache), &mut ids);
            sum.iter_mut().for_each(|x| *x = 0.0);
            let mut l1 = 0.0f32;
            slots.clear();
            for &id in &ids {
                let slot = match self.slot_of.get(id as usize) {
                    Some(&slot) if slot != u32::MAX => slot,
                    _ => {
                        let (row, scale) = embedder
                            .table()
                            .row_i8(id)
                            .ok_or_else(|| bad(format!("token {id} has no row in the table")))?;
                        let slot = self.ids.len() as u32;
                        self.ids.push(id);
                        self.rows.extend_from_slice(row);
                        self.scales.push(scale);
                        self.l1.push(scale * row.iter().map(|&x| f32::from(x).abs()).sum::<f32>());
                        self.slot_of[id as usize] = slot;
                        slot
                    }
                };
                // The same additions, in the same order, as the embedder's sum of rows.
                embedder.table().add_row(id, &mut sum);
                l1 += self.l1[slot as usize];
                slots.push(slot);
            }
            // As `l2_normalize`: the same norm and inverse.
            let norm = dot(&sum, &sum).sqrt();
            let inv = if norm > 0.0 && norm.is_finite() { 1.0 / norm } else { 0.0 };
            let groups = &mut self.sets[set as usize].groups;
            if groups.len() <= ids.len() {
                groups.resize_with(ids.len() + 1, BagGroup::default);
            }
            let group = &mut groups[ids.len()];
            group.slots.extend_from_slice(&slots);
            group.texts.push(index);
            group.inv_norms.push(inv);
            group.l1.push(l1 * inv);
            next += 1;
        }
        Ok(())
    }

    /// Cosine of `query` with every text of `set`, in order, as the dot product of `query` with
    /// the text's normalised sum of rows `(Σₜ sₜ·(r̂ₜ·q)) / ‖Σₜ rₜ‖` (module docs). A text with
    /// no known token scores 0. O(distinct tokens × dim + token occurrences).
    ///
    /// Each distinct token's dot product comes from an integer scan (the query as `i16` with
    /// scale `t`, as [`super::QuantizedRows`] does it: SSE2/AVX2 natively, simd128 in wasm), so
    /// a text's cosine is first known within `(t/2)·Σₜ sₜ‖r̂ₜ‖₁ / ‖Σₜ rₜ‖` (+ a rounding
    /// margin; about 10⁻⁵ for the bundled embedder). Every text that could be among the best
    /// [`super::EXACT_TOP`] or the minimum is then scored again with `f32` dot products of its
    /// tokens' rows, so the seed facts, their cosines and both ends of the min–max
    /// normalisation are the `f32` ones, the same bits in wasm and natively. A zero or
    /// non-finite query is scored in `f32` throughout.
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have this dimension.
    pub fn cosines(&self, set: BagSet, query: &[f32]) -> Result<Vec<f32>> {
        let n = self.len(set);
        let (mut out, mut err) = (vec![0.0f32; n], vec![0.0f32; n]);
        self.scan(set, query, |f, c, e| (out[f], err[f]) = (c, e))?;
        let (top_floor, min_ceil) = exact_band(&out, &err);
        let mut exact = vec![f32::NAN; self.ids.len()];
        self.each_bag(set, |f, inv, _, bag| {
            let (c, e) = (out[f], err[f]);
            if e > 0.0 && (c + e >= top_floor || c - e <= min_ceil || !c.is_finite()) {
                out[f] = self.exact_bag(bag, inv, query, &mut exact);
            }
        });
        Ok(out)
    }

    /// The text of `set` whose vector is most similar to `query` and its cosine, as
    /// [`crate::embed::VectorMatrix::top_k`]`(query, 1)` gives it over the embedder's vectors
    /// of the texts (ties to the lower text, a NaN score below every number, a text with no
    /// known token scoring 0), the cosine in `f32` up to the order of additions: the scan of
    /// [`TokenBags::cosines`] bounds every text's cosine, and only the texts whose upper bound
    /// reaches the best lower bound are scored again in `f32` (the best is always among them).
    /// `None` without texts.
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have this dimension.
    pub fn best(&self, set: BagSet, query: &[f32]) -> Result<Option<ScoredRow>> {
        let n = self.len(set);
        // Lower and upper bounds of each text's cosine (equal when scored in f32 throughout).
        let mut bounds = vec![(0.0f32, 0.0f32); n];
        self.scan(set, query, |f, c, e| bounds[f] = (c - e, c + e))?;
        let best_lower =
            bounds.iter().fold(f32::NEG_INFINITY, |m, &(lower, _)| if lower > m { lower } else { m });
        let mut exact = vec![f32::NAN; self.ids.len()];
        let mut best: Option<ScoredRow> = None;
        let mut consider = |row: usize, mut score: f32| {
            if score.is_nan() {
                score = f32::NEG_INFINITY;
            } else if score == 0.0 {
                score = 0.0;
            }
            let better = match best {
                None => true,
                Some(b) => score > b.score || (score == b.score && (row as u32) < b.row),
            };
            if better {
                best = Some(ScoredRow { row: row as u32, score });
            }
        };
        // Texts without a known token score 0 (the zero vector).
        if let Some(g) = self.sets[set as usize].groups.first() {
            for &f in &g.texts {
                consider(f as usize, 0.0);
            }
        }
        self.each_bag(set, |f, inv, _, bag| {
            let (lower, upper) = bounds[f];
            if !(upper >= best_lower) && lower.is_finite() && upper.is_finite() {
                return;
            }
            consider(f, self.exact_bag(bag, inv, query, &mut exact));
        });
        Ok(best)
    }

    /// Every text of `set` with at least one token from the token scan: `visit(text, cosine,
    /// error bound)`, the bound 0 when the query (zero or not finite) is scored in `f32`
    /// throughout.
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have this dimension.
    fn scan(&self, set: BagSet, query: &[f32], mut visit: impl FnMut(usize, f32, f32)) -> Result<()> {
        if query.len() != self.dim {
            return Err(Error::Config(format!(
                "a query vector of {} dimensions against the graph's vectors of {}",
                query.len(),
                self.dim
            )));
        }
        if self.dim == 0 {
            return Ok(());
        }
        match scaled_query(query, self.dim) {
            Some((q16, t, _)) => {
                let d: Vec<f32> = row_dots(&self.rows, self.dim, &q16)
                    .iter()
                    .zip(&self.scales)
                    .map(|(&x, &s)| s * t * x as f32)
                    .collect();
                self.each_bag(set, |f, inv, l1, bag| {
                    visit(f, bag_sum(bag, &d) * inv, 0.5 * t * l1 + ROUNDING)
                });
            }
            None => {
                let d: Vec<f32> = (0..self.ids.len()).map(|slot| self.exact_dot(slot, query)).collect();
                self.each_bag(set, |f, inv, _, bag| visit(f, bag_sum(bag, &d) * inv, 0.0));
            }
        }
        Ok(())
    }

    /// The vectors of `set`'s texts, made one at a time from their bags
    /// ([`BagVectors::vector_into`]), for work that needs whole vectors (the synonym kNN,
    /// deriving stored synonym cosines) without holding all of them. O(texts) to build the
    /// locator (8 bytes per text).
    pub fn vectors(&self, set: BagSet) -> BagVectors<'_> {
        let groups = &self.sets[set as usize].groups;
        let mut locate = vec![(0u32, 0u32); self.len(set)];
        for (len, g) in groups.iter().enumerate() {
            for (i, &t) in g.texts.iter().enumerate() {
                locate[t as usize] = (len as u32, i as u32);
            }
        }
        BagVectors { bags: self, groups, locate }
    }

    /// Text `text`'s vector of `set` into `out` (`dim` floats), as [`BagVectors::vector_into`]
    /// gives it, for one text: its bag is found by a binary search in each length's group
    /// (texts are appended in order), O(groups · log texts + tokens × dim), without
    /// [`TokenBags::vectors`]' locator. `false` (and `out` untouched) for a text past the set
    /// or an `out` of another length.
    pub fn vector_into(&self, set: BagSet, text: usize, out: &mut [f32]) -> bool {
        if out.len() != self.dim {
            return false;
        }
        let groups = &self.sets[set as usize].groups;
        let Ok(t) = u32::try_from(text) else { return false };
        for (len, g) in groups.iter().enumerate() {
            if let Ok(i) = g.texts.binary_search(&t) {
                self.write_vector(groups, len, i, out);
                return true;
            }
        }
        false
    }

    /// The normalised sum of the rows of the bag at position `i` of `groups[len]` into `out`,
    /// with the additions of `StaticTable::add_row` in the embedder's order (its bits).
    fn write_vector(&self, groups: &[BagGroup], len: usize, i: usize, out: &mut [f32]) {
        let dim = self.dim;
        out.fill(0.0);
        if len == 0 {
            return;
        }
        let g = &groups[len];
        for &slot in &g.slots[i * len..(i + 1) * len] {
            let slot = slot as usize;
            let s = self.scales[slot];
            // As `StaticTable::add_row`: the same product and addition per entry.
            for (a, &v) in out.iter_mut().zip(&self.rows[slot * dim..(slot + 1) * dim]) {
                *a += s * f32::from(v);
            }
        }
        let inv = g.inv_norms[i];
        out.iter_mut().for_each(|x| *x *= inv);
    }

    /// `sₜ · (r̂ₜ · q)` in `f32` for the token in `slot`.
    fn exact_dot(&self, slot: usize, query: &[f32]) -> f32 {
        self.scales[slot] * dot_i8_f32(&self.rows[slot * self.dim..(slot + 1) * self.dim], query)
    }

    /// A bag's cosine from `f32` token dot products, each made the first time a bag needs it
    /// (`cache`: one entry per slot, NaN until made).
    fn exact_bag(&self, bag: &[u32], inv: f32, query: &[f32], cache: &mut [f32]) -> f32 {
        for &slot in bag {
            let slot = slot as usize;
            if cache[slot].is_nan() {
                cache[slot] = self.exact_dot(slot, query);
            }
        }
        bag_sum(bag, cache) * inv
    }

    /// Call `visit(text, 1/‖Σₜ rₜ‖, l1, slots)` for every text with at least one token, group
    /// by group (each group's bags of one length in one loop).
    #[inline]
    fn each_bag(&self, set: BagSet, mut visit: impl FnMut(usize, f32, f32, &[u32])) {
        for (len, g) in self.sets[set as usize].groups.iter().enumerate().skip(1) {
            for (((&f, &inv), &l1), bag) in
                g.texts.iter().zip(&g.inv_norms).zip(&g.l1).zip(g.slots.chunks_exact(len))
            {
                visit(f as usize, inv, l1, bag);
            }
        }
    }
}

/// One set's text vectors made from their bags on demand ([`TokenBags::vectors`]).
#[derive(Debug, Clone)]
pub struct BagVectors<'a> {
    bags: &'a TokenBags,
    groups: &'a [BagGroup],
    /// Text → (its bag's length, its position in that length's group).
    locate: Vec<(u32, u32)>,
}

impl BagVectors<'_> {
    /// Number of texts.
    pub fn len(&self) -> usize {
        self.locate.len()
    }

    /// True without texts.
    pub fn is_empty(&self) -> bool {
        self.locate.is_empty()
    }

    /// Dimension of the vectors.
    pub fn dim(&self) -> usize {
        self.bags.dim
    }

    /// True when text `text`'s vector is the zero vector (no known token, or a sum of rows with
    /// no finite norm), without making it. O(1).
    pub fn is_zero(&self, text: usize) -> bool {
        let (len, i) = self.locate[text];
        len == 0 || self.groups[len as usize].inv_norms[i as usize] == 0.0
    }

    /// Write text `text`'s vector into `out` (`dim` floats): the normalised sum of its rows,
    /// made with the static embedder's additions in its order, so the bits of
    /// [`crate::embed::Embedder::embed_batch`]'s vector of the text (and of
    /// [`TokenBags::extend`]'s). O(tokens × dim). A text with no known token gives zeros.
    ///
    /// # Panics
    /// When `text ≥ len()` or `out.len() != dim()` (callers index within the set).
    pub fn vector_into(&self, text: usize, out: &mut [f32]) {
        let dim = self.bags.dim;
        assert_eq!(out.len(), dim, "a vector of {dim} floats");
        let (len, i) = self.locate[text];
        self.bags.write_vector(self.groups, len as usize, i as usize, out);
    }
}

/// `Σ d[slot]` over a bag's slots: two sums (even and odd positions, so consecutive additions
/// do not wait on each other) added at the end.
#[inline]
fn bag_sum(bag: &[u32], d: &[f32]) -> f32 {
    let (mut even, mut odd) = (0.0f32, 0.0f32);
    let mut pairs = bag.chunks_exact(2);
    for p in &mut pairs {
        even += d[p[0] as usize];
        odd += d[p[1] as usize];
    }
    if let [last] = pairs.remainder() {
        even += d[*last as usize];
    }
    even + odd
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::Embedder;

    use crate::embed::static_embedder::tiny_for_tests as tiny;

    #[test]
    fn cosines_by_hand() {
        let e = tiny();
        let mut bags = TokenBags::with_dim(3);
        // "red cars" = red + car + ##s: sum (1, 0, 1.5), norm √3.25. "zebra" is unknown, so it
        // has no token and scores 0; "red red" sums (2, 0, 0).
        bags.extend(BagSet::Facts, &e, &["red cars", "blue car", "zebra", "red red"]).unwrap();
        assert_eq!(bags.len(BagSet::Facts), 4);
        assert_eq!(bags.distinct_tokens(), 4); // red, car, ##s, blue
        assert_eq!(bags.token_count(BagSet::Facts), 3 + 2 + 0 + 2);
        let c = bags.cosines(BagSet::Facts, &[0.6, 0.8, 0.0]).unwrap();
        let want = [0.6 / 3.25f32.sqrt(), 0.8 / 5f32.sqrt(), 0.0, 0.6];
        for (got, want) in c.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{c:?}");
        }
        let c = bags.cosines(BagSet::Facts, &[0.0, 0.0, 1.0]).unwrap();
        let want = [1.5 / 3.25f32.sqrt(), 2.0 / 5f32.sqrt(), 0.0, 0.0];
        for (got, want) in c.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{c:?}");
        }
        assert!(matches!(bags.cosines(BagSet::Facts, &[1.0, 0.0]), Err(Error::Config(_))));
    }

    #[test]
    fn two_sets_share_their_rows() {
        let e = tiny();
        let mut both = TokenBags::with_dim(3);
        both.extend(BagSet::Entities, &e, &["red", "boat", "blue car"]).unwrap();
        both.extend(BagSet::Facts, &e, &["red cars", "blue car"]).unwrap();
        let mut facts = TokenBags::with_dim(3);
        facts.extend(BagSet::Facts, &e, &["red cars", "blue car"]).unwrap();
        // red, boat, blue, car, then ##s: one row each.
        assert_eq!(both.distinct_tokens(), 5);
        assert_eq!((both.len(BagSet::Entities), both.len(BagSet::Facts)), (3, 2));
        assert_eq!((both.token_count(BagSet::Entities), both.token_count(BagSet::Facts)), (4, 5));
        let q = [0.0, 0.6, 0.8];
        assert_eq!(both.cosines(BagSet::Facts, &q).unwrap(), facts.cosines(BagSet::Facts, &q).unwrap());
        // "boat" = (0, 0.5, 0.5) / ‖·‖: cosine 1.4/√2 = 0.98995 with q; "blue car" (0, 1, 2)/√5:
        // 2.2/√5 = 0.98387; "red": 0.
        let best = both.best(BagSet::Entities, &q).unwrap().unwrap();
        assert_eq!(best.row, 1);
        assert!((best.score - 1.4 / 2f32.sqrt()).abs() < 1e-6, "{best:?}");
        assert_eq!(facts.best(BagSet::Entities, &q).unwrap(), None);
        assert!(both.heap_bytes() > both.heap_bytes_of(BagSet::Facts) + both.heap_bytes_of(BagSet::Entities));
    }

    #[test]
    fn equal_to_the_embedders_vectors_and_extendable() {
        let e = StaticEmbedder::minilm().unwrap();
        let texts = [
            "Scott Derrickson nationality American",
            "Ed Wood directed Plan 9 from Outer Space",
            "Ed Wood Ed Wood Ed Wood",
            "",
            "   ",
            "Müller wurde in Köln geboren",
            "東京 is capital of 日本",
            "1987 award Grammy",
            "Stephen R. Covey wrote The 7 Habits of Highly Effective People",
        ];
        let mut whole = TokenBags::with_dim(e.dim());
        whole.extend(BagSet::Facts, &e, &texts).unwrap();
        // Appending in two batches gives the same bags.
        let mut parts = TokenBags::with_dim(e.dim());
        parts.extend(BagSet::Facts, &e, &texts[..4]).unwrap();
        parts.extend(BagSet::Facts, &e, &texts[4..]).unwrap();
        assert_eq!(parts, whole);
        // So does one word cache carried over three calls (the graph's chunks), and again with
        // every word already in it.
        let mut cached = TokenBags::with_dim(e.dim());
        let mut cache = crate::embed::wordpiece::WordCache::new();
        for part in [&texts[..3], &texts[3..6], &texts[6..]] {
            cached.extend_cached(BagSet::Facts, &e, part, &mut cache).unwrap();
        }
        assert_eq!(cached, whole);
        let mut again = TokenBags::with_dim(e.dim());
        again.extend_cached(BagSet::Facts, &e, &texts, &mut cache).unwrap();
        assert_eq!(again, whole);
        let vectors = e.embed_batch(&texts, &mut |_, _| {}).unwrap();
        // The vectors made from the bags, one text at a time, are the embedder's, bit for bit
        // (what the graph's synonym edges rely on).
        let mut named = TokenBags::with_dim(e.dim());
        named.extend(BagSet::Facts, &e, &texts[..2]).unwrap();
        named.extend(BagSet::Entities, &e, &texts).unwrap();
        let view = named.vectors(BagSet::Entities);
        assert_eq!(view.len(), texts.len());
        // The empty and blank texts (3, 4) have the zero vector, the others do not.
        let zero: Vec<bool> = (0..texts.len()).map(|i| view.is_zero(i)).collect();
        assert_eq!(zero, [false, false, false, true, true, false, false, false, false]);
        let mut one = vec![f32::NAN; e.dim()];
        assert!(!named.vector_into(BagSet::Entities, texts.len(), &mut one));
        assert!(!named.vector_into(BagSet::Entities, 0, &mut [0.0; 3]));
        for (i, want) in vectors.chunks_exact(e.dim()).enumerate() {
            view.vector_into(i, &mut one);
            assert!(one.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "text {i}");
            let mut single = vec![f32::NAN; e.dim()];
            assert!(named.vector_into(BagSet::Entities, i, &mut single));
            assert!(single.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "text {i}");
        }
        let mut queries: Vec<Vec<f32>> = ["Who directed Plan 9?", "German city of birth", "habits"]
            .iter()
            .map(|q| e.embed(q).unwrap())
            .collect();
        // A query that is not unit length and has mixed signs everywhere.
        queries.push((0..e.dim()).map(|i| ((i * 37 % 101) as f32 - 50.0) / 40.0).collect());
        queries.push(vec![0.0; e.dim()]);
        for q in &queries {
            let got = whole.cosines(BagSet::Facts, q).unwrap();
            assert_eq!(got.len(), texts.len());
            for (i, v) in vectors.chunks_exact(e.dim()).enumerate() {
                let want = dot(v, q);
                let scale = 1.0f32.max(q.iter().map(|x| x.abs()).sum::<f32>() / 8.0);
                assert!((got[i] - want).abs() <= 1e-5 * scale, "text {i}: {} against {want}", got[i]);
            }
        }
        // Texts with nothing to embed score exactly 0.
        let q = &queries[0];
        let got = whole.cosines(BagSet::Facts, q).unwrap();
        assert_eq!((got[3], got[4]), (0.0, 0.0));
        assert!(TokenBags::with_dim(e.dim()).cosines(BagSet::Facts, q).unwrap().is_empty());
    }
}

#[cfg(test)]
mod scan_tests {
    use super::*;
    use crate::embed::Embedder;

    /// Enough facts that most are scored by the integer scan alone: the best `EXACT_TOP` and the
    /// minimum must come out as the `f32` cosines, the rest within the scan's error bound.
    #[test]
    fn integer_scan_with_the_seed_facts_exact() {
        let e = StaticEmbedder::minilm().unwrap();
        let words = [
            "river", "Paris", "born", "directed", "film", "album", "singer", "Berlin", "war", "king",
            "queen", "football", "club", "novel", "author", "Müller", "1987", "capital", "bridge", "ocean",
        ];
        // 600 facts of 1 to 9 words, by a fixed linear congruential sequence.
        let mut x: u64 = 12345;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        let texts: Vec<String> = (0..600)
            .map(|_| {
                let n = 1 + next() % 9;
                (0..n).map(|_| words[next() % words.len()]).collect::<Vec<_>>().join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut bags = TokenBags::with_dim(e.dim());
        bags.extend(BagSet::Facts, &e, &refs).unwrap();
        let vectors = e.embed_batch(&refs, &mut |_, _| {}).unwrap();
        for query in ["film directed by a singer", "capital on a river", "1987 novel"] {
            let q = e.embed(query).unwrap();
            let got = bags.cosines(BagSet::Facts, &q).unwrap();
            let want: Vec<f32> = vectors.chunks_exact(e.dim()).map(|v| dot(v, &q)).collect();
            let mut order: Vec<usize> = (0..want.len()).collect();
            order.sort_by(|&a, &b| want[b].total_cmp(&want[a]));
            // The best EXACT_TOP (less a margin for ties at the edge) and the minimum: f32.
            for &i in order[..super::super::EXACT_TOP - 4].iter().chain([order.last().unwrap()]) {
                assert!((got[i] - want[i]).abs() <= 1e-6, "{query}: fact {i} {} against {}", got[i], want[i]);
            }
            // Every other fact within the integer scan's bound (about 10⁻⁵; the margin is 10⁻⁴).
            let mut approximate = 0;
            for i in 0..want.len() {
                assert!((got[i] - want[i]).abs() <= 2e-4, "{query}: fact {i} {} against {}", got[i], want[i]);
                approximate += usize::from((got[i] - want[i]).abs() > 1e-6);
            }
            // The scan did leave some facts approximate (else this test checks nothing of it).
            assert!(approximate > 0, "{query}");
        }
    }

    /// The nearest text to a query, as the `f32` scan of the embedder's vectors finds it.
    #[test]
    fn best_equals_the_f32_scan() {
        let e = StaticEmbedder::minilm().unwrap();
        let names = [
            "Stephen R. Covey",
            "Steven Covey",
            "Harlem",
            "Harlem Nights",
            "Mall Cops: Mall of America",
            "",
            "Letitia Green Stevenson",
            "Orlams",
            "Köln",
            "Cologne",
            "1987",
            "Ed Wood",
            "Edward Wood Jr.",
            "Plan 9 from Outer Space",
            "American",
            "Canadian-American",
        ];
        // Many names, so that most are ruled out by the integer scan's bounds alone.
        let mut texts: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        for i in 0..400 {
            texts.push(format!("{} {}", names[i % names.len()], names[(i * 7 + 3) % names.len()]));
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut bags = TokenBags::with_dim(e.dim());
        bags.extend(BagSet::Facts, &e, &refs).unwrap();
        let m = crate::embed::VectorMatrix::from_rows(e.dim(), e.embed_batch(&refs, &mut |_, _| {}).unwrap())
            .unwrap();
        for mention in ["Steven Covey", "Orlam", "Mall Cop", "Koln", "Edward Wood", "zzzz"] {
            let q = e.embed(mention).unwrap();
            let want = m.top_k(&q, 1).unwrap()[0];
            let got = bags.best(BagSet::Facts, &q).unwrap().unwrap();
            assert!((got.score - want.score).abs() <= 1e-6, "{mention}: {got:?} against {want:?}");
            // The same text, unless another is within rounding of it.
            let other = m.row(got.row as usize).map(|v| dot(v, &q)).unwrap();
            assert!(
                got.row == want.row || (other - want.score).abs() <= 1e-6,
                "{mention}: {got:?} against {want:?}"
            );
        }
        // A zero query: every text scores 0, the first wins.
        let zero = vec![0.0; e.dim()];
        assert_eq!(bags.best(BagSet::Facts, &zero).unwrap(), Some(ScoredRow { row: 0, score: 0.0 }));
        // Only texts without a known token: they score 0; none at all: None.
        let mut empty = TokenBags::with_dim(e.dim());
        assert_eq!(empty.best(BagSet::Facts, &zero).unwrap(), None);
        empty.extend(BagSet::Facts, &e, &["", "  "]).unwrap();
        let q = e.embed("Covey").unwrap();
        assert_eq!(empty.best(BagSet::Facts, &q).unwrap(), Some(ScoredRow { row: 0, score: 0.0 }));
        assert!(matches!(bags.best(BagSet::Facts, &[1.0]), Err(Error::Config(_))));
    }
}
