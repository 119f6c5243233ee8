// The page's elements by id, and an SVG element helper. Passage text and titles are user data
// and are only ever put in the page as text nodes and <mark> elements, never as HTML.

export const $ = (id) => document.getElementById(id);
export const el = {
  error: $('error'),
  errorMessage: $('error-message'),
  errorDismiss: $('error-dismiss'),
  status: $('status'),
  sources: $('sources'),
  progressRow: $('progress-row'),
  progress: $('progress'),
  progressLabel: $('progress-label'),
  cancel: $('cancel'),
  notice: $('notice'),
  noticeText: $('notice-text'),
  reloadDemo: $('reload-demo'),
  loadDemo: $('load-demo'),
  modeReplace: $('mode-replace'),
  dropzone: $('dropzone'),
  fileInput: $('file-input'),
  paste: $('paste'),
  pasteName: $('paste-name'),
  indexText: $('index-text'),
  form: $('search-form'),
  query: $('query'),
  search: $('search'),
  k: $('k'),
  method: $('method'),
  methodHint: $('method-hint'),
  examples: $('examples'),
  exampleList: $('example-list'),
  questionInfo: $('question-info'),
  resultsMeta: $('results-meta'),
  results: $('results'),
  version: $('version'),
  graphInfo: $('graph-info'),
  saveIndex: $('save-index'),
  exportIndex: $('export-index'),
  importIndex: $('import-index'),
  importLabel: $('import-label'),
  shareLink: $('share-link'),
  shareUrl: $('share-url'),
  savedList: $('saved-list'),
};

export const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

