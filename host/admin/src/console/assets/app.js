// The shell: hash router, top navigation, host health, the token form and the event stream.
// Each page module exports `mount(root, params)` and returns a function that tears it down
// (timers, subscriptions), so leaving a page stops its polling.

import { get, token, setToken, clearToken, setTokenPrompt, startEvents, onStreamState } from '/ui/api.js';
import { setText, clearAlert, showAlert } from '/ui/dom.js';
import * as overview from '/ui/overview.js';
import * as connector from '/ui/connector.js';
import * as mask from '/ui/mask.js';
import * as plugins from '/ui/plugins.js';
import * as events from '/ui/events.js';

const routes = [
  { pattern: /^#?\/?$/, page: overview, nav: 'nav-overview', title: 'Overview' },
  { pattern: /^#\/connectors\/([^/]+)$/, page: connector, nav: 'nav-overview', title: 'Connector' },
  { pattern: /^#\/mask$/, page: mask, nav: 'nav-mask', title: 'Mask a topic' },
  { pattern: /^#\/plugins$/, page: plugins, nav: 'nav-plugins', title: 'Plugins' },
  { pattern: /^#\/events$/, page: events, nav: 'nav-events', title: 'Events' },
];

let unmount = null;

function route() {
  if (unmount) {
    try { unmount(); } catch { /* a page that fails to clean up must not block the next */ }
    unmount = null;
  }
  clearAlert();
  const root = document.getElementById('page');
  root.replaceChildren();
  const hash = location.hash || '#/';
  const found = routes.find((r) => r.pattern.test(hash));
  for (const link of document.querySelectorAll('header nav a')) {
    if (found && link.id === found.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!found) {
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = 'There is no such page. Use the links above.';
    root.append(p);
    return;
  }
  const match = hash.match(found.pattern);
  let params = [];
  try { params = match.slice(1).map((m) => decodeURIComponent(m)); } catch { params = match.slice(1); }
  document.title = `${params[0] || found.title} · Turnpike`;
  try {
    unmount = found.page.mount(root, ...params) || null;
  } catch (e) {
    showAlert(`This page failed to open: ${e && e.message ? e.message : e}`);
  }
}

function showTokenState() {
  document.getElementById('token-clear').hidden = !token();
}

// The token form: shown on a 401; resolves once a token was saved, so requests go again.
function askForToken(refused) {
  const form = document.getElementById('token-form');
  const input = document.getElementById('token-input');
  const save = document.getElementById('token-save');
  form.hidden = false;
  let note = form.querySelector('.note');
  if (!note) {
    note = document.createElement('p');
    note.className = 'note error';
    form.append(note);
  }
  note.textContent = refused ? 'The host refused the token it was given (wrong, expired or revoked). Paste another.' : '';
  note.hidden = !refused;
  input.value = '';
  input.focus();
  return new Promise((resolve) => {
    const done = () => {
      const value = input.value.trim();
      if (!value) { input.focus(); return; }
      setToken(value);
      input.value = '';
      form.hidden = true;
      save.removeEventListener('click', done);
      input.removeEventListener('keydown', onKey);
      showTokenState();
      resolve();
    };
    const onKey = (e) => { if (e.key === 'Enter') { e.preventDefault(); done(); } };
    save.addEventListener('click', done);
    input.addEventListener('keydown', onKey);
  });
}

async function checkHealth() {
  const el = document.getElementById('health');
  try {
    const answer = await get('/healthz');
    const ok = answer && answer.status === 'ok';
    setText(el, ok ? 'host ok' : `host ${answer && answer.status ? answer.status : 'unknown'}`);
    el.className = `health ${ok ? 'ok' : 'bad'}`;
  } catch (e) {
    setText(el, 'host unreachable');
    el.className = 'health bad';
    el.title = e.detail || String(e);
  }
}

// The host's version, from its API document (public, like /healthz, which has no version).
async function showVersion() {
  try {
    const doc = await get('/v1/openapi.json');
    const version = doc && doc.info && doc.info.version;
    if (version) document.getElementById('health').title = `Turnpike ${version} — host health (GET /healthz)`;
  } catch { /* the version is a nicety; health shows reachability */ }
}

function start() {
  setTokenPrompt(askForToken);
  showTokenState();
  document.getElementById('token-clear').addEventListener('click', (e) => {
    e.preventDefault();
    clearToken();
    location.reload();
  });
  document.getElementById('alert-close').addEventListener('click', () => clearAlert());
  onStreamState((state) => {
    const el = document.getElementById('stream-state');
    setText(el, state === 'live' ? 'events live' : `events ${state}…`);
    el.className = `health ${state === 'live' ? 'ok' : 'idle'}`;
  });
  window.addEventListener('hashchange', route);
  window.addEventListener('unhandledrejection', (e) => {
    // Every call is awaited and caught; should one slip through, the page says so too (the
    // browser still reports it: this is not a way to hide it).
    const reason = e.reason;
    showAlert(`Something failed: ${reason && reason.detail ? reason.detail : reason && reason.message ? reason.message : reason}`);
  });
  route();
  startEvents();
  checkHealth();
  showVersion();
  setInterval(checkHealth, 30000);
}

start();
