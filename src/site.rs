//! Static-site reading for `cairn index <site-dir>` (native only): HTML and Markdown
//! pages become passages, one per heading section, whose id is the URL to link to; PDF and
//! Word files become passages as the page makes them.
//!
//! - **HTML** is parsed with [`scraper`] (html5ever, the browser's parsing algorithm). The page
//!   title is `<title>` (else the first `<h1>`, else the file name). The **content** is what
//!   `--selector` matches ([`ReadOptions::selector`]), else the elements marked `data-cairn-body`
//!   (as Pagefind's `data-pagefind-body`), else `<main>` or `[role=main]`, else `<body>`. Inside
//!   it, site chrome is left out ([`CHROME_SELECTORS`]: `nav`, `header`, `footer`, `aside`,
//!   `[role=navigation]`, Sphinx's `.sphinxsidebar` and `.related`, rustdoc's sidebar and version
//!   links, `[data-cairn-ignore]`, `script`, `style`, `form`, `button`, `[hidden]`, the widget's
//!   own `#cairn-search`, …, plus `--exclude-selector`). Left out whole: redirect pages
//!   (`<meta http-equiv="refresh">`), pages marked `<meta name="robots" content="noindex">`
//!   (mdBook's `print.html`, the whole book again), and, unless `keep_link_pages`, pages that are lists of
//!   links ([`LINK_PAGE_SHARE`]) and Sphinx's generated `genindex*`, `*-modindex` and `search`
//!   pages.
//! - **Definitions**: a `<dt id=…>` (Sphinx's API entries, glossary terms) starts a section of
//!   its own, titled by its text under the headings around it and linked by its id
//!   (`/library/asyncio-task.html#asyncio.gather`); definitions nest; the text after a
//!   definition list belongs to what was around it again.
//! - **Titles**: a suffix that at least half of the pages' titles share after a separator
//!   (`" — Python 3.11.2 documentation"`, `" - Rust"`: [`common_title_suffix`]) is dropped from
//!   every title, and a first heading that the page title starts with is not repeated.
//! - **Repeats**: a section whose text equals an earlier one's on the same page is written once.
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
//! - **PDF and Word (.docx) files** in the folder are read as the page reads them
//!   ([`crate::documents`]: the page's text of the file, split by
//!   [`crate::corpus::split_document`]): a passage a paragraph, titled `"file name › heading"`
//!   (a .docx's heading styles) or `"file name › page N"` (a PDF's pages); a PDF passage links
//!   to its page (`/docs/report.pdf#page=3`), a .docx passage to the file, `" 2"`, `" 3"`… after
//!   the link for the second and later passages. A file that cannot be read (damaged,
//!   password-protected, not a zip) or has no text (a scanned PDF) is a warning, and the rest of
//!   the folder is read.
//!
//! Pages are read in path order, so the same site gives the same passages (and index bytes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use scraper::{ElementRef, Html, Node, Selector};

use crate::corpus::{split_document, Passage};
use crate::documents::{docx_text, page_text, pdf_pages, DocumentError, DocumentKind};
use crate::error::{Error, Result};

/// Sections longer than this many characters are cut into several passages at block
/// boundaries (a block longer than this stays whole).
pub const MAX_PASSAGE_CHARS: usize = 1500;

/// What is left out of every page by default (besides `script`, `style` and the like): site
/// chrome, as HTML, ARIA roles and the common documentation generators mark it. `--exclude-selector`
/// adds to it. Sphinx: `.sphinxsidebar` (with the page's table of contents), `.related` (the
/// previous/next bars), `.headerlink` (permalinks); rustdoc: its sidebar (`nav`), `#settings-menu`,
/// the search form, `.rightside` and `.out-of-band` (version and source links), `.notable-traits`
/// (a tooltip repeated under every method that returns an iterator), `.hideme` ("Expand
/// description") and `.test-arrow` (an example's "Run" link).
pub const CHROME_SELECTORS: &str =
    "nav, header, footer, aside, script, style, noscript, template, svg, iframe, \
form, button, [hidden], #cairn-search, [data-cairn-ignore], [role=navigation], [role=banner], \
[role=contentinfo], [role=search], .sphinxsidebar, .related, .headerlink, #settings-menu, \
.search-container, .mobile-topbar, .rightside, .out-of-band, .notable-traits, .srclink, .hideme, \
.test-arrow";

