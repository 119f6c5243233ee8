// Cairn's page: plain DOM, no framework. The engine lives in a Web Worker (worker.js); the page
// only sends it messages and draws what comes back. This file wires the modules of ui/, one
// concern each (docs/method/ux.md, "The page's modules"):
//   dom, state, format   the page's elements, its state, number formatting
//   channel              the worker channel: posting, requests, handlers registered per message type
//   engine               the worker's lifecycle: start, restart, indexing requests, hello/ready/error
//   methods              the method selector and each method's needs, from the engine's methods()
//   progress, notices    the progress bar and busy state; the error banner and notice line
//   status               render(): the corpus status and the controls that follow the engine
//   corpus, documents    adding text and files; HTML, Word and PDF files to text (loaded on demand)
//   search               running a search (what a method needs first, search as you type)
//   results, graph, cage the hits; the graph walk's SVG; CAGE's scores and passage graphs
//   storage, share       saved indexes (IndexedDB, .cairn files); share links and the URL start
//   llm                  the LLM endpoint panel
// Passage text and titles are user data and are only ever put in the page as text nodes and
// <mark> elements, never as HTML.
import './style.css';
import { el } from './ui/dom.js';
import { state } from './ui/state.js';
import { restartKeepingCorpus } from './ui/engine.js';
import { hideError } from './ui/notices.js';
import { initCorpus } from './ui/corpus.js';
import { cancelEmbedderLoad, initSearch, loadExamples } from './ui/search.js';
import { initLlm } from './ui/llm.js';
import { initResults } from './ui/results.js';
import { initCage } from './ui/cage.js';
import { initStorage } from './ui/storage.js';
import { initShare, startFromLocation } from './ui/share.js';

el.errorDismiss.addEventListener('click', hideError);
el.cancel.addEventListener('click', () => {
  if (state.converting) state.converting.cancelled = true;
  else if (state.embedderLoad) cancelEmbedderLoad();
  else restartKeepingCorpus('Indexing was cancelled');
});
initResults();
initCage();
initCorpus();
initSearch();
startFromLocation();
loadExamples();
initLlm();
initStorage();
initShare();
