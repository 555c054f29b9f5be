// Events: the host's live event stream, newest first, with filters and a pause toggle. The
// list starts with what the console received since it opened (the stream has no history).

import { subscribe, recentEvents, MAX_EVENTS } from '/ui/api.js';
import { h, fmtTime } from '/ui/dom.js';

const list = (items) => (Array.isArray(items) ? items.join(', ') : '');

/** One line saying what an event means, in words. */
export function summarize(e) {
  switch (e.kind) {
    case 'state_changed': return e.error ? `now ${e.state}: ${e.error}` : `now ${e.state}`;
    case 'plugin_fault': return `plugin ${e.plugin} broke (${e.class}): ${e.message}; its instance was replaced`;
    case 'restart_scheduled': return `failure ${e.attempt}; restarting in ${(Number(e.delay_ms) / 1000).toFixed(1)} s`;
    case 'gave_up': return `failed ${e.failures} times in ${e.window_s} s; stays FAILED until restarted by hand`;
    case 'manual_restart': return 'restarted by hand';
    case 'plugin_swapped': return `plugins switched from ${list(e.from)} to ${list(e.to)}`;
    case 'swap_failed': return `switch to ${list(e.to)} refused: ${e.reason}`;
    case 'broker_unreachable': return `no Kafka broker answers: ${e.message}; waiting, nothing lost`;
    case 'broker_reachable': return `a Kafka broker answers again after ${(Number(e.unreachable_ms) / 1000).toFixed(1)} s`;
    case 'tasks_scaled': return `tasks ${e.from} → ${e.to} (${e.lag} records behind)`;
    case 'audit': return `${e.action} → ${e.status}${e.token ? ` (token ${e.token}${e.team ? `, team ${e.team}` : ''}${e.role ? `, ${e.role}` : ''})` : ' (no valid token)'}`;
    case 'lagged': return `this page missed ${e.missed} events (it fell behind the host)`;
    default: return '';
  }
}

/** A list item for one event: time, connector, kind, summary. */
export function eventItem(e) {
  return h(
    'li',
    { 'data-kind': e.kind, 'data-connector': e.connector || '' },
    h('time', { datetime: e.time, title: e.time }, fmtTime(e.time)),
    ' ',
    h('span', { class: 'connector' }, e.connector || '—'),
    ' ',
    h('span', { class: `kind kind-${e.kind}` }, e.kind),
    ' ',
    h('span', { class: 'summary' }, summarize(e)),
  );
}

export function mount(root) {
  let paused = false;
  const kinds = new Set();
  const feed = h('ul', { id: 'events', class: 'events' });
  const connectorFilter = h('input', { id: 'events-connector', type: 'search', placeholder: 'Connector name contains…', 'aria-label': 'Filter events by connector', autocomplete: 'off' });
  const kindFilter = h('select', { id: 'events-kind', 'aria-label': 'Filter events by kind' }, h('option', { value: '' }, 'All kinds'));
  const pause = h('button', { id: 'events-pause', type: 'button', 'aria-pressed': 'false' }, 'Pause the feed');
  const note = h('p', { class: 'muted' });
  const empty = h('p', { class: 'empty' }, 'No events yet. Connectors starting, stopping, failing or changing plugins show up here as it happens.');

  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Events')),
    h('div', { class: 'toolbar' }, connectorFilter, kindFilter, pause),
    note,
    empty,
    feed,
  );

  const matches = (li) => {
    const q = connectorFilter.value.trim().toLowerCase();
    const kind = kindFilter.value;
    return (!q || li.dataset.connector.toLowerCase().includes(q)) && (!kind || li.dataset.kind === kind);
  };

  function addKind(kind) {
    if (kinds.has(kind)) return;
    kinds.add(kind);
    kindFilter.append(h('option', { value: kind }, kind));
  }

  function show(e) {
    addKind(e.kind);
    const li = eventItem(e);
    li.hidden = !matches(li);
    feed.prepend(li);
    while (feed.childElementCount > MAX_EVENTS) feed.lastElementChild.remove();
    empty.hidden = true;
  }

  function rebuild() {
    feed.replaceChildren();
    const past = recentEvents();
    for (const e of past) show(e);
    empty.hidden = past.length !== 0;
  }

  function refilter() {
    for (const li of feed.children) li.hidden = !matches(li);
  }

  connectorFilter.addEventListener('input', refilter);
  kindFilter.addEventListener('change', refilter);
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume the feed' : 'Pause the feed';
    pause.setAttribute('aria-pressed', String(paused));
    note.textContent = paused ? 'Paused: new events are kept and shown when you resume.' : '';
    // Resuming shows what arrived meanwhile (the last ones, as many as the page keeps).
    if (!paused) rebuild();
  });

  rebuild();
  const unsubscribe = subscribe((e) => {
    if (!paused) show(e);
  });
  return unsubscribe;
}