/// A page whose content is at least this share of link text (characters inside `<a>`), with at
/// least [`LINK_PAGE_MIN_LINKS`] links, is a list of links (a generated index, a table of
/// contents, rustdoc's `all.html`) and is left out unless `keep_link_pages` is set: its words are
/// the other pages' titles, which outrank the pages themselves.
pub const LINK_PAGE_SHARE: f64 = 0.5;
/// See [`LINK_PAGE_SHARE`].
pub const LINK_PAGE_MIN_LINKS: usize = 30;

/// File names of the pages Sphinx generates as indexes of the others (`genindex*.html`,
/// `py-modindex.html`, `search.html`): left out like link pages (their entries carry short
/// descriptions, so their link share can be under [`LINK_PAGE_SHARE`]).
fn is_generated_index(file_name: &str) -> bool {
    file_name.starts_with("genindex") && file_name.ends_with(".html")
        || (file_name.ends_with("-modindex.html") || file_name == "modindex.html")
        || file_name == "search.html"
}

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
    (link.len() > 1 && link.starts_with('/') && !link.starts_with("//"))
        || url_with("http://")
        || url_with("https://")
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

/// `id`, or `"{id} N"` for its N-th use (N ≥ 2) in `seen`.
fn unique_id(seen: &mut HashMap<String, usize>, id: String) -> String {
    let n = seen.entry(id.clone()).or_insert(0);
    *n += 1;
    if *n == 1 {
        id
    } else {
        format!("{id} {n}")
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Definition titles longer than this many characters are cut (at a character boundary, `…`
/// added): a long signature is still a title.
const MAX_DEFINITION_TITLE_CHARS: usize = 120;

/// Collects a page's sections into passages.
struct PageWriter<'a> {
    url: String,
    page_title: String,
    /// Heading texts by level 1..=6 (index 0 = h1).
    path: [Option<String>; 6],
    /// Their anchors: a heading without one links to its nearest enclosing heading's.
    anchors: [Option<String>; 6],
    /// The definitions (`<dt id=…>`) the text is in, outermost first: (title part, anchor).
    definitions: Vec<(String, String)>,
    section: Section,
    /// The texts of this page's sections so far: an identical section is written once.
    texts: std::collections::HashSet<String>,
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
            definitions: Vec::new(),
            section,
            texts: std::collections::HashSet::new(),
            out,
            seen,
        }
    }

    /// The title path of the current headings and definitions, `"Page › Heading › Definition"`:
    /// a part equal to the one before it is not repeated, nor a first heading that the page
    /// title starts with (`<h1>asyncio</h1>` under the title "asyncio — Asynchronous I/O").
    fn title_path(&self) -> String {
        let mut parts = vec![self.page_title.clone()];
        let mut first = true;
        let heads = self.path.iter().flatten().cloned();
        let defs = self.definitions.iter().map(|(t, _)| t.clone());
        for p in heads.chain(defs) {
            let repeats_title = first && !p.is_empty() && self.page_title.starts_with(p.as_str());
            first = false;
            if !p.is_empty() && parts.last() != Some(&p) && !repeats_title {
                parts.push(p);
            }
        }
        parts.join(" › ")
    }

    /// The anchor of the innermost definition, else of the nearest heading that has one.
    fn current_anchor(&self) -> Option<String> {
        match self.definitions.last() {
            Some((_, a)) => Some(a.clone()),
            None => self.anchors.iter().rev().flatten().next().cloned(),
        }
    }

    fn heading(&mut self, level: usize, text: &str, anchor: Option<String>) {
        self.flush();
        let level = level.clamp(1, 6);
        self.definitions.clear();
        self.path[level - 1] = Some(collapse(text));
        self.anchors[level - 1] = anchor.filter(|a| !a.is_empty());
        for p in self.path.iter_mut().skip(level) {
            *p = None;
        }
        for a in self.anchors.iter_mut().skip(level) {
            *a = None;
        }
        self.restart();
    }

    /// A definition (`<dt id=…>`, Sphinx's API entries and glossary terms) begins a section of
    /// its own, `depth` definitions deep (the ones outside it are kept).
    fn definition(&mut self, depth: usize, text: &str, anchor: String) {
        self.flush();
        self.definitions.truncate(depth);
        let mut title = collapse(text);
        if let Some((cut, _)) = title.char_indices().nth(MAX_DEFINITION_TITLE_CHARS) {
            title.truncate(cut);
            title.push('…');
        }
        self.definitions.push((title, anchor));
        self.restart();
    }

    /// The end of a definition list: its text after it belongs to the definition or heading
    /// around the list again.
    fn end_definitions(&mut self, depth: usize) {
        if self.definitions.len() > depth {
            self.flush();
            self.definitions.truncate(depth);
            self.restart();
        }
    }

    fn restart(&mut self) {
        self.section =
            Section { title: self.title_path(), anchor: self.current_anchor(), ..Section::default() };
    }

    fn unique(&mut self, id: String) -> String {
        unique_id(self.seen, id)
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
            // the same text twice on one page (a repeated notice, a duplicated list): once
            if !self.texts.insert(text.clone()) {
                continue;
            }
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

/// How [`read_site_with`] finds each page's content (module docs).
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// A CSS selector for the content of every page (`--selector`, e.g. `div.body`): every
    /// element it matches is read, in document order. A page without a match is read by the
    /// default rule and counted in a warning. Default: none.
    pub selector: Option<String>,
    /// More CSS selectors to leave out, besides [`CHROME_SELECTORS`] (`--exclude-selector`).
    pub exclude: Vec<String>,
    /// Keep link pages and generated indexes ([`LINK_PAGE_SHARE`]). Default: left out.
    pub keep_link_pages: bool,
}

/// The compiled rules of [`ReadOptions`].
pub struct HtmlRules {
    selector: Option<Selector>,
    body_attr: Selector,
    main: Selector,
    chrome: Vec<Selector>,
    dl_dt: Selector,
    title: Selector,
    h1: Selector,
    any_id: Selector,
    refresh: Selector,
    robots: Selector,
}

impl HtmlRules {
    /// Compiles `opts`' selectors.
    ///
    /// # Errors
    /// [`Error::Site`] naming the option (path `--selector` or `--exclude-selector`) when a
    /// selector is not valid CSS.
    pub fn new(opts: &ReadOptions) -> Result<Self> {
        let parse = |option: &str, s: &str| {
            Selector::parse(s).map_err(|e| Error::Site {
                path: option.to_string(),
                message: format!("{s:?} is not a CSS selector this reader understands ({e})"),
            })
        };
        let fixed = |s: &str| parse("built-in selector", s);
        let mut chrome = vec![fixed(CHROME_SELECTORS)?];
        for s in &opts.exclude {
            chrome.push(parse("--exclude-selector", s)?);
        }
        Ok(HtmlRules {
            selector: opts.selector.as_deref().map(|s| parse("--selector", s)).transpose()?,
            body_attr: fixed("[data-cairn-body]")?,
            main: fixed("main, [role=main]")?,
            chrome,
            dl_dt: fixed("dt[id]")?,
            title: fixed("title")?,
            h1: fixed("h1")?,
            any_id: fixed("[id]")?,
            refresh: fixed("meta[http-equiv=refresh i]")?,
            robots: fixed("meta[name=robots i]")?,
        })
    }
}

/// What one HTML page gave: its title, whether `--selector` matched, and how much of its
/// content was link text (for [`LINK_PAGE_SHARE`]).
#[derive(Debug, Default, Clone, Copy)]
struct PageStats {
    chars: usize,
    link_chars: usize,
    links: usize,
    selector_missed: bool,
    redirect: bool,
}

/// The passages of one HTML page served at `url` (module docs), read with the default
/// [`ReadOptions`]. `fallback_title` is used when the page has neither `<title>` nor `<h1>`.
/// Never fails: malformed HTML is parsed as a browser would.
pub fn html_passages(html: &str, url: &str, fallback_title: &str) -> Vec<Passage> {
    let mut out = Vec::new();
    if let Ok(rules) = HtmlRules::new(&ReadOptions::default()) {
        html_into(html, url, fallback_title, &rules, &mut out, &mut HashMap::new());
    }
    out
}

/// Reads one page into `out`; returns its title and statistics.
fn html_into(
    html: &str,
    url: &str,
    fallback_title: &str,
    rules: &HtmlRules,
    out: &mut Vec<Passage>,
    seen: &mut HashMap<String, usize>,
) -> (String, PageStats) {
    let doc = Html::parse_document(html);
    // a redirect page (`<meta http-equiv="refresh">`, as rustdoc writes for re-exports) has no
    // content of its own: the page it leads to is indexed
    // so is a page that asks search engines not to index it (`<meta name="robots"
    // content="noindex">`, as mdBook's print.html, the whole book on one page, does)
    let noindex = doc
        .select(&rules.robots)
        .any(|m| m.value().attr("content").is_some_and(|c| c.to_ascii_lowercase().contains("noindex")));
    if noindex || doc.select(&rules.refresh).next().is_some() {
        return (String::new(), PageStats { redirect: true, ..PageStats::default() });
    }
    let text_of = |e: ElementRef<'_>| collapse(&e.text().collect::<String>());
    let title = doc.select(&rules.title).next().map(text_of).filter(|t| !t.is_empty());
    let title = title
        .or_else(|| doc.select(&rules.h1).next().map(text_of).filter(|t| !t.is_empty()))
        .unwrap_or_else(|| fallback_title.to_string());
    let mut stats = PageStats::default();
    // The content: --selector's matches; else the elements marked data-cairn-body; else <main>
    // or [role=main]; else <body>.
    let mut roots: Vec<ElementRef<'_>> = Vec::new();
    if let Some(sel) = &rules.selector {
        roots = doc.select(sel).collect();
        stats.selector_missed = roots.is_empty();
    }
    if roots.is_empty() {
        roots = doc.select(&rules.body_attr).collect();
    }
    if roots.is_empty() {
        roots = doc.select(&rules.main).take(1).collect();
    }
    if roots.is_empty() {
        let body = Selector::parse("body").ok().and_then(|s| doc.select(&s).next());
        roots.push(body.unwrap_or_else(|| doc.root_element()));
    }
    // a root inside another root is read with it
    let ids: std::collections::HashSet<_> = roots.iter().map(|r| r.id()).collect();
    roots.retain(|r| !r.ancestors().any(|a| ids.contains(&a.id())));
    let mut skip = std::collections::HashSet::new();
    for root in &roots {
        for sel in &rules.chrome {
            skip.extend(root.select(sel).map(|e| e.id()));
        }
    }
    let mut w = PageWriter::new(url.to_string(), title.clone(), out, seen);
    let mut walker = Walker { rules, skip, stats: &mut stats };
    for root in roots {
        walker.walk(root, &mut w, false);
    }
    w.flush();
    (title, stats)
}

/// A heading's text without its permalink: an `<a>` whose whole text is `¶`, `§`, `#` or `🔗`
/// (Sphinx, MkDocs and many themes add one to every heading).
fn heading_text(h: ElementRef<'_>, skip: &std::collections::HashSet<ego_tree::NodeId>) -> String {
    let mut out = String::new();
    for node in h.descendants() {
        let Node::Text(t) = node.value() else { continue };
        if node.ancestors().take_while(|a| a.id() != h.id()).any(|a| skip.contains(&a.id())) {
            continue;
        }
        let in_link =
            node.parent().and_then(|p| p.value().as_element().map(|el| el.name() == "a")) == Some(true);
        if in_link && ["¶", "§", "#", "🔗"].contains(&t.trim()) {
            continue;
        }
        out.push_str(t);
    }
    out
}

/// The walk of one page's content.
struct Walker<'r, 's> {
    rules: &'r HtmlRules,
    /// The chrome elements found under the content roots.
    skip: std::collections::HashSet<ego_tree::NodeId>,
    stats: &'s mut PageStats,
}

impl Walker<'_, '_> {
    fn walk(&mut self, e: ElementRef<'_>, w: &mut PageWriter<'_>, in_link: bool) {
        // Sphinx and others put a section's id on its wrapper (`<section id="install"><h2>…`),
        // not on the heading: the first heading in a section, div or article takes the wrapper's
        // id.
        let wrapper_id = e
            .value()
            .id()
            .filter(|_| ["section", "div", "article"].contains(&e.value().name()))
            .map(str::to_string);
        let mut heading_seen = false;
        // a definition list: its definitions nest in the ones around it
        let depth = w.definitions.len();
        for child in e.children() {
            match child.value() {
                Node::Text(t) => {
                    let n = t.chars().filter(|c| !c.is_whitespace()).count();
                    self.stats.chars += n;
                    if in_link {
                        self.stats.link_chars += n;
                    }
                    w.section.push_text(t);
                }
                Node::Element(el) => {
                    let Some(ce) = ElementRef::wrap(child) else { continue };
                    if self.skip.contains(&ce.id()) {
                        continue;
                    }
                    let name = el.name();
                    if let Some(level) = heading_level(name) {
                        let text = heading_text(ce, &self.skip);
                        let anchor = el
                            .id()
                            .map(str::to_string)
                            .or_else(|| {
                                ce.select(&self.rules.any_id)
                                    .find(|a| {
                                        !a.ancestors().any(|x| self.skip.contains(&x.id()))
                                            && !self.skip.contains(&a.id())
                                    })
                                    .and_then(|a| a.value().id().map(str::to_string))
                            })
                            .or_else(|| wrapper_id.clone().filter(|_| !heading_seen));
                        heading_seen = true;
                        w.heading(level, &text, anchor);
                        continue;
                    }
                    if name == "dt" {
                        if let Some(id) = el.id().filter(|id| !id.is_empty()) {
                            w.definition(depth, &heading_text(ce, &self.skip), id.to_string());
                        }
                    }
                    let link = name == "a" && el.attr("href").is_some();
                    if link {
                        self.stats.links += 1;
                    }
                    // Inline elements join their text as a browser renders it ("<b>a</b>b" is "ab").
                    let block = BLOCKS.contains(&name);
                    if block {
                        w.section.end_block();
                    }
                    self.walk(ce, w, in_link || link);
                    if block {
                        w.section.end_block();
                    }
                    if name == "dl" && ce.select(&self.rules.dl_dt).next().is_some() {
                        w.end_definitions(w.definitions.len().min(depth));
                    }
                }
                _ => {}
            }
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
) -> String {
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
    let mut w = PageWriter::new(url.to_string(), title.clone(), out, seen);
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
    title
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
    /// Pages left out as lists of links or generated indexes (paths relative to the site),
    /// unless [`ReadOptions::keep_link_pages`].
    pub link_pages: Vec<String>,
    /// Redirect pages (`<meta http-equiv="refresh">`) and pages marked
    /// `<meta name="robots" content="noindex">` left out.
    pub redirects: usize,
    /// The site-wide title suffix dropped from every title that had it.
    pub title_suffix: Option<String>,
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

/// Every `.html`, `.htm`, `.md` and `.markdown` page and `.pdf` and `.docx` file under `root`
/// as passages (module docs),
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
    read_site_with(root, base_url, skip, &ReadOptions::default())
}

/// [`read_site`] with the content rules of `opts` (module docs): `--selector`, more chrome to
/// leave out, and whether link pages are kept. Link pages and generated indexes left out are
/// counted in [`SitePages::link_pages`]; a site-wide title suffix is dropped
/// ([`common_title_suffix`]).
///
/// # Errors
/// As [`read_site`]; also [`Error::Site`] when a selector of `opts` is not valid CSS.
pub fn read_site_with(
    root: &Path,
    base_url: &str,
    skip: &[PathBuf],
    opts: &ReadOptions,
) -> Result<SitePages> {
    let rules = HtmlRules::new(opts)?;
    let mut link_pages = Vec::new();
    let mut selector_missed = Vec::new();
    let mut redirects = 0;
    // each page's passages (a range of `out`) and title, for the title suffix
    let mut spans: Vec<(usize, usize, String)> = Vec::new();
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
        let rel_str: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let rel_str = rel_str.join("/");
        if let Some(kind) = DocumentKind::of(rel) {
            let url = format!("{base}{}", encode(&rel_str, true));
            let name = rel_str.rsplit('/').next().unwrap_or(&rel_str);
            match document_into(kind, &bytes, name, &url, &mut out, &mut seen) {
                Ok(notes) => warnings.extend(notes.into_iter().map(|n| format!("{}: {n}", path.display()))),
                Err(e) => warnings.push(format!("{}: skipped: {e}", path.display())),
            }
            continue;
        }
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
        let title = if ext == "md" || ext == "markdown" {
            markdown_into(&text, &url, &stem, &mut out, &mut seen)
        } else {
            let (title, stats) = html_into(&text, &url, &stem, &rules, &mut out, &mut seen);
            if stats.redirect {
                redirects += 1;
                continue;
            }
            if stats.selector_missed {
                selector_missed.push(rel_str.clone());
            }
            let file_name = rel_str.rsplit('/').next().unwrap_or(&rel_str);
            let link_page = stats.links >= LINK_PAGE_MIN_LINKS
                && stats.link_chars as f64 >= LINK_PAGE_SHARE * stats.chars as f64;
            if !opts.keep_link_pages && (link_page || is_generated_index(file_name)) && out.len() > before {
                out.truncate(before);
                link_pages.push(rel_str.clone());
                continue;
            }
            title
        };
        spans.push((before, out.len(), title));
        if out.len() == before {
            warnings.push(format!("{}: no text to index", path.display()));
        }
    }
    if files.is_empty() {
        return Err(Error::Site {
            path: root.display().to_string(),
            message: "no .html, .htm, .md, .markdown, .pdf or .docx file found".into(),
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
    if let (Some(first), Some(sel)) = (selector_missed.first(), &opts.selector) {
        warnings.push(format!(
            "{}: --selector {sel:?} matches nothing on {} page{} (the first: {first}): read by the default rule",
            root.display(),
            selector_missed.len(),
            if selector_missed.len() == 1 { "" } else { "s" },
        ));
    }
    let title_suffix = common_title_suffix(spans.iter().map(|s| s.2.as_str()));
    if let Some(suffix) = &title_suffix {
        for (a, b, title) in &spans {
            let Some(short) = title.strip_suffix(suffix.as_str()).filter(|t| !t.trim().is_empty()) else {
                continue;
            };
            for p in &mut out[*a..*b] {
                if let Some(rest) = p.title.strip_prefix(title.as_str()) {
                    // "Short › Short › …" when the first heading was the short title itself
                    let rest = match rest.strip_prefix(" › ").and_then(|r| r.strip_prefix(short)) {
                        Some(r) if r.is_empty() || r.starts_with(" › ") => r,
                        _ => rest,
                    };
                    p.title = format!("{short}{rest}");
                }
            }
        }
    }
    Ok(SitePages { passages: out, pages: files.len(), warnings, link_pages, redirects, title_suffix })
}

/// Separators before a site-wide title suffix: `"asyncio — Python 3.11.2 documentation"`,
/// `"Vec in std::vec - Rust"`, `"Intro | My Site"`.
const TITLE_SEPARATORS: [&str; 6] = [" — ", " – ", " - ", " | ", " · ", " :: "];

/// The title suffix most pages share, separator included (`" — Python 3.11.2 documentation"`),
/// when at least half of the titles (and at least two) end with it; `None` otherwise. A title's
/// candidate is what follows its last separator ([`TITLE_SEPARATORS`]).
pub fn common_title_suffix<'a>(titles: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut n = 0;
    for t in titles {
        n += 1;
        let at = TITLE_SEPARATORS.iter().filter_map(|sep| t.rfind(sep)).max();
        if let Some(at) = at.filter(|&i| i > 0) {
            *counts.entry(&t[at..]).or_insert(0) += 1;
        }
    }
    let (suffix, count) = counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))?;
    (count >= 2 && 2 * count >= n).then(|| suffix.to_string())
}

/// The passages of document `bytes` (a PDF or .docx file named `name`, linked as `url`) into
/// `out`: the text the page makes of it ([`crate::documents`]) split as the page splits it
/// ([`split_document`]: titles `"name › heading"`, `"name › page N"`). A PDF passage links to
/// its page (`url#page=N`, which browsers' PDF viewers open at that page), a .docx passage to
/// the file. Returns notes on pages that could not be read.
///
/// # Errors
/// The reason the file cannot be read, or has no text (a scanned PDF).
fn document_into(
    kind: DocumentKind,
    bytes: &[u8],
    name: &str,
    url: &str,
    out: &mut Vec<Passage>,
    seen: &mut HashMap<String, usize>,
) -> std::result::Result<Vec<String>, DocumentError> {
    let mut add = |text: &str, link: String| {
        for p in split_document(name, text) {
            out.push(Passage { id: unique_id(seen, link.clone()), ..p });
        }
    };
    match kind {
        DocumentKind::Pdf => {
            let pages = pdf_pages(bytes)?;
            if !pages.has_text() {
                return Err(DocumentError(match pages.warnings.first() {
                    Some(first) => format!("no page could be read ({first})"),
                    None => {
                        "no text in it (a scanned PDF holds images of text, which Cairn cannot read)".into()
                    }
                }));
            }
            for (n, lines) in &pages.pages {
                if let Some(text) = page_text(*n, lines) {
                    add(&text, format!("{url}#page={n}"));
                }
            }
            Ok(pages.warnings)
        }
        DocumentKind::Docx => {
            let text = docx_text(bytes)?;
            if text.trim().is_empty() {
                return Err(DocumentError("no text in it".into()));
            }
            add(&text, url.to_string());
            Ok(Vec::new())
        }
    }
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
            if ["html", "htm", "md", "markdown", "pdf", "docx"].contains(&ext.as_str()) {
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
    fn sphinx_page_content_not_chrome_definitions_and_repeated_sections() {
        let html = r##"<title>asyncio — Python 3.11 documentation</title><body>
<div class="related" role="navigation"><a href="/">previous</a> next</div>
<div class="body" role="main"><section id="tasks"><h1>Tasks<a class="headerlink" href="#tasks">¶</a></h1>
<nav class="contents local" id="contents"><p>Table of Contents</p><ul><li><a href="#gather">gather</a></li></ul></nav>
<p>Run things.</p>
<dl class="py function"><dt class="sig" id="asyncio.gather">awaitable <span>asyncio.gather</span>(*aws)<a class="headerlink" href="#asyncio.gather">¶</a></dt>
<dd><p>Run awaitables concurrently.</p>
<dl class="py method"><dt id="asyncio.gather.cancel">cancel()</dt><dd><p>Cancel it.</p></dd></dl>
<p>After the method.</p></dd></dl>
<p>After the list.</p></section><section id="again"><h2>Again</h2><p>Run things.</p></section></div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><p>Tasks</p></div>
<div class="footer">© Copyright</div></body>"##;
        let rows: Vec<(String, String, String)> =
            html_passages(html, "/t.html", "x").into_iter().map(|p| (p.id, p.title, p.text)).collect();
        let t = |title: &str| format!("asyncio — Python 3.11 documentation{title}");
        let want = vec![
            ("/t.html#tasks".to_string(), t(" › Tasks"), "Run things.".to_string()),
            (
                "/t.html#asyncio.gather".to_string(),
                t(" › Tasks › awaitable asyncio.gather(*aws)"),
                "awaitable asyncio.gather(*aws) Run awaitables concurrently.".to_string(),
            ),
            (
                "/t.html#asyncio.gather.cancel".to_string(),
                t(" › Tasks › awaitable asyncio.gather(*aws) › cancel()"),
                "cancel() Cancel it.".to_string(),
            ),
            (
                "/t.html#asyncio.gather 2".to_string(),
                t(" › Tasks › awaitable asyncio.gather(*aws)"),
                "After the method.".to_string(),
            ),
            ("/t.html#tasks 2".to_string(), t(" › Tasks"), "After the list.".to_string()),
            // the section "Again" repeats "Run things." on this page: not a second passage
        ];
        assert_eq!(rows, want);
    }

    #[test]
    fn content_attribute_selector_and_exclusions() {
        let html = r#"<title>P</title><body><p>outside</p><main><div data-cairn-body><p>inside</p>
<p class="ad">buy</p><p data-cairn-ignore>skip me</p></div><p>main but not body</p></main></body>"#;
        let texts = |opts: &ReadOptions| {
            let rules = HtmlRules::new(opts).unwrap();
            let mut out = Vec::new();
            let (_, stats) = html_into(html, "/p.html", "p", &rules, &mut out, &mut HashMap::new());
            (out.into_iter().map(|p| p.text).collect::<Vec<_>>(), stats.selector_missed)
        };
        assert_eq!(texts(&ReadOptions::default()), (vec!["inside buy".to_string()], false));
        let opts = ReadOptions { exclude: vec![".ad".into()], ..ReadOptions::default() };
        assert_eq!(texts(&opts), (vec!["inside".to_string()], false));
        let opts = ReadOptions { selector: Some("main > p".into()), ..ReadOptions::default() };
        assert_eq!(texts(&opts), (vec!["main but not body".to_string()], false));
        let opts = ReadOptions { selector: Some("article".into()), ..ReadOptions::default() };
        assert_eq!(texts(&opts), (vec!["inside buy".to_string()], true));
        let bad = ReadOptions { selector: Some("p[".into()), ..ReadOptions::default() };
        assert!(matches!(HtmlRules::new(&bad), Err(Error::Site { ref path, .. }) if path == "--selector"));
    }

    #[test]
    fn title_suffix_link_pages_generated_indexes_and_redirects() {
        assert_eq!(
            common_title_suffix(["a — Docs 3", "b — c — Docs 3", "Docs 3", "d - x"].into_iter()),
            Some(" — Docs 3".to_string())
        );
        assert_eq!(common_title_suffix(["a — x", "b — y", "c"].into_iter()), None);
        let dir = std::env::temp_dir().join(format!("cairn-site-rules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let page = |title: &str, body: &str| format!("<title>{title} — Docs 3</title><main>{body}</main>");
        std::fs::write(
            dir.join("a.html"),
            page("Alpha", "<h1>Alpha</h1><p>Alpha text.</p><h2 id=more>More</h2><p>x</p>"),
        )
        .unwrap();
        std::fs::write(dir.join("b.html"), page("Beta", "<p>Beta text.</p>")).unwrap();
        let links: String =
            (0..30).map(|i| format!(r#"<li><a href="/p{i}.html">page {i}</a></li>"#)).collect();
        std::fs::write(
            dir.join("contents.html"),
            page("Contents", &format!("<p>All pages:</p><ul>{links}</ul>")),
        )
        .unwrap();
        std::fs::write(dir.join("genindex-A.html"), page("Index", "<p>abs() (built-in function)</p>"))
            .unwrap();
        std::fs::write(
            dir.join("old.html"),
            r#"<meta http-equiv="Refresh" content="0;URL=a.html"><p>Redirecting</p>"#,
        )
        .unwrap();
        std::fs::write(dir.join("print.html"), r#"<meta name="robots" content="noindex" /><p>Alpha text.</p>"#).unwrap();
        let got = read_site_with(&dir, "/", &[], &ReadOptions::default()).unwrap();
        let rows: Vec<(&str, &str)> =
            got.passages.iter().map(|p| (p.id.as_str(), p.title.as_str())).collect();
        assert_eq!(rows, vec![("/a.html", "Alpha"), ("/a.html#more", "Alpha › More"), ("/b.html", "Beta")]);
        assert_eq!(got.title_suffix.as_deref(), Some(" — Docs 3"));
        assert_eq!(got.link_pages, vec!["contents.html".to_string(), "genindex-A.html".to_string()]);
        assert_eq!(got.redirects, 2);
        let kept =
            read_site_with(&dir, "/", &[], &ReadOptions { keep_link_pages: true, ..ReadOptions::default() })
                .unwrap();
        assert_eq!(kept.passages.len(), 5);
        assert!(kept.link_pages.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn main_element_wins_and_long_sections_are_cut_at_blocks() {
        let para = "word ".repeat(200); // 1000 characters once collapsed (999)
        let other = "text ".repeat(200);
        let html = format!(
            "<html><body><p>outside main</p><main><h2 id=a>A</h2><p>{para}</p><p>{other}</p></main></body></html>"
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

    /// PDF and .docx files among the pages: split as the page splits them (titles "file ›
    /// heading", "file › page N"), linked to the file (a PDF's passages to their page); a file
    /// that cannot be read, or has no text, is a warning and the rest of the folder is read.
    #[test]
    fn documents_are_read_as_the_page_reads_them() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents");
        let got = read_site(&dir, "/docs/", &[]).unwrap();
        let rows: Vec<(&str, &str, &str)> =
            got.passages.iter().map(|p| (p.id.as_str(), p.title.as_str(), p.text.as_str())).collect();
        let survey = "field-notes.docx › Moorland survey";
        let weather = "field-notes.docx › Weather";
        assert_eq!(
            rows,
            vec![
                ("/docs/field-notes.docx", "field-notes.docx", "Field notes from Tarnwick"),
                (
                    "/docs/field-notes.docx 2",
                    survey,
                    "The survey of Tarnwick Moor counted forty curlew nests.[1]"
                ),
                ("/docs/field-notes.docx 3", survey, "\\# is not a heading here, only a hash sign"),
                ("/docs/field-notes.docx 4", weather, "Rain fell on nine days in May."),
                ("/docs/field-notes.docx 5", weather, "Sheep counted"),
                ("/docs/field-notes.docx 6", weather, "212 ewes"),
                ("/docs/field-notes.docx 7", weather, "Before the box."),
                ("/docs/field-notes.docx 8", weather, "A text box about peat cutting."),
                ("/docs/field-notes.docx 9", weather, "Recorded by the Tarnwick wardens."),
                ("/docs/field-notes.docx 10", weather, "Page 7 of the warden log."),
                ("/docs/field-notes.docx 11", weather, "Nest counts by the county bird club. ↑"),
                (
                    "/docs/moor-report.pdf#page=1",
                    "moor-report.pdf › page 1",
                    "Tarnwick Moor report The curlew is the emblem of the moor. Peat cutting ended in 1962."
                ),
                (
                    "/docs/moor-report.pdf#page=3",
                    "moor-report.pdf › page 3",
                    "\\# 3 is a number, not a heading Sheep graze the southern slope of Tarnwick Moor."
                ),
            ]
        );
        // the same titles and texts as the page's passages: its text of each file (the .txt
        // beside it) split by the same function
        for name in ["field-notes.docx", "moor-report.pdf"] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
            let page: Vec<(String, String)> =
                split_document(name, &text).into_iter().map(|p| (p.title, p.text)).collect();
            let cli: Vec<(String, String)> = got
                .passages
                .iter()
                .filter(|p| p.id.starts_with(&format!("/docs/{name}")))
                .map(|p| (p.title.clone(), p.text.clone()))
                .collect();
            assert_eq!(cli, page, "{name}");
        }
        assert_eq!(got.pages, 6);
        let w = got.warnings.join("\n");
        assert_eq!(got.warnings.len(), 4, "{w}");
        let said = |file: &str, why: &str| {
            let line = format!("{}: skipped: {why}", dir.join(file).display());
            assert!(got.warnings.iter().any(|l| l.starts_with(&line)), "{line} not in\n{w}");
        };
        said("broken.pdf", "not a PDF that can be read (");
        said("locked.pdf", "the PDF is password-protected");
        said(
            "not-a-zip.docx",
            "not a Word (.docx) file that can be read (it is not a zip archive, as every .docx is)",
        );
        said("scanned.pdf", "no text in it (a scanned PDF holds images of text, which Cairn cannot read)");
    }
}
