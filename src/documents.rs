//! PDF and Word (.docx) documents as text, for `cairn index` (native only): the text that the
//! page's reader (`www/ui/documents.js`) makes of the same file, so that
//! [`crate::corpus::split_document`] (which the page's `Engine.addDocument` runs on it) gives the
//! same passages in the CLI and in the page.
//!
//! The text is Markdown-like, as the splitter reads it: a heading is a `#` line, a paragraph is
//! one line, a blank line after each; a paragraph line that would read as a heading gets a
//! backslash (`\# …`).
//!
//! - **DOCX** ([`docx_text`]): the page converts the file with mammoth (its default style map)
//!   and reads the HTML; this reader walks the same XML elements mammoth reads and ignores the
//!   ones it ignores. A paragraph styled `Heading 1`–`Heading 6` (style id `Heading1`…, or style
//!   name `heading N` in any case; `Heading` alone is level 1) is a heading; every other
//!   paragraph, list item and table cell paragraph is a paragraph. Runs, hyperlinks, tracked
//!   insertions, content controls and text boxes (placed after their paragraph) are read;
//!   deleted text, field codes, comments and images are not. A footnote or endnote reference is
//!   `[N]` (numbered in reference order); the notes follow the body, the last paragraph of each
//!   ending in `↑`, as mammoth writes them.
//! - **PDF** ([`pdf_text`]): each page is a section titled `page N` (pdf.js's reading order is
//!   the page's content order; so is pdf-extract's); the page's lines form one paragraph, which
//!   the splitter cuts at sentences. Ligatures and other compatibility characters are
//!   normalised as pdf.js normalises them. The text layer is read with [`pdf_extract`] (on
//!   `lopdf`), whose spacing thresholds and glyph tables are not pdf.js's: on real files most
//!   pages give the same text and some differ in a space or a symbol (docs/method/ux.md has
//!   the figures: 98.8–99.9% of words in common on three Debian-shipped PDFs).
//!
//! Passage titles are then `"file name › heading"` (DOCX) and `"file name › page N"` (PDF), as
//! in the page.

use std::io::Read;
use std::path::Path;

/// A document kind this module reads, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// `.pdf`
    Pdf,
    /// `.docx` (Office Open XML word processing; not the older binary `.doc`)
    Docx,
}

impl DocumentKind {
    /// The kind of `path` by its extension (any case), or `None`.
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "pdf" => Some(Self::Pdf),
            "docx" => Some(Self::Docx),
            _ => None,
        }
    }
}

/// Why a document could not be read: one sentence, without the file name (the caller names the
/// file), worded as the page words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DocumentError(pub String);

/// A part of a .docx archive larger than this (decompressed) is refused: a 256 MiB
/// `document.xml` is far past any real document and would otherwise be read whole into memory
/// (a zip bomb).
pub const MAX_DOCX_PART_BYTES: u64 = 256 << 20;

/// One character-level whitespace test as JavaScript's `\s` (the page's `collapse`): Unicode
/// White_Space without U+0085, plus U+FEFF.
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// `s` with its whitespace runs made one space and trimmed (the page's `collapse`).
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(js_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A paragraph line: a backslash before one that would read as a `#` heading (the page's
/// `paragraphLine`: `^#{1,6}(\s|$)`).
fn paragraph_line(s: &str) -> String {
    let hashes = s.bytes().take_while(|&b| b == b'#').count();
    let rest = &s[hashes..];
    if (1..=6).contains(&hashes) && rest.chars().next().map_or(true, js_space) {
        format!("\\{s}")
    } else {
        s.to_string()
    }
}

/// A heading line of `level` (1–6) for `text` (the page's `headingLine`: trailing `#`s
/// dropped, then trimmed).
fn heading_line(level: usize, text: &str) -> String {
    let t = text.trim_end_matches('#').trim_matches(js_space);
    format!("{} {t}", "#".repeat(level))
}

/// A block of a document's text, before it is written as lines.
#[derive(Debug, Clone, PartialEq)]
enum Block {
    Heading(usize, String),
    Paragraph(String),
}

/// The text lines of `blocks` as the page's `htmlToText` writes them: each non-empty block one
/// line and a blank line, joined by `\n`.
fn blocks_text(blocks: &[Block]) -> String {
    let mut out: Vec<String> = Vec::new();
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                let t = collapse(text);
                if !t.is_empty() {
                    out.push(heading_line(*level, &t));
                    out.push(String::new());
                }
            }
            Block::Paragraph(text) => {
                let t = collapse(text);
                if !t.is_empty() {
                    out.push(paragraph_line(&t));
                    out.push(String::new());
                }
            }
        }
    }
    out.join("\n")
}

