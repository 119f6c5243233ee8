// Writes tests/fixtures/documents/: PDF and Word (.docx) files with known text that `cairn index`
// (src/documents.rs, tests in src/site.rs and tests/cli.rs) and the page's reader
// (www/ui/documents.js, tests/e2e/document_text.test.mjs) are both checked against, and broken
// ones. The password-protected PDF is made with qpdf (`apt-get install qpdf`); without it, that
// file is left as it is. Run: node scripts/make_document_fixtures.mjs
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeDocxParts, makePdf } from '../tests/e2e/document_files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'tests', 'fixtures', 'documents');
fs.mkdirSync(dir, { recursive: true });
const write = (name, data) => {
  fs.writeFileSync(path.join(dir, name), data);
  console.log(`${name}: ${data.length} bytes`);
};

// A report of three pages: the second has no text (a drawn rectangle only), the third starts
// with a line that reads like a Markdown heading; a TJ gap of 0.6 em stands for a space.
const report = makePdf([
  ['Tarnwick Moor report', 'The curlew is the emblem of the moor.', { tj: ['Peat', -600, 'cutting', -600, 'ended', -600, 'in', -600, '1962.'] }],
  [{ ops: '0.5 g 72 500 200 150 re f' }],
  ['# 3 is a number, not a heading', 'Sheep graze the southern slope of Tarnwick Moor.'],
]);
write('moor-report.pdf', report);

// Every rule of the .docx reader once: a Title paragraph (not a heading), a Heading1 by style
// id, a heading by style name ("heading 2" under the id Titre2) with a line break inside, a
// hyperlink, a tab, a line break and a footnote reference, a paragraph that reads like a
// Markdown heading, tracked changes, a table, a text box, a content control, a field code, an
// empty paragraph.
const t = (s) => `<w:r><w:t xml:space="preserve">${s}</w:t></w:r>`;
const p = (inner, style) => `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}${inner}</w:p>`;
const body = [
  p(t('Field notes from Tarnwick'), 'Title'),
  p(t('Moorland survey'), 'Heading1'),
  p(`${t('The survey of ')}<w:hyperlink w:anchor="moor">${t('Tarnwick Moor')}</w:hyperlink>${t(' counted')}<w:r><w:tab/><w:t>forty</w:t><w:br/><w:t>curlew nests.</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r>`),
  p(t('# is not a heading here, only a hash sign')),
  p(`${t('Wea')}<w:r><w:br/></w:r>${t('ther')}`, 'Titre2'),
  p(`<w:ins w:id="1" w:author="a">${t('Rain fell ')}</w:ins><w:del w:id="2" w:author="a"><w:r><w:delText>Snow fell </w:delText></w:r></w:del>${t('on nine days in May.')}`),
  `<w:tbl><w:tr><w:tc>${p(t('Sheep counted'))}</w:tc><w:tc>${p(t('212 ewes'))}</w:tc></w:tr></w:tbl>`,
  p(`${t('Before the box.')}<w:r><w:pict><v:shape><v:textbox><w:txbxContent>${p(t('A text box about peat cutting.'))}</w:txbxContent></v:textbox></v:shape></w:pict></w:r>`),
  `<w:sdt><w:sdtPr/><w:sdtContent>${p(t('Recorded by the Tarnwick wardens.'))}</w:sdtContent></w:sdt>`,
  p(`${t('Page ')}<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>${t('7')}<w:r><w:fldChar w:fldCharType="end"/></w:r>${t(' of the warden log.')}`),
  p(''),
].join('');
const styles = [
  '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>',
  '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>',
  '<w:style w:type="paragraph" w:styleId="Titre2"><w:name w:val="heading 2"/></w:style>',
].join('');
const footnotes = [
  '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>',
  '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>',
  `<w:footnote w:id="1">${p(`<w:r><w:footnoteRef/></w:r>${t(' Nest counts by the county bird club.')}`)}</w:footnote>`,
].join('');
write('field-notes.docx', makeDocxParts({ body, styles, footnotes }));

// Bad files: a scanned page (no text layer), a PDF that is not one, a .docx that is not a zip.
write('scanned.pdf', makePdf([[{ ops: '0.2 g 72 300 468 400 re f' }]]));
write('broken.pdf', Buffer.from('%PDF-1.4\nthis is not really a PDF\n'));
write('not-a-zip.docx', Buffer.from('PK not a zip at all'));
try {
  const locked = path.join(dir, 'locked.pdf');
  // 256-bit AES, a user password needed to open it
  execFileSync('qpdf', ['--encrypt', 'tarnwick', 'owner-secret', '256', '--', path.join(dir, 'moor-report.pdf'), locked]);
  console.log(`locked.pdf: ${fs.statSync(locked).size} bytes`);
} catch (e) {
  console.log(`locked.pdf: not written (qpdf: ${e.message.split('\n')[0]})`);
}
