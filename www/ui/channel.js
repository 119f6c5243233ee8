// The page's side of the worker channel, at the bottom of the page's modules: it posts to the
// engine's worker, matches replies to requests, and hands each message the worker sends to the
// handlers that feature modules registered for its type. It imports only the page's state, so
// any module can use it without an import cycle.
import { state } from './state.js';

const handlers = new Map(); // message type → [handler]
const prefixHandlers = []; // [prefix, handler]: every type that starts with the prefix

/** Call `handler(msg)` for every worker message of `type` (after those registered before it). */
export function onWorkerMessage(type, handler) {
  if (!handlers.has(type)) handlers.set(type, []);
  handlers.get(type).push(handler);
}

/** Call `handler(msg)` for every worker message whose type starts with `prefix`. */
export function onWorkerMessagePrefix(prefix, handler) {
  prefixHandlers.push([prefix, handler]);
}

/** Hand `msg` (a message of the worker) to its handlers, in the order they registered. */
export function dispatchWorkerMessage(msg) {
  const type = typeof msg?.type === 'string' ? msg.type : '';
  for (const [prefix, handler] of prefixHandlers) {
    if (type.startsWith(prefix)) handler(msg);
  }
  for (const handler of handlers.get(type) || []) handler(msg);
}

/** Post `message` to the current worker. */
export function postToWorker(message, transfer) {
  if (transfer) state.worker.postMessage(message, transfer);
  else state.worker.postMessage(message);
}

const workerRequests = new Map(); // id → {resolve, reject}
let workerRequestId = 0;

/** Send `message` with a fresh id; resolves with the reply of the same id ('error' rejects). */
export function workerRequest(message) {
  workerRequestId += 1;
  const id = `file-${workerRequestId}`;
  return new Promise((resolve, reject) => {
    workerRequests.set(id, { resolve, reject });
    postToWorker({ ...message, id });
  });
}

/** Settle the request `id`, if it is one of `workerRequest`'s. */
export function settleWorkerRequest(id, reply, error) {
  const pending = workerRequests.get(id);
  if (!pending) return false;
  workerRequests.delete(id);
  if (error) pending.reject(new Error(error.message));
  else pending.resolve(reply);
  return true;
}

/**
 * A <details> of class `className` titled `summary` whose box (class `boxClass`) is filled when
 * first opened: it asks the worker `{type: requestType, id, passage}` and registers the box under
 * that id in `state.passageGraphs` for the reply.
 */
export function lazyDetails(className, summary, boxClass, requestType, passage) {
  const d = document.createElement('details');
  d.className = className;
  const s = document.createElement('summary');
  s.textContent = summary;
  const box = document.createElement('div');
  box.className = boxClass;
  box.textContent = 'Loading…';
  d.append(s, box);
  d.addEventListener('toggle', () => {
    if (!d.open || d.dataset.loaded) return;
    d.dataset.loaded = '1';
    state.passageGraphId += 1;
    state.passageGraphs.set(state.passageGraphId, box);
    postToWorker({ type: requestType, id: state.passageGraphId, passage });
  });
  return d;
}
