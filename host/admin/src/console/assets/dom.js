// Element creation and small shared widgets. Everything the API says is untrusted text:
// it reaches the page only through textContent and attribute values, never as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else if (k === 'hidden' || k === 'disabled' || k === 'checked' || k === 'value' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** `h('td', {class: 'name'}, 'text', child)`: an HTML element. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** The same for SVG elements. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

/** Sets an element's text only when it changed (cheap with many rows). */
export function setText(el, text) {
  const t = text === null || text === undefined ? '' : String(text);
  if (el.textContent !== t) el.textContent = t;
}

const STATE_CLASSES = { RUNNING: 'ok', PAUSED: 'warn', FAILED: 'bad' };

/** A state badge: `<span class="state ...">RUNNING</span>`, the text exactly as the API gives it. */
export function stateBadge(state, id) {
  const el = h('span', { class: 'state', id });
  setState(el, state);
  return el;
}

export function setState(el, state) {
  setText(el, state || '');
  const tone = STATE_CLASSES[state] || 'idle';
  const cls = `state ${tone}`;
  if (el.getAttribute('class') !== cls) el.setAttribute('class', cls);
}

/** Records per second, compact. */
export function fmtRate(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  if (n === 0) return '0';
  if (n < 10) return n.toFixed(1);
  return fmtCount(Math.round(n));
}

// One formatter: `toLocaleString` builds a new one per call, too slow for 1,000 rows.
const COUNT = new Intl.NumberFormat('en-US');

export function fmtCount(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  return COUNT.format(n);
}

export function fmtBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

export function truncate(text, max) {
  const t = String(text ?? '');
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** A short local time for an RFC 3339 stamp. */
export function fmtTime(stamp) {
  const d = new Date(stamp);
  return Number.isNaN(d.getTime()) ? String(stamp ?? '') : d.toLocaleTimeString([], { hour12: false });
}

/** An API error as the page shows it: the host's detail, then every problem. */
export function errorBody(err) {
  const parts = [h('p', null, err && (err.detail || err.message) ? err.detail || err.message : String(err))];
  const problems = (err && err.problems) || [];
  if (problems.length) parts.push(h('ul', { class: 'problems' }, problems.map((p) => h('li', { 'data-path': p.key }, h('code', null, p.key), ': ', p.message))));
  return parts;
}

// The page-wide banner. Each caller names its source, so a poll that recovers clears only
// its own message, not another one's.
let alertSource = null;

export function showAlert(message, source = 'page') {
  const box = document.getElementById('alert');
  setText(document.getElementById('alert-text'), message);
  alertSource = source;
  box.hidden = false;
}

export function clearAlert(source) {
  if (source !== undefined && source !== alertSource) return;
  document.getElementById('alert').hidden = true;
  alertSource = null;
}

/** Asks in the page's modal dialog; resolves true when the person confirms. */
export function confirmAction(question, yesLabel = 'Yes') {
  const dialog = document.getElementById('confirm-dialog');
  setText(document.getElementById('confirm-text'), question);
  setText(document.getElementById('confirm-yes'), yesLabel);
  return new Promise((resolve) => {
    const yes = document.getElementById('confirm-yes');
    const no = document.getElementById('confirm-no');
    let answer = false;
    const onYes = () => { answer = true; dialog.close(); };
    const onNo = () => dialog.close();
    const onClose = () => {
      yes.removeEventListener('click', onYes);
      no.removeEventListener('click', onNo);
      dialog.removeEventListener('close', onClose);
      resolve(answer);
    };
    yes.addEventListener('click', onYes);
    no.addEventListener('click', onNo);
    dialog.addEventListener('close', onClose);
    if (dialog.open) dialog.close();
    dialog.showModal();
    no.focus();
  });
}

/** Tries to read a record value as JSON; `undefined` when it is not JSON. */
export function parseJson(text) {
  if (typeof text !== 'string') return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}

const MISSING = Symbol('missing');

/**
 * Renders a JSON value as indented text built of elements. `leaf(value, path, span)` is
 * called for each leaf (its span holds the value's JSON text); `path` follows pii-mask's
 * syntax (`user.email`, `items[*].card`) or is null where no path can name the field (a key
 * holding '.' or '[', the top-level value itself). Arrays use `[*]` so a field has the same
 * path in every element and every record. With `compare`, leaves that differ from the value
 * at the same place in it get the class `changed`.
 */
export function jsonTree(value, { leaf, compare = MISSING } = {}) {
  const out = h('span', { class: 'json' });
  const comparing = compare !== MISSING;
  const key = (parent, k) => (parent === null || k === '' || k.includes('.') || k.includes('[') ? null : parent === '' ? k : `${parent}.${k}`);
  const walk = (v, path, indent, other) => {
    const pad = '  '.repeat(indent + 1);
    const close = '  '.repeat(indent);
    if (Array.isArray(v) && v.length) {
      out.append('[\n');
      v.forEach((item, i) => {
        out.append(pad);
        walk(item, path === null ? null : `${path}[*]`, indent + 1, Array.isArray(other) && i < other.length ? other[i] : MISSING);
        out.append(i < v.length - 1 ? ',\n' : '\n');
      });
      out.append(`${close}]`);
    } else if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length) {
      out.append('{\n');
      const entries = Object.entries(v);
      const otherObject = other && other !== MISSING && typeof other === 'object' && !Array.isArray(other) ? other : null;
      entries.forEach(([k, item], i) => {
        out.append(pad, h('span', { class: 'key' }, JSON.stringify(k)), ': ');
        walk(item, key(path, k), indent + 1, otherObject && Object.prototype.hasOwnProperty.call(otherObject, k) ? otherObject[k] : MISSING);
        out.append(i < entries.length - 1 ? ',\n' : '\n');
      });
      out.append(`${close}}`);
    } else {
      const text = JSON.stringify(v);
      const changed = comparing && (other === MISSING || JSON.stringify(other) !== text);
      const span = h('span', { class: `leaf ${v === null ? 'null' : typeof v}${changed ? ' changed' : ''}` }, text);
      out.append(span);
      if (leaf) leaf(v, path === '' ? null : path, span);
    }
  };
  walk(value, '', 0, compare);
  return out;
}

