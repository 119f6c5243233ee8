//! Static-site reading for `cairn index <site-dir>` (native only): HTML and Markdown
//! pages become passages, one per heading section, whose id is the URL to link to.
//!
//! - **HTML** is parsed with [`scraper`] (html5ever, the browser's parsing algorithm). The page
//!   title is `<title>` (else the first `<h1>`, else the file name). Text is read from `<main>`
//!   when the page has one, else from `<body>`; `nav`, `header`, `footer`, `aside`, `script`,
//!   `style`, `noscript`, `template`, `svg`, `iframe`, `form`, elements with the `hidden`
//!   attribute and the search widget's own `#cairn-search` are skipped.
//! - **Markdown** is parsed with [`pulldown_cmark`] (CommonMark); a leading `---` front-matter
//!   block is skipped and its `title:` used. The page title is that, else the first `# heading`,
//!   else the file name. Markdown pages are linked as the `.html` page a site generator makes of
//!   them (`guide/intro.md` → `/guide/intro.html`).
//! - **Sections**: a page is split at every heading (`h1`–`h6`). A section's passage title is the
//!   heading path, `"Page title › Heading › Subheading"` (the page title alone before the first
//!   heading; a top heading equal to the page title is not repeated); its text is the section's
//!   text, white space collapsed. A section longer than [`MAX_PASSAGE_CHARS`] is cut at block
//!   boundaries (paragraphs, list items) into several passages.
//! - **Ids and links**: a passage's id is its page URL (root-relative, from `base_url`, path
//!   segments percent-encoded; `dir/index.html` → `dir/`), plus `#anchor` when the heading has an
//!   `id` (HTML: its own, a descendant's, or, for the first heading of a `section`, `div` or
//!   `article`, the wrapper's, as Sphinx writes them; a permalink `¶`/`#` is not part of the
//!   heading's text; Markdown: `{#id}` or the GitHub-style slug of the heading text), plus `" 2"`,
//!   `" 3"`… for the second and later parts of a long section or a repeated anchor. URLs hold no
//!   spaces, so the link is the id up to the first space ([`link_of`]).
//!
//! Pages are read in path order, so the same site gives the same passages (and index bytes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use scraper::{ElementRef, Html, Node, Selector};

use crate::corpus::Passage;
use crate::error::{Error, Result};

/// Sections longer than this many characters are cut into several passages at block
/// boundaries (a block longer than this stays whole).
pub const MAX_PASSAGE_CHARS: usize = 1500;

/// Elements whose content is never indexed.
const SKIPPED: &[&str] =
    &["nav", "header", "footer", "aside", "script", "style", "noscript", "template", "svg", "iframe", "form"];

/// Block-level elements: their text is a separate block (a place where long sections may be cut).
const BLOCKS: &[&str] = &[
    "p",
    "li",
    "div",
    "section",
    "article",
    "pre",
    "blockquote",
    "dt",
    "dd",
    "td",
    "th",
    "tr",
    "table",
    "ul",
    "ol",
    "dl",
    "figure",
    "figcaption",
    "br",
    "hr",
];

/// The link of a passage id made by this module: the id up to its first space.
pub fn link_of(id: &str) -> &str {
    id.split(' ').next().unwrap_or(id)
}