// ---------------------------------------------------------------------------------------------
// DOCX

/// The text of a .docx file (module docs), as the page's `docxToText` makes it.
///
/// # Errors
/// [`DocumentError`] when the bytes are not a zip archive, the archive has no main document
/// part, a part is not well-formed XML or is larger than [`MAX_DOCX_PART_BYTES`].
pub fn docx_text(bytes: &[u8]) -> Result<String, DocumentError> {
    let not_docx = |why: String| DocumentError(format!("not a Word (.docx) file that can be read ({why})"));
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|_| not_docx("it is not a zip archive, as every .docx is".into()))?;
    // the main part: the package relationship of type officeDocument (word/document.xml by
    // convention), as mammoth finds it
    let package_rels = read_part(&mut zip, "_rels/.rels").map_err(not_docx)?;
    let main = match &package_rels {
        Some(x) => relationship_target(x, "", "/officeDocument").map_err(not_docx)?,
        None => None,
    }
    .unwrap_or_else(|| "word/document.xml".to_string());
    let Some(document) = read_part(&mut zip, &main).map_err(not_docx)? else {
        return Err(not_docx(format!("it has no main document part ({main})")));
    };
    // the main part's relationships: where its styles, footnotes and endnotes are
    let (dir, file) = main.rsplit_once('/').unwrap_or(("", main.as_str()));
    let rels_path =
        if dir.is_empty() { format!("_rels/{file}.rels") } else { format!("{dir}/_rels/{file}.rels") };
    let doc_rels = read_part(&mut zip, &rels_path).map_err(not_docx)?;
    let target = |kind: &str, default: &str| -> Result<String, String> {
        let found = match &doc_rels {
            Some(x) => relationship_target(x, dir, kind)?,
            None => None,
        };
        Ok(found.unwrap_or_else(|| default.to_string()))
    };
    let styles_path = target("/styles", "word/styles.xml").map_err(not_docx)?;
    let footnotes_path = target("/footnotes", "word/footnotes.xml").map_err(not_docx)?;
    let endnotes_path = target("/endnotes", "word/endnotes.xml").map_err(not_docx)?;
    let styles = read_part(&mut zip, &styles_path).map_err(not_docx)?;
    let footnotes = read_part(&mut zip, &footnotes_path).map_err(not_docx)?;
    let endnotes = read_part(&mut zip, &endnotes_path).map_err(not_docx)?;

    fn xml<'a>(name: &str, text: &'a str) -> Result<roxmltree::Document<'a>, DocumentError> {
        let opts = roxmltree::ParsingOptions { allow_dtd: true, ..roxmltree::ParsingOptions::default() };
        roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
            DocumentError(format!(
                "not a Word (.docx) file that can be read ({name} is not well-formed XML: {e})"
            ))
        })
    }
    let document = xml(&main, &document)?;
    let styles = styles.as_deref().map(|s| xml(&styles_path, s)).transpose()?;
    let footnotes = footnotes.as_deref().map(|s| xml(&footnotes_path, s)).transpose()?;
    let endnotes = endnotes.as_deref().map(|s| xml(&endnotes_path, s)).transpose()?;

    let mut reader = DocxReader::default();
    if let Some(styles) = &styles {
        reader.read_styles(styles.root_element());
    }
    for (kind, notes) in [(NoteKind::Footnote, &footnotes), (NoteKind::Endnote, &endnotes)] {
        if let Some(notes) = notes {
            reader.read_notes(kind, notes.root_element());
        }
    }
    let mut blocks = Vec::new();
    if let Some(body) = document.root_element().children().find(|n| is_w(n, "body")) {
        for child in body.children() {
            reader.walk(child, &mut blocks, None);
        }
    }
    // the notes, in reference order, after the body (mammoth's `<ol>` of notes); a note
    // referenced from a note is read too, after the others
    let mut i = 0;
    while i < reader.note_refs.len() {
        let key = reader.note_refs[i].clone();
        i += 1;
        let Some(note) = reader.notes.get(&key).cloned() else { continue };
        let mut note_blocks = Vec::new();
        for child in note {
            reader.walk_owned(&child, &mut note_blocks);
        }
        // the back link joins the note's last paragraph (mammoth's non-fresh `<p>`), or is a
        // paragraph of its own after a heading or table
        match note_blocks.last_mut() {
            Some(Block::Paragraph(text)) => text.push_str(" ↑"),
            _ => note_blocks.push(Block::Paragraph(" ↑".into())),
        }
        blocks.extend(note_blocks);
    }
    Ok(blocks_text(&blocks))
}