/**
 * The line (1-based) of every key and array element in a JSON text, by path
 * (`transforms[0].config.fields`): a small scanner that keeps what it found before any
 * syntax error, so problems can be pointed at while the text is being edited.
 */
export function lineMap(text) {
  const map = new Map();
  let i = 0;
  let line = 1;
  const literal = /[^\s,\]}]+/y;
  const ws = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === '\n') line += 1;
      else if (c !== ' ' && c !== '\t' && c !== '\r') return;
      i += 1;
    }
  };
  const str = () => {
    const start = i;
    i += 1;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\n') line += 1;
      i += text[i] === '\\' ? 2 : 1;
    }
    i += 1;
    const raw = text.slice(start, i);
    try { return JSON.parse(raw); } catch { return raw.slice(1, -1); }
  };
  const value = (path) => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const object = c === '{';
      i += 1;
      ws();
      if (text[i] === (object ? '}' : ']')) { i += 1; return; }
      for (let n = 0; ; n += 1) {
        ws();
        let p;
        if (object) {
          if (text[i] !== '"') throw new Error('key expected');
          const at = line;
          const k = str();
          p = path ? `${path}.${k}` : k;
          map.set(p, at);
          ws();
          if (text[i] !== ':') throw new Error('colon expected');
          i += 1;
        } else {
          p = `${path}[${n}]`;
          map.set(p, line);
        }
        value(p);
        ws();
        if (text[i] === ',') { i += 1; continue; }
        if (text[i] === (object ? '}' : ']')) { i += 1; return; }
        throw new Error('comma expected');
      }
    }
    if (c === '"') { str(); return; }
    literal.lastIndex = i;
    const m = literal.exec(text);
    if (!m) throw new Error('value expected');
    i += m[0].length;
  };
  try { value(''); } catch { /* keep what was found */ }
  return map;
}

/** The line a problem's key (`connector.transforms[0].config`) points at: the key itself, else its nearest parent present. */
export function lineOf(map, key) {
  let path = String(key || '').replace(/^connector\./, '').replace(/^connectors\[\d+\]\./, '');
  while (path) {
    if (map.has(path)) return map.get(path);
    const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
    path = cut > 0 ? path.slice(0, cut) : '';
  }
  return null;
}