/// Whether a passage id from elsewhere (a JSONL corpus) can be linked to as this module's ids
/// are: its [`link_of`] part is a root-relative path (`/…`, not `//…`) or an absolute `http://`
/// or `https://` URL. The widget links a corpus's results only when every id is one; dataset ids
/// such as content hashes or titles are not, and would make links that lead nowhere.
pub fn is_link(id: &str) -> bool {
    let link = link_of(id);
    // a scheme in any case, with something after it
    let url_with = |scheme: &str| {
        link.len() > scheme.len() && link.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    (link.len() > 1 && link.starts_with('/') && !link.starts_with("//")) || url_with("http://") || url_with("https://")
}

/// One section while a page is read.
#[derive(Default)]
struct Section {
    title: String,
    anchor: Option<String>,
    blocks: Vec<String>,
    current: String,
}

impl Section {
    fn push_text(&mut self, t: &str) {
        self.current.push_str(t);
    }

    fn end_block(&mut self) {
        let b = collapse(&self.current);
        if !b.is_empty() {
            self.blocks.push(b);
        }
        self.current.clear();
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Collects a page's sections into passages.
struct PageWriter<'a> {
    url: String,
    page_title: String,
    /// Heading texts by level 1..=6 (index 0 = h1).
    path: [Option<String>; 6],
    /// Their anchors: a heading without one links to its nearest enclosing heading's.
    anchors: [Option<String>; 6],
    section: Section,
    out: &'a mut Vec<Passage>,
    seen: &'a mut HashMap<String, usize>,
}

impl<'a> PageWriter<'a> {
    fn new(
        url: String,
        page_title: String,
        out: &'a mut Vec<Passage>,
        seen: &'a mut HashMap<String, usize>,
    ) -> Self {
        let section = Section { title: page_title.clone(), ..Section::default() };
        PageWriter {
            url,
            page_title,
            path: Default::default(),
            anchors: Default::default(),
            section,
            out,
            seen,
        }
    }

    fn heading(&mut self, level: usize, text: &str, anchor: Option<String>) {
        self.flush();
        let level = level.clamp(1, 6);
        self.path[level - 1] = Some(collapse(text));
        self.anchors[level - 1] = anchor.filter(|a| !a.is_empty());
        for p in self.path.iter_mut().skip(level) {
            *p = None;
        }
        for a in self.anchors.iter_mut().skip(level) {
            *a = None;
        }
        let anchor = self.anchors[..level].iter().rev().flatten().next().cloned();
        let mut parts = vec![self.page_title.clone()];
        for p in self.path.iter().flatten() {
            if !p.is_empty() && parts.last() != Some(p) {
                parts.push(p.clone());
            }
        }
        self.section = Section { title: parts.join(" › "), anchor, ..Section::default() };
    }

    fn unique(&mut self, id: String) -> String {
        let n = self.seen.entry(id.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            id
        } else {
            format!("{id} {n}")
        }
    }

    fn flush(&mut self) {
        self.section.end_block();
        let s = std::mem::take(&mut self.section);
        if s.blocks.is_empty() {
            return;
        }
        let base = match &s.anchor {
            Some(a) if !a.is_empty() => format!("{}#{}", self.url, encode(a, false)),
            _ => self.url.clone(),
        };
        let mut text = String::new();
        let mut parts = Vec::new();
        for b in s.blocks {
            if !text.is_empty() && text.len() + 1 + b.len() > MAX_PASSAGE_CHARS {
                parts.push(std::mem::take(&mut text));
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&b);
        }
        parts.push(text);
        for text in parts {
            let id = self.unique(base.clone());
            self.out.push(Passage { id, title: s.title.clone(), text });
        }
    }
}

/// Percent-encode everything but unreserved characters (and `/` in paths).
fn encode(s: &str, path: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || (path && b == b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The passages of one HTML page served at `url` (module docs). `fallback_title` is used when
/// the page has neither `<title>` nor `<h1>`. Never fails: malformed HTML is parsed as a
/// browser would.
pub fn html_passages(html: &str, url: &str, fallback_title: &str) -> Vec<Passage> {
    let mut out = Vec::new();
    html_into(html, url, fallback_title, &mut out, &mut HashMap::new());
    out
}

fn selector(s: &str) -> Option<Selector> {
    Selector::parse(s).ok()
}

fn html_into(
    html: &str,
    url: &str,
    fallback_title: &str,
    out: &mut Vec<Passage>,
    seen: &mut HashMap<String, usize>,
) {
    let doc = Html::parse_document(html);
    let first = |sel: &str| selector(sel).and_then(|s| doc.select(&s).next());
    let text_of = |e: ElementRef<'_>| collapse(&e.text().collect::<String>());
    let title = first("title").map(text_of).filter(|t| !t.is_empty());
    let title = title
        .or_else(|| first("h1").map(text_of).filter(|t| !t.is_empty()))
        .unwrap_or_else(|| fallback_title.to_string());
    let root = first("main").or_else(|| first("body")).unwrap_or_else(|| doc.root_element());
    let mut w = PageWriter::new(url.to_string(), title, out, seen);
    walk(root, &mut w);
    w.flush();
}

/// A heading's text without its permalink: an `<a>` whose whole text is `¶`, `§`, `#` or `🔗`
/// (Sphinx, MkDocs and many themes add one to every heading).
fn heading_text(h: ElementRef<'_>) -> String {
    let mut out = String::new();
    for node in h.descendants() {
        let Node::Text(t) = node.value() else { continue };
        let in_link =
            node.parent().and_then(|p| p.value().as_element().map(|el| el.name() == "a")) == Some(true);
        if in_link && ["¶", "§", "#", "🔗"].contains(&t.trim()) {
            continue;
        }
        out.push_str(t);
    }
    out
}

fn walk(e: ElementRef<'_>, w: &mut PageWriter<'_>) {
    // Sphinx and others put a section's id on its wrapper (`<section id="install"><h2>…`), not on
    // the heading: the first heading in a section, div or article takes the wrapper's id.
    let wrapper_id = e
        .value()
        .id()
        .filter(|_| ["section", "div", "article"].contains(&e.value().name()))
        .map(str::to_string);
    let mut heading_seen = false;
    for child in e.children() {
        match child.value() {
            Node::Text(t) => w.section.push_text(t),
            Node::Element(el) => {
                let Some(ce) = ElementRef::wrap(child) else { continue };
                let name = el.name();
                if SKIPPED.contains(&name) || el.attr("hidden").is_some() || el.id() == Some("cairn-search") {
                    continue;
                }
                if let Some(level) = heading_level(name) {
                    let text = heading_text(ce);
                    let anchor = el
                        .id()
                        .map(str::to_string)
                        .or_else(|| {
                            selector("[id]")
                                .and_then(|s| ce.select(&s).next())
                                .and_then(|a| a.value().id().map(str::to_string))
                        })
                        .or_else(|| wrapper_id.clone().filter(|_| !heading_seen));
                    heading_seen = true;
                    w.heading(level, &text, anchor);
                    continue;
                }
                // Inline elements join their text as a browser renders it ("<b>a</b>b" is "ab").
                let block = BLOCKS.contains(&name);
                if block {
                    w.section.end_block();
                }
                walk(ce, w);
                if block {
                    w.section.end_block();
                }
            }
            _ => {}
        }
    }
}

fn heading_level(name: &str) -> Option<usize> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// GitHub's heading anchor: lower case, letters/digits/`-`/`_` kept, spaces to `-`, the rest
/// dropped.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// The passages of one Markdown page linked as `url` (module docs). Never fails.
pub fn markdown_passages(md: &str, url: &str, fallback_title: &str) -> Vec<Passage> {
    let mut out = Vec::new();
    markdown_into(md, url, fallback_title, &mut out, &mut HashMap::new());
    out
}

fn markdown_into(
    md: &str,
    url: &str,
    fallback_title: &str,
    out: &mut Vec<Passage>,
    seen: &mut HashMap<String, usize>,
) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let (front_title, body) = front_matter(md);
    let opts = Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_STRIKETHROUGH;
    let first_h1 = {
        let mut in_h1 = false;
        let mut t = String::new();
        for ev in Parser::new_ext(body, opts) {
            match ev {
                Event::Start(Tag::Heading { level: pulldown_cmark::HeadingLevel::H1, .. }) => in_h1 = true,
                Event::End(TagEnd::Heading(_)) if in_h1 => break,
                Event::Text(s) | Event::Code(s) if in_h1 => t.push_str(&s),
                _ => {}
            }
        }
        Some(collapse(&t)).filter(|t| !t.is_empty())
    };
    let title = front_title.or(first_h1).unwrap_or_else(|| fallback_title.to_string());
    let mut w = PageWriter::new(url.to_string(), title, out, seen);
    let mut heading: Option<(usize, Option<String>, String)> = None;
    for ev in Parser::new_ext(body, opts) {
        match ev {
            Event::Start(Tag::Heading { level, id, .. }) => {
                heading = Some((level as usize, id.map(|s| s.to_string()), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, id, text)) = heading.take() {
                    let anchor = id.unwrap_or_else(|| slug(&text));
                    w.heading(level, &text, Some(anchor));
                }
            }
            Event::Text(s) | Event::Code(s) => match &mut heading {
                Some((_, _, t)) => t.push_str(&s),
                None => w.section.push_text(&s),
            },
            Event::SoftBreak | Event::HardBreak => match &mut heading {
                Some((_, _, t)) => t.push(' '),
                None => w.section.push_text(" "),
            },
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableCell
                | TagEnd::BlockQuote(_),
            ) => w.section.end_block(),
            _ => {}
        }
    }
    w.flush();
}

/// A leading `---` … `---` block: its `title:` value (quotes trimmed) and the text after it.
fn front_matter(md: &str) -> (Option<String>, &str) {
    let Some(rest) = md.strip_prefix("---\n").or_else(|| md.strip_prefix("---\r\n")) else {
        return (None, md);
    };
    let Some(end) = rest.find("\n---") else { return (None, md) };
    let block = &rest[..end];
    let after = &rest[end + 4..];
    let body = after.find('\n').map_or("", |i| &after[i + 1..]);
    let title = block
        .lines()
        .find_map(|l| l.strip_prefix("title:"))
        .map(|t| t.trim().trim_matches('"').trim_matches('\'').to_string())
        .filter(|t| !t.is_empty());
    (title, body)
}

/// What [`read_site`] read: the passages, how many pages, and what a site owner should know
/// about (pages read with another encoding, skipped, or without any text to index).
#[derive(Debug, Default)]
pub struct SitePages {
    /// Every page's passages, pages in path order.
    pub passages: Vec<Passage>,
    /// Pages found (including skipped and empty ones).
    pub pages: usize,
    /// One line per page worth a warning, path first; then, when Markdown pages have no built
    /// `.html` page beside them (their links would lead nowhere), one line that says how many,
    /// the site's folder first.
    pub warnings: Vec<String>,
}

/// Labels of the encodings that browsers decode as Windows-1252 (the WHATWG Encoding standard).
const WINDOWS_1252_LABELS: &[&str] = &[
    "ansi_x3.4-1968",
    "ascii",
    "cp1252",
    "cp819",
    "csisolatin1",
    "ibm819",
    "iso-8859-1",
    "iso-ir-100",
    "iso8859-1",
    "iso88591",
    "iso_8859-1",
    "iso_8859-1:1987",
    "l1",
    "latin1",
    "us-ascii",
    "windows-1252",
    "x-cp1252",
];

/// Windows-1252's characters for the bytes 0x80–0x9F (the rest are their own code point).
const WINDOWS_1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž', '\u{8F}', '\u{90}',
    '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}', 'ž', 'Ÿ',
];

/// The charset a page declares in its first 1024 bytes (`<meta charset=…>` or
/// `content="…; charset=…"`), lower case.
fn declared_charset(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\'', ' '])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_.:".contains(*c))
        .collect();
    Some(value).filter(|v| !v.is_empty())
}

