// Documents people have: HTML pages, Word (.docx) and PDF files become text that the engine
// splits into passages (Engine.addDocument: a paragraph a passage, a heading the title of the
// paragraphs after it, "file › heading"). HTML is read with the browser's DOMParser (skipping
// the page chrome the CLI's site reader skips); DOCX with mammoth and PDF with pdf.js, each
// loaded from this site only when a file of its kind is added (dynamic import: the page's main
// bundle does not carry them). A PDF's pages are its sections: "report.pdf › page 3".

/** Elements whose text is not the page's content (as `cairn index` reads a site). */
const SKIPPED = new Set(['nav', 'header', 'footer', 'aside', 'script', 'style', 'noscript', 'template', 'svg', 'iframe', 'form']);
/** Elements that end a paragraph. */
const BLOCKS = new Set([
  'address', 'article', 'blockquote', 'body', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'hr', 'li', 'main', 'ol', 'p', 'pre', 'section', 'summary', 'table', 'tbody', 'td', 'tfoot',
  'th', 'thead', 'tr', 'ul',
]);
const HEADING = /^h([1-6])$/;

/** The document kind of a file name (`html`, `docx`, `pdf`), or null for text, Markdown, JSONL. */
export function documentKind(name) {
  const m = /\.(html?|xhtml|docx|pdf)$/i.exec(name);
  if (!m) return null;
  const ext = m[1].toLowerCase();
  return ext === 'docx' || ext === 'pdf' ? ext : 'html';
}

/** One line of text with its whitespace runs collapsed. */
function collapse(s) {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * A line of paragraph text that the splitter would read as a Markdown heading (`# …`) gets a
 * backslash, so that only real headings title passages.
 */
function paragraphLine(s) {
  return /^#{1,6}(\s|$)/.test(s) ? `\\${s}` : s;
}

/** A heading line for the splitter; its text on one line. */
function headingLine(level, text) {
  return `${'#'.repeat(level)} ${text.replace(/#+$/, '').trim()}`;
}

/**
 * The text of an HTML document as the splitter reads it: headings as `#` lines, every block
 * (paragraph, list item, table cell…) a paragraph of its own. Reads `<main>` when the page has
 * one, else `<body>`; skips nav, header, footer, aside, script, style, noscript, template, svg,
 * iframe, form and `hidden` elements.
 */
export function htmlToText(html) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const root = doc.querySelector('main') || doc.body;
  const out = [];
  let para = '';
  const flush = () => {
    const t = collapse(para);
    if (t) out.push(paragraphLine(t), '');
    para = '';
  };
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === 3) {
        para += child.nodeValue;
        continue;
      }
      if (child.nodeType !== 1) continue;
      const tag = child.localName;
      if (tag === 'br') {
        para += ' '; // a line break inside a paragraph (an address, a verse)
        continue;
      }
      if (SKIPPED.has(tag) || child.hasAttribute('hidden')) continue;
      const h = HEADING.exec(tag);
      if (h) {
        flush();
        const text = collapse(child.textContent);
        if (text) out.push(headingLine(Number(h[1]), text), '');
        continue;
      }
      const block = BLOCKS.has(tag);
      if (block) flush();
      walk(child);
      if (block) flush();
    }
  };
  if (root) walk(root);
  flush();
  return out.join('\n');
}

/** mammoth, loaded the first time a .docx file is added. */
async function loadMammoth() {
  const mod = await import(/* webpackChunkName: "mammoth" */ 'mammoth/mammoth.browser.js');
  return mod.default || mod;
}

/** The text of a .docx file: mammoth turns it into HTML (headings kept), read as above. */
export async function docxToText(bytes) {
  const mammoth = await loadMammoth();
  const { value } = await mammoth.convertToHtml({ arrayBuffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
  return htmlToText(value);
}

let pdfjs = null;

/** pdf.js, loaded (with its worker) the first time a PDF is added. */
async function loadPdfjs() {
  if (pdfjs) return pdfjs;
  // pdf.js's own builds: the library as a lazy chunk, its worker as a file (an asset of the
  // page's origin) that pdf.js starts itself
  const mod = await import(/* webpackChunkName: "pdfjs" */ 'pdfjs-dist/build/pdf.min.mjs');
  mod.GlobalWorkerOptions.workerSrc = new URL('pdfjs-dist/build/pdf.worker.min.mjs', import.meta.url).href;
  pdfjs = mod;
  return mod;
}

/**
 * The text of a PDF, a `# page N` section per page (lines of a page joined; a blank line where
 * pdf.js ends a paragraph-sized gap is not recoverable, so a page is one paragraph, which the
 * splitter cuts at sentences past its passage length). `onPage(done, total)` after each page.
 * Throws pdf.js's error for a file that is not a PDF, is encrypted, or is damaged.
 */
export async function pdfToText(bytes, onPage) {
  const lib = await loadPdfjs();
  const doc = await lib.getDocument({ data: bytes, isEvalSupported: false }).promise;
  try {
    const out = [];
    for (let n = 1; n <= doc.numPages; n += 1) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (typeof item.str !== 'string') continue;
        text += item.str;
        text += item.hasEOL ? '\n' : '';
      }
      const lines = text.split('\n').map(collapse).filter(Boolean);
      if (lines.length) out.push(headingLine(1, `page ${n}`), '', ...lines.map(paragraphLine), '');
      page.cleanup();
      if (onPage) onPage(n, doc.numPages);
    }
    return out.join('\n');
  } finally {
    doc.destroy();
  }
}

/**
 * The text of document `file` (a File) of kind `kind` (documentKind). `onProgress(done, total)`
 * reports a PDF's pages. Throws with a message that says what is wrong with the file.
 */
export async function documentText(file, kind, onProgress) {
  if (kind === 'html') return htmlToText(await file.text());
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (kind === 'docx') {
    try {
      return await docxToText(bytes);
    } catch (err) {
      const why = /central directory|zip/i.test(String(err.message || err))
        ? 'it is not a zip archive, as every .docx is'
        : String(err.message || err).replace(/\.$/, '');
      throw new Error(`not a Word (.docx) file that can be read (${why})`);
    }
  }
  try {
    return await pdfToText(bytes, onProgress);
  } catch (err) {
    const what = err && err.name === 'PasswordException' ? 'the PDF is password-protected' : `not a PDF that can be read (${String(err.message || err).replace(/\.$/, '')})`;
    throw new Error(what);
  }
}