/// The text of part `name` of the archive, `None` when there is no such part.
fn read_part(
    zip: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<String>, String> {
    let name = name.trim_start_matches('/');
    let mut file = match zip.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(format!("{name}: {e}")),
    };
    if file.size() > MAX_DOCX_PART_BYTES {
        return Err(format!("{name} is {} MiB, larger than a document can be", file.size() >> 20));
    }
    let mut bytes = Vec::new();
    // `take` also bounds a part whose header lies about its size
    (&mut file).take(MAX_DOCX_PART_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
    if bytes.len() as u64 > MAX_DOCX_PART_BYTES {
        return Err(format!("{name} is larger than a document can be"));
    }
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    String::from_utf8(bytes).map(Some).map_err(|_| format!("{name} is not UTF-8 text"))
}

/// The target of the first relationship in `rels` (a `.rels` part's XML) whose type ends with
/// `type_suffix`, resolved against folder `dir` of the part the relationships belong to
/// (`word` for `word/_rels/document.xml.rels`); a target starting with `/` is from the root.
fn relationship_target(rels: &str, dir: &str, type_suffix: &str) -> Result<Option<String>, String> {
    let doc = roxmltree::Document::parse(rels)
        .map_err(|e| format!("a relationships part is not well-formed XML: {e}"))?;
    let found = doc.root_element().children().filter(|n| n.is_element()).find_map(|n| {
        let ty = n.attribute("Type")?;
        ty.ends_with(type_suffix).then(|| n.attribute("Target")).flatten()
    });
    Ok(found.map(|t| match t.strip_prefix('/') {
        Some(abs) => abs.to_string(),
        None if dir.is_empty() => t.to_string(),
        None => format!("{dir}/{t}"),
    }))
}

/// The WordprocessingML namespaces: transitional and strict (mammoth reads both).
const W_NAMESPACES: [&str; 2] = [
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main",
];
const MC_NAMESPACE: &str = "http://schemas.openxmlformats.org/markup-compatibility/2006";
const V_NAMESPACE: &str = "urn:schemas-microsoft-com:vml";

fn is_w(n: &roxmltree::Node, name: &str) -> bool {
    n.is_element()
        && n.tag_name().name() == name
        && n.tag_name().namespace().is_some_and(|ns| W_NAMESPACES.contains(&ns))
}

fn w_attr<'a>(n: &roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    n.attributes()
        .find(|a| a.name() == name && a.namespace().is_some_and(|ns| W_NAMESPACES.contains(&ns)))
        .map(|a| a.value())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum NoteKind {
    Footnote,
    Endnote,
}

/// A note's body as owned elements (its XML document is borrowed only while notes are read).
#[derive(Debug, Clone)]
struct OwnedElement {
    /// `Some(w local name)` for a WordprocessingML element, `None` for another namespace's.
    w_name: Option<String>,
    /// VML / markup-compatibility local name, for text boxes and alternate content.
    other: Option<String>,
    attrs: Vec<(String, String)>,
    text: Option<String>,
    children: Vec<OwnedElement>,
}

impl OwnedElement {
    fn from_node(n: roxmltree::Node) -> Self {
        let ns = n.tag_name().namespace();
        let w = ns.is_some_and(|ns| W_NAMESPACES.contains(&ns));
        let other =
            (ns == Some(MC_NAMESPACE) || ns == Some(V_NAMESPACE)).then(|| n.tag_name().name().to_string());
        OwnedElement {
            w_name: w.then(|| n.tag_name().name().to_string()),
            other,
            attrs: n
                .attributes()
                .filter(|a| a.namespace().is_some_and(|ns| W_NAMESPACES.contains(&ns)))
                .map(|a| (a.name().to_string(), a.value().to_string()))
                .collect(),
            text: (w && n.tag_name().name() == "t").then(|| n.text().unwrap_or("").to_string()),
            children: n.children().filter(|c| c.is_element()).map(OwnedElement::from_node).collect(),
        }
    }
}

/// Reads a document's body as mammoth does (module docs).
#[derive(Default)]
struct DocxReader {
    /// Paragraph style id → style name (`styles.xml`).
    style_names: std::collections::HashMap<String, String>,
    /// Footnote and endnote bodies by id (separators left out, as mammoth leaves them).
    notes: std::collections::HashMap<(NoteKind, String), Vec<OwnedElement>>,
    /// Note references in the order they appear: the notes' numbers and order.
    note_refs: Vec<(NoteKind, String)>,
    /// The contents of paragraphs whose mark is deleted, which mammoth joins to the next one.
    deleted: Vec<OwnedElement>,
}

/// An element as the walker sees it, from the body (borrowed) or a note (owned).
trait Element: Sized {
    fn w_name(&self) -> Option<&str>;
    fn other_name(&self) -> Option<&str>;
    fn attr(&self, name: &str) -> Option<&str>;
    fn t_text(&self) -> Option<&str>;
    fn kids(&self) -> Vec<Self>;
    fn owned(&self) -> OwnedElement;
}

impl<'a, 'i> Element for roxmltree::Node<'a, 'i> {
    fn w_name(&self) -> Option<&str> {
        let ns = self.tag_name().namespace();
        (self.is_element() && ns.is_some_and(|ns| W_NAMESPACES.contains(&ns))).then(|| self.tag_name().name())
    }
    fn other_name(&self) -> Option<&str> {
        let ns = self.tag_name().namespace();
        (self.is_element() && (ns == Some(MC_NAMESPACE) || ns == Some(V_NAMESPACE)))
            .then(|| self.tag_name().name())
    }
    fn attr(&self, name: &str) -> Option<&str> {
        w_attr(self, name)
    }
    fn t_text(&self) -> Option<&str> {
        (self.w_name() == Some("t")).then(|| self.text().unwrap_or(""))
    }
    fn kids(&self) -> Vec<Self> {
        self.children().filter(|c| c.is_element()).collect()
    }
    fn owned(&self) -> OwnedElement {
        OwnedElement::from_node(*self)
    }
}

impl Element for OwnedElement {
    fn w_name(&self) -> Option<&str> {
        self.w_name.as_deref()
    }
    fn other_name(&self) -> Option<&str> {
        self.other.as_deref()
    }
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    fn t_text(&self) -> Option<&str> {
        self.text.as_deref()
    }
    fn kids(&self) -> Vec<Self> {
        self.children.clone()
    }
    fn owned(&self) -> OwnedElement {
        self.clone()
    }
}

/// The heading level mammoth's default style map gives a paragraph style: `Heading1`…`Heading6`
/// and `Heading` by style id (exact), `Heading N` and `Heading` by style name (any case).
fn heading_level(style_id: Option<&str>, style_name: Option<&str>) -> Option<usize> {
    let level = |s: &str, sep: &str| -> Option<usize> {
        let rest = s.strip_prefix("Heading")?;
        if rest.is_empty() {
            return Some(1);
        }
        let n = rest.strip_prefix(sep)?;
        let n: usize = n.parse().ok().filter(|n| (1..=6).contains(n))?;
        (n.to_string() == rest[sep.len()..]).then_some(n)
    };
    if let Some(n) = style_id.and_then(|id| level(id, "")) {
        return Some(n);
    }
    let name = style_name?;
    // mammoth compares style names case-insensitively: "Heading 1", "heading 1", "HEADING 1"
    let mut cased = name.to_ascii_lowercase();
    if let Some(first) = cased.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    level(&cased, " ")
}

impl DocxReader {
    fn read_styles(&mut self, root: roxmltree::Node) {
        for style in root.children().filter(|n| is_w(n, "style")) {
            if w_attr(&style, "type") != Some("paragraph") {
                continue;
            }
            let (Some(id), Some(name)) = (
                w_attr(&style, "styleId"),
                style.children().find(|n| is_w(n, "name")).and_then(|n| w_attr(&n, "val")),
            ) else {
                continue;
            };
            self.style_names.insert(id.to_string(), name.to_string());
        }
    }

    fn read_notes(&mut self, kind: NoteKind, root: roxmltree::Node) {
        let tag = match kind {
            NoteKind::Footnote => "footnote",
            NoteKind::Endnote => "endnote",
        };
        for note in root.children().filter(|n| is_w(n, tag)) {
            if matches!(w_attr(&note, "type"), Some("separator" | "continuationSeparator")) {
                continue;
            }
            let Some(id) = w_attr(&note, "id") else { continue };
            let body = note.children().filter(|c| c.is_element()).map(OwnedElement::from_node).collect();
            self.notes.insert((kind, id.to_string()), body);
        }
    }

    fn walk_owned(&mut self, e: &OwnedElement, out: &mut Vec<Block>) {
        self.walk(e.clone(), out, None);
    }

    /// Read element `e`: a paragraph is pushed to `out` (then what it holds in text boxes);
    /// inline content is appended to `para` (the paragraph being read, and whether it is a
    /// heading: a line break adds a space to a paragraph and nothing to a heading, as
    /// `textContent` reads a `<br>`). Elements mammoth does not read are skipped whole.
    fn walk<E: Element>(&mut self, e: E, out: &mut Vec<Block>, para: Option<(&mut String, bool)>) {
        if let Some(other) = e.other_name() {
            match other {
                // mammoth reads alternate content's fallback
                "AlternateContent" => {
                    if let Some(fallback) = e.kids().into_iter().find(|k| k.other_name() == Some("Fallback"))
                    {
                        self.walk_children(&fallback, out, para);
                    }
                }
                "shape" | "textbox" | "group" | "rect" | "roundrect" => self.walk_children(&e, out, para),
                _ => {}
            }
            return;
        }
        let Some(name) = e.w_name() else { return };
        match name {
            "p" => self.paragraph(&e, out),
            "t" => {
                if let Some((text, _)) = para {
                    text.push_str(e.t_text().unwrap_or(""));
                }
            }
            "tab" => push(para, "\t"),
            "noBreakHyphen" => push(para, "\u{2011}"),
            "softHyphen" => push(para, "\u{AD}"),
            "br" => {
                // a line break (`<br>`); page and column breaks write nothing
                if matches!(e.attr("type"), None | Some("textWrapping")) {
                    if let Some((text, heading)) = para {
                        if !heading {
                            text.push(' ');
                        }
                    }
                }
            }
            "footnoteReference" | "endnoteReference" => {
                let kind = if name == "footnoteReference" { NoteKind::Footnote } else { NoteKind::Endnote };
                if let Some(id) = e.attr("id") {
                    self.note_refs.push((kind, id.to_string()));
                    let n = self.note_refs.len();
                    push(para, &format!("[{n}]"));
                }
            }
            "sdt" => {
                if let Some(content) = e.kids().into_iter().find(|k| k.w_name() == Some("sdtContent")) {
                    self.walk_children(&content, out, para);
                }
            }
            "r" | "hyperlink" | "ins" | "moveTo" | "smartTag" | "customXml" | "object" | "tbl" | "tr"
            | "tc" | "txbxContent" => self.walk_children(&e, out, para),
            // a VML picture's text boxes: read, and placed after the paragraph (mammoth's
            // "extra" content); the paragraph's `out` is that list already
            "pict" => self.walk_children(&e, out, para),
            _ => {}
        }
    }

    fn walk_children<E: Element>(
        &mut self,
        e: &E,
        out: &mut Vec<Block>,
        mut para: Option<(&mut String, bool)>,
    ) {
        for k in e.kids() {
            let p = para.as_mut().map(|(t, h)| (&mut **t, *h));
            self.walk(k, out, p);
        }
    }

    fn paragraph<E: Element>(&mut self, e: &E, out: &mut Vec<Block>) {
        let kids = e.kids();
        let props = kids.iter().find(|k| k.w_name() == Some("pPr"));
        let deleted_mark = props
            .and_then(|p| p.kids().into_iter().find(|k| k.w_name() == Some("rPr")))
            .is_some_and(|r| r.kids().iter().any(|k| k.w_name() == Some("del")));
        if deleted_mark {
            // mammoth joins the contents of a paragraph whose mark is deleted to the next one
            self.deleted.extend(kids.iter().map(Element::owned));
            return;
        }
        let style_id = props
            .and_then(|p| p.kids().into_iter().find(|k| k.w_name() == Some("pStyle")))
            .and_then(|s| s.attr("val").map(str::to_string));
        let style_name = style_id.as_deref().and_then(|id| self.style_names.get(id)).cloned();
        let level = heading_level(style_id.as_deref(), style_name.as_deref());
        let mut text = String::new();
        let mut extra = Vec::new();
        let pending = std::mem::take(&mut self.deleted);
        for k in pending {
            self.walk(k, &mut extra, Some((&mut text, level.is_some())));
        }
        for k in kids {
            self.walk(k, &mut extra, Some((&mut text, level.is_some())));
        }
        out.push(match level {
            Some(n) => Block::Heading(n, text),
            None => Block::Paragraph(text),
        });
        out.extend(extra);
    }
}

fn push(para: Option<(&mut String, bool)>, s: &str) {
    if let Some((text, _)) = para {
        text.push_str(s);
    }
}

// ---------------------------------------------------------------------------------------------
// PDF

/// A PDF's text layer, page by page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfPages {
    /// Pages in order: (page number from 1, its lines, each collapsed and non-empty). A page
    /// without text has no lines.
    pub pages: Vec<(u32, Vec<String>)>,
    /// One line per page that could not be read (`"page 3: …"`); the others are kept.
    pub warnings: Vec<String>,
}

