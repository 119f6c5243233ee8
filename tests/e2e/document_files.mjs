// PDF and Word (.docx) files written byte by byte with known text, for the page's document
// tests (documents.test.mjs) and the fixtures that the CLI and the page are both checked against
// (scripts/make_document_fixtures.mjs → tests/fixtures/documents/).
import zlib from 'node:zlib';

/**
 * A one-font PDF (Helvetica, a standard Type1 font: no font file needed) with one page per
 * entry of `pages`, each a list of lines drawn top-down. A line is a string (one `Tj`), or
 * `{ tj: ['word', -600, 'word'] }` (one `TJ` whose numbers move the pen left by thousandths of
 * the font size: a negative number is a gap), or `{ ops: '…' }` (content operators outside the
 * text object: a page of `{ ops }` only has no text layer, as a scanned page has none). Offsets
 * in the xref table are counted here, byte by byte (the text is ASCII).
 */
export function makePdf(pages) {
  const objects = [];
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  pages.forEach((lines, i) => {
    const esc = (s) => s.replace(/[\\()]/g, (c) => `\\${c}`);
    const show = (l) => (typeof l === 'string'
      ? `(${esc(l)}) Tj`
      : `[${l.tj.map((x) => (typeof x === 'number' ? String(x) : `(${esc(x)})`)).join(' ')}] TJ`);
    const text = lines.filter((l) => !(typeof l === 'object' && l.ops));
    const graphics = lines.filter((l) => typeof l === 'object' && l.ops).map((l) => l.ops);
    const ops = [
      ...graphics,
      ...(text.length ? ['BT', '/F1 12 Tf', '16 TL', '72 720 Td', ...text.map((l, j) => `${j ? 'T* ' : ''}${show(l)}`), 'ET'] : []),
    ].join('\n');
    objects[4 + 2 * i] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objects[5 + 2 * i] = `<< /Length ${Buffer.byteLength(ops)} >>\nstream\n${ops}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets = [];
  for (let id = 1; id < objects.length; id += 1) {
    offsets[id] = Buffer.byteLength(out);
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id += 1) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A zip archive (stored, no compression) of `files`: [{name, data: Buffer}]. */
export function makeZip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data } of files) {
    const nameBuf = Buffer.from(name, 'utf8');
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0, 6); // flags
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0, 10); // time, date
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/**
 * A .docx of raw WordprocessingML: `body` (the inside of `<w:body>`), `styles` (the inside of
 * `<w:styles>`; default: a `Heading1` style named "heading 1") and, optionally, `footnotes`
 * (the inside of `<w:footnotes>`). The prefixes w:, v: (VML) and mc: are declared.
 */
export function makeDocxParts({ body, styles, footnotes }) {
  const xml = (s) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`, 'utf8');
  const ns = `xmlns:w="${W}" xmlns:v="urn:schemas-microsoft-com:vml" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`;
  const rels = ['<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'];
  const overrides = [
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>',
    '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>',
  ];
  const parts = [
    { name: 'word/styles.xml', data: xml(`<w:styles ${ns}>${styles ?? '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'}</w:styles>`) },
    { name: 'word/document.xml', data: xml(`<w:document ${ns}><w:body>${body}</w:body></w:document>`) },
  ];
  if (footnotes) {
    rels.push('<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>');
    overrides.push('<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>');
    parts.push({ name: 'word/footnotes.xml', data: xml(`<w:footnotes ${ns}>${footnotes}</w:footnotes>`) });
  }
  return makeZip([
    { name: '[Content_Types].xml', data: xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${overrides.join('')}</Types>`) },
    { name: '_rels/.rels', data: xml('<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>') },
    { name: 'word/_rels/document.xml.rels', data: xml(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join('')}</Relationships>`) },
    ...parts,
  ]);
}

/** A minimal .docx of `paragraphs` ({heading, text}): a heading is styled `Heading1`. */
export function makeDocx(paragraphs) {
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const body = paragraphs
    .map(({ heading, text }) => `<w:p>${heading ? '<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>' : ''}<w:r><w:t xml:space="preserve">${esc(text)}</w:t></w:r></w:p>`)
    .join('');
  return makeDocxParts({ body });
}