/// A page's text and, when it was not plain UTF-8, a note: UTF-8 (a byte-order mark dropped);
/// a page declaring UTF-8 with invalid bytes has them replaced; else Windows-1252 when the page
/// declares it (or a Latin-1 alias, as browsers read those) or declares nothing, which is what a
/// browser falls back to. `Err` names an encoding this reader does not decode (the page is
/// skipped).
fn decode_page(bytes: Vec<u8>) -> std::result::Result<(String, Option<&'static str>), String> {
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok((text, None)),
        Err(e) => e.into_bytes(),
    };
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Err("UTF-16".into());
    }
    match declared_charset(&bytes) {
        Some(label) if label == "utf-8" || label == "utf8" => Ok((
            String::from_utf8_lossy(&bytes).into_owned(),
            Some("declares UTF-8 but is not valid UTF-8: the invalid bytes were replaced"),
        )),
        Some(label) if !WINDOWS_1252_LABELS.contains(&label.as_str()) => Err(label),
        _ => {
            let text = bytes
                .iter()
                .map(|&b| {
                    if (0x80..0xA0).contains(&b) {
                        WINDOWS_1252_HIGH[usize::from(b - 0x80)]
                    } else {
                        char::from(b)
                    }
                })
                .collect();
            Ok((text, Some("not UTF-8: read as Windows-1252 (Latin-1), as a browser would")))
        }
    }
}