impl PdfPages {
    /// The text of pages with text: per page a `# page N` heading, a blank line, its lines (a
    /// paragraph) and a blank line, as the page's `pdfToText` writes it.
    pub fn text(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for (n, lines) in &self.pages {
            if let Some(t) = page_text(*n, lines) {
                out.push(t);
            }
        }
        out.concat().strip_suffix('\n').map(str::to_string).unwrap_or_default()
    }

    /// Whether any page has text (a scanned PDF has none).
    pub fn has_text(&self) -> bool {
        self.pages.iter().any(|(_, l)| !l.is_empty())
    }
}

/// One page's part of [`PdfPages::text`] (with its final `\n`), `None` for a page without text.
pub fn page_text(n: u32, lines: &[String]) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let mut s = heading_line(1, &format!("page {n}"));
    s.push_str("\n\n");
    for l in lines {
        s.push_str(&paragraph_line(l));
        s.push('\n');
    }
    s.push('\n');
    Some(s)
}

/// Characters pdf.js normalises with NFKC in a text layer (ligatures, presentation forms,
/// compatibility spaces: its `normalizeUnicode`), as inclusive ranges; U+FB05 (ﬅ) becomes
/// "ſt" besides.
const PDFJS_NFKC: &[(char, char)] = &[
    ('\u{a0}', '\u{a0}'),
    ('\u{b5}', '\u{b5}'),
    ('\u{37e}', '\u{37e}'),
    ('\u{eb3}', '\u{eb3}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{2126}', '\u{2126}'),
    ('\u{fb00}', '\u{fb04}'),
    ('\u{fb06}', '\u{fb06}'),
    ('\u{fb20}', '\u{fb36}'),
    ('\u{fb38}', '\u{fb3c}'),
    ('\u{fb3e}', '\u{fb3e}'),
    ('\u{fb40}', '\u{fb41}'),
    ('\u{fb43}', '\u{fb44}'),
    ('\u{fb46}', '\u{fba1}'),
    ('\u{fba4}', '\u{fba9}'),
    ('\u{fbae}', '\u{fbb1}'),
    ('\u{fbd3}', '\u{fbdc}'),
    ('\u{fbde}', '\u{fbe7}'),
    ('\u{fbea}', '\u{fbf8}'),
    ('\u{fbfc}', '\u{fbfd}'),
    ('\u{fc00}', '\u{fc5d}'),
    ('\u{fc64}', '\u{fcf1}'),
    ('\u{fcf5}', '\u{fd3d}'),
    ('\u{fd88}', '\u{fd88}'),
    ('\u{fdf4}', '\u{fdf4}'),
    ('\u{fdfa}', '\u{fdfb}'),
    ('\u{fe71}', '\u{fe71}'),
    ('\u{fe77}', '\u{fe77}'),
    ('\u{fe79}', '\u{fe79}'),
    ('\u{fe7b}', '\u{fe7b}'),
    ('\u{fe7d}', '\u{fe7d}'),
];

