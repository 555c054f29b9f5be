// The one way the console talks to the host: same-origin fetch with the stored bearer token,
// errors as `ApiError` (the host's `{"error", "detail", "problems", "key"}`), and one shared
// event stream with subscribers.

import { showAlert } from '/ui/dom.js';

const TOKEN_KEY = 'turnpike.token';

export function token() {
  try { return sessionStorage.getItem(TOKEN_KEY) || null; } catch { return null; }
}

export function setToken(value) {
  try { sessionStorage.setItem(TOKEN_KEY, value); } catch { /* storage refused: the token lives for this request only */ }
}

export function clearToken() {
  try { sessionStorage.removeItem(TOKEN_KEY); } catch { /* nothing stored */ }
}

/** A refusal or failure, in the host's words. `status` 0: the host could not be reached. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body.detail || body.error || `HTTP ${status}`);
    this.status = status;
    this.code = body.error || '';
    this.detail = body.detail || this.message;
    this.problems = Array.isArray(body.problems) ? body.problems : [];
    this.key = body.key || null;
  }
}

// Set by the shell: shows the token form and resolves once a token was saved. Requests that
// got 401 wait on the same promise, then go again with the new token.
let prompt = null;
let pending = null;

export function setTokenPrompt(fn) {
  prompt = fn;
}

function needToken(refused) {
  if (!pending) pending = Promise.resolve(prompt(refused)).finally(() => { pending = null; });
  return pending;
}

function headers(extra) {
  const out = { ...extra };
  const t = token();
  if (t) out.Authorization = `Bearer ${t}`;
  return out;
}

async function readBody(response) {
  let text = '';
  try { text = await response.text(); } catch { return null; }
  if (!text) return null;
  try { return JSON.parse(text); } catch { return text; }
}

/**
 * `method path`, with `json` sent as a JSON body, or `body` sent as is with `type` as its
 * Content-Type. Resolves to the parsed answer (null when empty); rejects with an ApiError.
 */
export async function request(method, path, { json, body, type } = {}) {
  for (;;) {
    const sentToken = token();
    let payload;
    let extra = {};
    if (json !== undefined) {
      payload = JSON.stringify(json);
      extra = { 'Content-Type': 'application/json' };
    } else if (body !== undefined) {
      payload = body;
      extra = { 'Content-Type': type || 'application/octet-stream' };
    }
    let response;
    try {
      response = await fetch(path, { method, headers: headers(extra), body: payload, credentials: 'same-origin', cache: 'no-store' });
    } catch (e) {
      throw new ApiError(0, { error: 'unreachable', detail: `the host could not be reached (${e && e.message ? e.message : e}); is it running?` });
    }
    const data = await readBody(response);
    if (response.status === 401 && prompt) {
      await needToken(Boolean(sentToken));
      continue;
    }
    if (!response.ok) {
      const body = data && typeof data === 'object' ? data : { error: `http_${response.status}`, detail: typeof data === 'string' && data.trim() ? data.trim() : `the host answered HTTP ${response.status}` };
      throw new ApiError(response.status, body);
    }
    return data;
  }
}

export const get = (path) => request('GET', path);
export const post = (path, json) => request('POST', path, json === undefined ? {} : { json });
export const put = (path, json) => request('PUT', path, { json });
export const del = (path) => request('DELETE', path);

/** A path segment, encoded. */
export const seg = (name) => encodeURIComponent(name);

/**
 * Runs `fn` now and then every `ms`, never two at once. `kick()` runs it again soon (after
 * an event); `stop()` ends it. `fn` handles its own errors.
 */
export function every(ms, fn) {
  let stopped = false;
  let running = false;
  let again = false;
  let timer = null;
  const tick = async () => {
    if (stopped) return;
    clearTimeout(timer);
    if (running) { again = true; return; }
    running = true;
    try { await fn(); } catch { /* fn reports its own errors */ } finally { running = false; }
    if (stopped) return;
    if (again) { again = false; timer = setTimeout(tick, 250); } else timer = setTimeout(tick, ms);
  };
  tick();
  return { stop() { stopped = true; clearTimeout(timer); }, kick() { if (!stopped) { clearTimeout(timer); timer = setTimeout(tick, 150); } } };
}

// --- The event stream --------------------------------------------------------------------
// EventSource cannot send an Authorization header, so the stream is read with fetch and
// parsed here: `event:` and `data:` lines, a blank line ends a frame, `:` lines keep alive.

export const MAX_EVENTS = 500;
const listeners = new Set();
const stateListeners = new Set();
const recent = [];
let streamState = 'connecting';
let started = false;

/** Calls `fn(event)` for each event from now on; returns the unsubscribe function. */
export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Events received since the console opened (at most MAX_EVENTS), oldest first. */
export function recentEvents() {
  return recent.slice();
}

/** Calls `fn(state)` now and on each change: `connecting`, `live`, `reconnecting`. */
export function onStreamState(fn) {
  stateListeners.add(fn);
  fn(streamState);
  return () => stateListeners.delete(fn);
}

function setStreamState(state) {
  if (state === streamState) return;
  streamState = state;
  for (const fn of stateListeners) fn(state);
}

function dispatch(name, data) {
  let event;
  if (name === 'lagged') {
    // Not JSON: the number of events the host dropped because this tab was too slow.
    event = { time: new Date().toISOString(), connector: '', kind: 'lagged', missed: Number(data) || 0 };
  } else {
    try { event = JSON.parse(data); } catch { return; }
    if (!event || typeof event !== 'object') return;
    if (!event.kind) event.kind = name;
  }
  recent.push(event);
  if (recent.length > MAX_EVENTS) recent.splice(0, recent.length - MAX_EVENTS);
  for (const fn of listeners) {
    try { fn(event); } catch (e) { showAlert(`The page failed to show an event: ${e && e.message ? e.message : e}`, 'events'); }
  }
}

async function readFrames(body, onFrame) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let name = '';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (data.length) { onFrame(); dispatch(name || 'message', data.join('\n')); }
        name = '';
        data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'event') name = v;
        else if (field === 'data') data.push(v);
      }
    }
  }
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function runStream() {
  let delay = 1000;
  for (;;) {
    setStreamState(streamState === 'live' ? 'reconnecting' : streamState);
    try {
      const sentToken = token();
      const response = await fetch('/v1/events', { headers: headers({ Accept: 'text/event-stream' }), cache: 'no-store', credentials: 'same-origin' });
      if (response.status === 401 && prompt) {
        try { await response.body.cancel(); } catch { /* already closed */ }
        await needToken(Boolean(sentToken));
        continue;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      setStreamState('live');
      await readFrames(response.body, () => { delay = 1000; });
    } catch {
      // The stream broke or could not open: try again below, a little later each time.
    }
    setStreamState('reconnecting');
    await sleep(delay);
    delay = Math.min(delay * 2, 30000);
  }
}

/** Opens the shared stream (once). */
export function startEvents() {
  if (started) return;
  started = true;
  runStream().catch(() => { setStreamState('reconnecting'); });
}
