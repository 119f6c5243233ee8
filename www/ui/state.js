// The page's state, shared by the modules of www/ui/ (one object, mutated in place).

export const state = {
  worker: null,
  started: false, // the worker said hello
  busy: false, // an indexing request is running
  stats: null,
  lastTiming: null,
  sources: [], // labels of what the corpus holds
  searchId: 0,
  lastSearch: null, // {query, question}
  questions: [],
  methods: [], // the names of every method the engine knows (methods(); see methods.js)
  available: [], // the methods it can run now (availableMethods(), from the worker's hello)
  embedder: null, // {name, dims} once the static embedder is loaded
  minilm: null, // {dims, embedded, passages} once the MiniLM model is loaded
  transformer: null, // false when the page was built without the transformer package (MiniLM, CAGE)
  graph: null, // the knowledge graph's report once built (engine.graphReport())
  passageGraphs: new Map(), // request id → the <div> waiting for a passage's triples
  passageGraphId: 0,
  embedderLoad: null, // {id, embedder, pending: {query, question} | null} while an embedder loads
  embedderLoadId: 0,
  progressPhase: null, // the phase of the last progress message of the running request
  // The indexing requests that built the current corpus, in order (a 'replace' starts it over),
  // so that a Cancel that must stop the worker can rebuild the corpus (BM25 only) in a new one.
  history: [],
  pendingIndex: null, // the indexing request in flight
  converting: null, // {cancelled} while documents (HTML, .docx, PDF) are converted to text
  restoring: 0, // replayed requests still to answer
};