/// `s` with pdf.js's text-layer normalisation ([`PDFJS_NFKC`]).
fn pdfjs_normalize(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\u{fb05}' {
            out.push_str("ſt");
        } else if PDFJS_NFKC.iter().any(|&(lo, hi)| (lo..=hi).contains(&c)) {
            out.extend(std::iter::once(c).nfkc());
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of a PDF (module docs), as the page's `pdfToText` makes it: [`pdf_pages`] then
/// [`PdfPages::text`].
///
/// # Errors
/// As [`pdf_pages`].
pub fn pdf_text(bytes: &[u8]) -> Result<String, DocumentError> {
    pdf_pages(bytes).map(|p| p.text())
}

/// A PDF's text layer, page by page. A page that cannot be read is a line of
/// [`PdfPages::warnings`] and has no lines; the others are read.
///
/// # Errors
/// [`DocumentError`] when the bytes are not a PDF that can be parsed, the PDF needs a password
/// (an empty user password is tried, as pdf.js does), or it has no pages.
pub fn pdf_pages(bytes: &[u8]) -> Result<PdfPages, DocumentError> {
    let unreadable = |why: String| DocumentError(format!("not a PDF that can be read ({why})"));
    if !bytes.starts_with(b"%PDF-") && !bytes.get(..1024).is_some_and(|head| find(head, b"%PDF-").is_some()) {
        return Err(unreadable("it does not start with %PDF-".into()));
    }
    // lopdf's parser and pdf-extract's text extraction panic on some malformed files (unwrap
    // and expect on missing dictionary entries, such as a page without a MediaBox): each is
    // caught here and reported as that file's (or page's) error.
    let doc = quiet_catch(|| pdf_extract::Document::load_mem(bytes))
        .map_err(|panic| unreadable(format!("the parser stopped: {panic}")))?
        .map_err(|e| unreadable(e.to_string()))?;
    // lopdf decrypts with the empty user password while loading and then drops /Encrypt; a
    // file still encrypted needs a password.
    if doc.is_encrypted() {
        return Err(DocumentError("the PDF is password-protected".into()));
    }
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    if numbers.is_empty() {
        return Err(unreadable("it has no pages".into()));
    }
    let mut pages = Vec::with_capacity(numbers.len());
    let mut warnings = Vec::new();
    for n in numbers {
        let read = quiet_catch(|| {
            let mut s = String::new();
            let mut out = pdf_extract::PlainTextOutput::new(&mut s);
            pdf_extract::output_doc_page(&doc, &mut out, n).map(|()| s)
        });
        let text = match read {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                warnings.push(format!("page {n}: {e:?}"));
                String::new()
            }
            Err(panic) => {
                warnings.push(format!("page {n}: the text extraction stopped: {panic}"));
                String::new()
            }
        };
        let text = pdfjs_normalize(&text);
        let lines: Vec<String> = text.split('\n').map(collapse).filter(|l| !l.is_empty()).collect();
        pages.push((n, lines));
    }
    Ok(PdfPages { pages, warnings })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Run `f`, catching a panic as its message. While `f` runs, a panic on this thread is not
/// printed (the caller reports it as a file's error); a panic on another thread still goes to
/// the hook that was installed before. The hook is process-wide: two threads in
/// `quiet_catch` at once would restore each other's hooks in the wrong order, so callers read
/// documents on one thread (as `cairn index` does).
fn quiet_catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    use std::sync::Arc;
    let me = std::thread::current().id();
    let previous: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> =
        Arc::from(std::panic::take_hook());
    let forward = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != me {
            forward(info);
        }
    }));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let _ = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| previous(info)));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an internal error".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents").join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn expected(name: &str) -> String {
        String::from_utf8(fixture(&format!("{name}.txt"))).unwrap()
    }

    /// The page's reader made these .txt files of the same files
    /// (tests/e2e/document_text.test.mjs checks that it still does).
    #[test]
    fn the_same_text_as_the_page() {
        assert_eq!(docx_text(&fixture("field-notes.docx")).unwrap(), expected("field-notes.docx"));
        assert_eq!(pdf_text(&fixture("moor-report.pdf")).unwrap(), expected("moor-report.pdf"));
    }

    #[test]
    fn docx_rules_by_hand() {
        let text = docx_text(&fixture("field-notes.docx")).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(
            lines,
            [
                "Field notes from Tarnwick", // Title style: a paragraph
                "# Moorland survey",         // style id Heading1
                "The survey of Tarnwick Moor counted forty curlew nests.[1]", // tab, break, note
                "\\# is not a heading here, only a hash sign",
                "## Weather", // style name "heading 2"; a break in a heading adds nothing
                "Rain fell on nine days in May.", // insertion kept, deletion dropped
                "Sheep counted",
                "212 ewes",
                "Before the box.",
                "A text box about peat cutting.", // after its paragraph
                "Recorded by the Tarnwick wardens.",
                "Page 7 of the warden log.", // the field's result, not its code
                "Nest counts by the county bird club. ↑",
            ]
        );
    }

    #[test]
    fn pdf_pages_by_hand() {
        let pages = pdf_pages(&fixture("moor-report.pdf")).unwrap();
        assert!(pages.warnings.is_empty());
        assert_eq!(
            pages.pages,
            [
                (
                    1,
                    vec![
                        "Tarnwick Moor report".to_string(),
                        "The curlew is the emblem of the moor.".into(),
                        // TJ gaps of 0.6 em are spaces
                        "Peat cutting ended in 1962.".into()
                    ]
                ),
                (2, vec![]),
                (
                    3,
                    vec![
                        "# 3 is a number, not a heading".into(),
                        "Sheep graze the southern slope of Tarnwick Moor.".into()
                    ]
                ),
            ]
        );
    }

    #[test]
    fn bad_files_say_why() {
        let err = |r: Result<String, DocumentError>| r.unwrap_err().0;
        assert_eq!(
            err(docx_text(&fixture("not-a-zip.docx"))),
            "not a Word (.docx) file that can be read (it is not a zip archive, as every .docx is)"
        );
        assert_eq!(err(pdf_text(&fixture("locked.pdf"))), "the PDF is password-protected");
        assert!(err(pdf_text(&fixture("broken.pdf"))).starts_with("not a PDF that can be read ("));
        assert_eq!(
            err(pdf_text(b"PK\x03\x04 a zip, not a PDF")),
            "not a PDF that can be read (it does not start with %PDF-)"
        );
        // a zip without a document part
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zip.start_file("hello.txt", zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut zip, b"hello").unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        assert_eq!(
            err(docx_text(&bytes)),
            "not a Word (.docx) file that can be read (it has no main document part (word/document.xml))"
        );
        // a scanned page: no text, no error (the caller says the file has no text)
        let scanned = pdf_pages(&fixture("scanned.pdf")).unwrap();
        assert!(!scanned.has_text() && scanned.warnings.is_empty() && scanned.pages.len() == 1);
    }

    /// pdf-extract panics on a page without a MediaBox (`expect("MediaBox")`): that page is a
    /// warning, the others are read.
    #[test]
    fn a_page_that_panics_the_extractor_is_a_warning() {
        let mut bytes = fixture("moor-report.pdf");
        let needle = b"/MediaBox [0 0 612 792]";
        let at = find(&bytes, needle).unwrap();
        // blanks of the same length: the xref offsets stay right
        bytes[at..at + needle.len()].fill(b' ');
        let pages = pdf_pages(&bytes).unwrap();
        assert_eq!(pages.warnings.len(), 1, "{:?}", pages.warnings);
        assert!(
            pages.warnings[0].starts_with("page 1: the text extraction stopped: "),
            "{:?}",
            pages.warnings
        );
        assert!(pages.pages[0].1.is_empty());
        assert_eq!(pages.pages[2].1[1], "Sheep graze the southern slope of Tarnwick Moor.");
    }

    #[test]
    fn heading_levels_as_mammoth_maps_them() {
        assert_eq!(heading_level(Some("Heading1"), None), Some(1));
        assert_eq!(heading_level(Some("Heading6"), Some("whatever")), Some(6));
        assert_eq!(heading_level(Some("Heading"), None), Some(1));
        assert_eq!(heading_level(Some("Titre2"), Some("heading 2")), Some(2));
        assert_eq!(heading_level(Some("X"), Some("HEADING 3")), Some(3));
        assert_eq!(heading_level(Some("X"), Some("Heading")), Some(1));
        assert_eq!(heading_level(Some("Heading7"), Some("heading 7")), None);
        assert_eq!(heading_level(Some("heading1"), None), None); // ids are exact
        assert_eq!(heading_level(Some("Title"), Some("Title")), None);
        assert_eq!(heading_level(Some("X"), Some("Heading 01")), None);
        assert_eq!(heading_level(None, None), None);
    }

    #[test]
    fn lines_as_the_page_writes_them() {
        assert_eq!(collapse("  a\u{a0}\tb\u{feff} c\u{85}d "), "a b c\u{85}d");
        assert_eq!(paragraph_line("# x"), "\\# x");
        assert_eq!(paragraph_line("######"), "\\######");
        assert_eq!(paragraph_line("####### x"), "####### x");
        assert_eq!(paragraph_line("#x"), "#x");
        assert_eq!(heading_line(2, "Methods ##"), "## Methods");
        assert_eq!(pdfjs_normalize("ﬁeld ﬂow ﬅ x\u{2002}y é"), "field flow ſt x y é");
    }
}