/// Every `.html`, `.htm`, `.md` and `.markdown` page under `root` as passages (module docs),
/// pages in path order. Hidden entries (`.…`), `node_modules` and the folders in `skip` (the
/// output folder) are not read. `base_url` prefixes every URL (`/` for a site at the domain's
/// root; `/docs/` for one under a path). A page that is not UTF-8 is read as Windows-1252 when
/// it declares that (or a Latin-1 alias) or no charset, and skipped when it declares another;
/// both, and pages without any text to index, are listed in [`SitePages::warnings`].
///
/// # Errors
/// [`Error::Io`] when a folder or page cannot be read; [`Error::Site`] when `root` holds no
/// page.
pub fn read_site(root: &Path, base_url: &str, skip: &[PathBuf]) -> Result<SitePages> {
    let mut files = Vec::new();
    collect(root, root, skip, &mut files)?;
    files.sort();
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut seen = HashMap::new();
    // Markdown pages whose .html page (their link) is not in the folder: a source folder
    let mut unbuilt: Vec<(String, String)> = Vec::new();
    let base = if base_url.ends_with('/') { base_url.to_string() } else { format!("{base_url}/") };
    for rel in &files {
        let path = root.join(rel);
        let bytes =
            std::fs::read(&path).map_err(|source| Error::Io { path: path.display().to_string(), source })?;
        let text = match decode_page(bytes) {
            Ok((text, note)) => {
                if let Some(note) = note {
                    warnings.push(format!("{}: {note}", path.display()));
                }
                text
            }
            Err(charset) => {
                warnings.push(format!(
                    "{}: skipped: not UTF-8, and its encoding ({charset}) is not one `cairn index` reads; save it as UTF-8",
                    path.display()
                ));
                continue;
            }
        };
        let before = out.len();
        let rel_str: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let rel_str = rel_str.join("/");
        let stem = rel.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let ext = rel.extension().map_or_else(String::new, |e| e.to_string_lossy().to_ascii_lowercase());
        let linked = if ext == "md" || ext == "markdown" {
            let html = format!("{}.html", rel_str.strip_suffix(&format!(".{ext}")).unwrap_or(&rel_str));
            if !root.join(&html).is_file() {
                unbuilt.push((rel_str.clone(), html.clone()));
            }
            html
        } else {
            rel_str.clone()
        };
        let linked = match linked.strip_suffix("index.html") {
            Some(dir) if dir.is_empty() || dir.ends_with('/') => dir.to_string(),
            _ => linked,
        };
        let url = format!("{base}{}", encode(&linked, true));
        if ext == "md" || ext == "markdown" {
            markdown_into(&text, &url, &stem, &mut out, &mut seen);
        } else {
            html_into(&text, &url, &stem, &mut out, &mut seen);
        }
        if out.len() == before {
            warnings.push(format!("{}: no text to index", path.display()));
        }
    }
    if files.is_empty() {
        return Err(Error::Site {
            path: root.display().to_string(),
            message: "no .html, .htm, .md or .markdown page found".into(),
        });
    }
    if let Some((md, html)) = unbuilt.first() {
        let n = unbuilt.len();
        warnings.push(format!(
            "{}: {n} Markdown page{} that this folder does not have (the first: {md} as {html}): \
             index the built site (_site/, public/, build/) so that the results' links lead somewhere",
            root.display(),
            if n == 1 { " is linked as an .html page" } else { "s are linked as .html pages" },
        ));
    }
    Ok(SitePages { passages: out, pages: files.len(), warnings })
}

fn collect(root: &Path, dir: &Path, skip: &[PathBuf], out: &mut Vec<PathBuf>) -> Result<()> {
    let io = |source| Error::Io { path: dir.display().to_string(), source };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        if skip.contains(&canonical) {
            continue;
        }
        let ft = entry.file_type().map_err(io)?;
        if ft.is_dir() {
            collect(root, &path, skip, out)?;
        } else if ft.is_file() {
            let ext = path.extension().map_or_else(String::new, |e| e.to_string_lossy().to_ascii_lowercase());
            if ["html", "htm", "md", "markdown"].contains(&ext.as_str()) {
                if let Ok(rel) = path.strip_prefix(root) {
                    out.push(rel.to_path_buf());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_are_links() {
        for id in ["/kings/lothair.html#family", "/a 2", "https://example.org/x", "HTTP://example.org", "/"] {
            assert_eq!(is_link(id), id != "/", "{id}");
        }
        for id in [
            "5a8b57f25542995d1e6f1371-0",
            "Lothair II",
            "kings/lothair.html",
            "//cdn.example/x",
            "http://",
            "",
            " /a",
        ] {
            assert!(!is_link(id), "{id}");
        }
    }

    #[test]
    fn html_sections_skip_chrome_and_keep_heading_paths_and_anchors() {
        let html = r#"<!doctype html><html><head><title>Lothair II</title><style>p{}</style></head>
<body><header>Site header</header><nav><a href="/">Home</a> Menu</nav>
<h1>Lothair II</h1><p>Lothair II was king of <b>Lotharingia</b>.</p>
<script>var secret = 1;</script>
<h2 id="family">Family</h2><p>He married Teutberga.</p><ul><li>Son: Hugh</li></ul>
<h3>Children</h3><p>Hugh, Gisela.</p>
<div id="cairn-search">widget text</div>
<footer>Copyright</footer></body></html>"#;
        let got = html_passages(html, "/kings/lothair.html", "x");
        let rows: Vec<(&str, &str, &str)> =
            got.iter().map(|p| (p.id.as_str(), p.title.as_str(), p.text.as_str())).collect();
        assert_eq!(
            rows,
            vec![
                ("/kings/lothair.html", "Lothair II", "Lothair II was king of Lotharingia."),
                ("/kings/lothair.html#family", "Lothair II › Family", "He married Teutberga. Son: Hugh"),
                ("/kings/lothair.html#family 2", "Lothair II › Family › Children", "Hugh, Gisela."),
            ]
        );
        assert_eq!(link_of(&got[2].id), "/kings/lothair.html#family");
    }

    #[test]
    fn sphinx_style_sections_give_their_id_and_permalinks_are_not_heading_text() {
        let html = r##"<title>Guide</title><div role="main">
<section id="install"><h1>Install<a class="headerlink" href="#install">¶</a></h1><p>Run pip.</p>
<section id="from-source"><h2>From source<a class="headerlink" href="#from-source">¶</a></h2><p>Clone it.</p>
<h3>Notes on C#</h3><p>Needs Rust.</p></section></section>
<div class="section" id="old-style"><h2><a href="#old-style">#</a> Old style</h2><p>Docutils.</p></div></div>"##;
        let rows: Vec<(String, String)> =
            html_passages(html, "/g.html", "x").into_iter().map(|p| (p.id, p.title)).collect();
        let want = [
            ("/g.html#install", "Guide › Install"),
            ("/g.html#from-source", "Guide › Install › From source"),
            ("/g.html#from-source 2", "Guide › Install › From source › Notes on C#"),
            ("/g.html#old-style", "Guide › Install › Old style"),
        ];
        assert_eq!(rows, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn main_element_wins_and_long_sections_are_cut_at_blocks() {
        let para = "word ".repeat(200); // 1000 characters once collapsed (999)
        let html = format!(
            "<html><body><p>outside main</p><main><h2 id=a>A</h2><p>{para}</p><p>{para}</p></main></body></html>"
        );
        let got = html_passages(&html, "/p.html", "fallback");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].id, "/p.html#a");
        assert_eq!(got[1].id, "/p.html#a 2");
        assert_eq!(got[0].title, "fallback › A");
        assert_eq!(got[0].text.len(), 999);
        assert!(!got.iter().any(|p| p.text.contains("outside")));
    }

    #[test]
    fn markdown_sections_with_front_matter_slugs_and_explicit_ids() {
        let md = "---\ntitle: \"Guide\"\n---\nIntro text.\n\n## Getting Started!\n\nRun `cairn index`.\n\n### Options {#opts}\n\n- one\n- two\n";
        let got = markdown_passages(md, "/guide.html", "guide");
        let rows: Vec<(&str, &str, &str)> =
            got.iter().map(|p| (p.id.as_str(), p.title.as_str(), p.text.as_str())).collect();
        assert_eq!(
            rows,
            vec![
                ("/guide.html", "Guide", "Intro text."),
                ("/guide.html#getting-started", "Guide › Getting Started!", "Run cairn index."),
                ("/guide.html#opts", "Guide › Getting Started! › Options", "one two"),
            ]
        );
    }

    #[test]
    fn site_walk_orders_pages_links_markdown_as_html_and_skips_the_output() {
        let dir = std::env::temp_dir().join(format!("cairn-site-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::create_dir_all(dir.join("cairn")).unwrap();
        std::fs::write(dir.join("index.html"), "<title>Home</title><p>Welcome home.</p>").unwrap();
        std::fs::write(dir.join("docs/a b.md"), "# A\n\nAlpha.").unwrap();
        std::fs::write(dir.join("cairn/skip.html"), "<p>never</p>").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a page").unwrap();
        let skip = vec![dir.join("cairn").canonicalize().unwrap()];
        let got = read_site(&dir, "/", &skip).unwrap().passages;
        let ids: Vec<&str> = got.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, vec!["/docs/a%20b.html#a", "/"]);
        assert_eq!(got[0].text, "Alpha.");
        let w = read_site(&dir, "/", &skip).unwrap().warnings;
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].ends_with(
                ": 1 Markdown page is linked as an .html page that this folder does not have (the first: docs/a b.md as docs/a b.html): index the built site (_site/, public/, build/) so that the results' links lead somewhere"
            ),
            "{w:?}"
        );
        // with the built page beside it, the Markdown source is linked to it and not warned about
        std::fs::write(dir.join("docs/a b.html"), "<h1 id=\"a\">A</h1><p>Alpha.</p>").unwrap();
        assert!(read_site(&dir, "/", &skip).unwrap().warnings.is_empty());
        let empty = dir.join("docs-empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(matches!(read_site(&empty, "/", &[]), Err(Error::Site { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pages_in_other_encodings_are_read_or_skipped_with_a_warning_not_an_error() {
        let dir = std::env::temp_dir().join(format!("cairn-site-enc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Latin-1 declared, Windows-1252 (0x80 is €) undeclared, Shift_JIS declared, UTF-8
        // declared with one stray byte, an empty page and a Markdown page with a byte-order mark.
        std::fs::write(
            dir.join("a-latin1.html"),
            b"<meta charset=\"iso-8859-1\"><title>Caf\xe9</title><p>Qualit\xe9 sup\xe9rieure.</p>",
        )
        .unwrap();
        std::fs::write(dir.join("b-cp1252.html"), b"<p>Prix: 5 \x80, \x93cit\xe9\x94.</p>").unwrap();
        std::fs::write(dir.join("c-sjis.html"), b"<meta charset=Shift_JIS><p>\x93\xfa\x96\x7b</p>").unwrap();
        std::fs::write(dir.join("d-stray.html"), b"<meta charset=utf-8><p>ok \xff ok</p>").unwrap();
        std::fs::write(dir.join("e-empty.html"), b"").unwrap();
        std::fs::write(dir.join("f-bom.md"), b"\xEF\xBB\xBF---\ntitle: Bom\n---\nBody.").unwrap();
        let got = read_site(&dir, "/", &[]).unwrap();
        let rows: Vec<(&str, &str, &str)> =
            got.passages.iter().map(|p| (p.id.as_str(), p.title.as_str(), p.text.as_str())).collect();
        assert_eq!(
            rows,
            vec![
                ("/a-latin1.html", "Café", "Qualité supérieure."),
                ("/b-cp1252.html", "b-cp1252", "Prix: 5 €, “cité”."),
                ("/d-stray.html", "d-stray", "ok \u{FFFD} ok"),
                ("/f-bom.html", "Bom", "Body."),
            ]
        );
        assert_eq!(got.pages, 6);
        let w = got.warnings.join("\n");
        assert_eq!(got.warnings.len(), 6, "{w}");
        assert!(w.contains("1 Markdown page is linked as an .html page that this folder does not have (the first: f-bom.md as f-bom.html)"), "{w}");
        assert!(w.contains("a-latin1.html: not UTF-8: read as Windows-1252"), "{w}");
        assert!(w.contains("b-cp1252.html: not UTF-8: read as Windows-1252"), "{w}");
        assert!(w.contains("c-sjis.html: skipped: not UTF-8, and its encoding (shift_jis)"), "{w}");
        assert!(w.contains("d-stray.html: declares UTF-8 but is not valid UTF-8"), "{w}");
        assert!(w.contains("e-empty.html: no text to index"), "{w}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
