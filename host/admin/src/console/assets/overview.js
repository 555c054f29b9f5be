// Overview: every connector in one table, refreshed every 5 s and updated live by
// `state_changed` events. Built to stay fast with thousands of connectors: one row per name,
// built once and updated in place (only cells whose text changed are touched); filtering
// toggles `hidden` and never rebuilds anything.

import { get, subscribe, every } from '/ui/api.js';
import { h, setText, stateBadge, setState, fmtRate, fmtBytes, fmtCount, truncate, showAlert, clearAlert } from '/ui/dom.js';
import { sparkline, updateSparkline } from '/ui/chart.js';

/** Every state a connector can be in (`ConnectorState`, as the API spells it). */
export const STATES = ['UNASSIGNED', 'RUNNING', 'PAUSED', 'STOPPED', 'FAILED', 'RESTARTING'];

// Name and state first, so they stay in view when a narrow screen scrolls the table; kind and
// plugins under the name, in and out in one cell, so the table fits a laptop screen.
const COLUMNS = ['Connector', 'State', 'Last minute', 'Records/s in → out', 'Bytes/s in → out', 'Lag', 'Failed / dead-lettered', 'Restarts', 'Last error'];
const NUMERIC = new Set([3, 4, 5, 6, 7]);

function errorText(error) {
  return error ? `${error.class}: ${error.message}` : '';
}

function buildRow(status) {
  const link = h('a', { class: 'name', href: `#/connectors/${encodeURIComponent(status.name)}` }, status.name);
  const cells = {};
  // Cells updated in place; `inline` ones are spans inside the name cell.
  const td = (key, cls) => {
    cells[key] = h(cls && cls.includes('inline') ? 'span' : 'td', { class: cls });
    return cells[key];
  };
  const badge = stateBadge(status.state);
  const spark = sparkline(status.history);
  const tr = h(
    'tr',
    { 'data-connector': status.name },
    h('td', { class: 'col-name' }, link, h('div', { class: 'muted small' }, td('kind', 'inline'), ' · ', td('plugins', 'plugins inline'))),
    h('td', null, badge),
    h('td', null, spark),
    td('rates', 'num'),
    td('bytes', 'num'),
    td('lag', 'num'),
    td('failed', 'num'),
    td('restarts', 'num'),
    td('error', 'error-cell'),
  );
  const row = { tr, cells, badge, spark, name: status.name, lname: status.name.toLowerCase(), state: status.state };
  updateRow(row, status);
  return row;
}

function updateRow(row, st) {
  const c = row.cells;
  setText(c.kind, st.kind);
  setText(c.plugins, (st.plugins || []).join(', '));
  row.state = st.state;
  setState(row.badge, st.state);
  if (row.tr.dataset.state !== st.state) row.tr.dataset.state = st.state;
  setText(c.rates, `${fmtRate(st.records_in_per_s)} → ${fmtRate(st.records_out_per_s)}`);
  const bytes = (v) => (typeof v === 'number' ? `${fmtBytes(v)}/s` : '—');
  setText(c.bytes, `${bytes(st.bytes_in_per_s)} → ${bytes(st.bytes_out_per_s)}`);
  setText(c.lag, typeof st.lag === 'number' ? fmtCount(st.lag) : '—');
  setText(c.failed, `${fmtCount(st.records_failed)} / ${fmtCount(st.records_dead_lettered)}`);
  setText(c.restarts, fmtCount(st.restarts));
  setError(row, errorText(st.error) || (st.broker_unreachable ? `no Kafka broker answers since ${new Date(st.broker_unreachable.since).toLocaleString()}` : ''));
  updateSparkline(row.spark, st.history);
}

function setError(row, full) {
  setText(row.cells.error, truncate(full, 60));
  if ((row.cells.error.title || '') !== full) row.cells.error.title = full;
}

export function mount(root) {
  const rows = new Map();
  let firstRendered = false;
  let filterQueued = false;

  const nameFilter = h('input', { id: 'filter-name', type: 'search', placeholder: 'Filter by name', 'aria-label': 'Filter connectors by name', autocomplete: 'off' });
  const stateFilter = h('select', { id: 'filter-state', 'aria-label': 'Filter connectors by state' }, h('option', { value: '' }, 'All states'), STATES.map((s) => h('option', { value: s }, s)));
  const count = h('span', { id: 'connector-count', class: 'muted' });
  const tbody = h('tbody');
  const table = h('table', { id: 'connectors', class: 'grid' }, h('thead', null, h('tr', null, COLUMNS.map((c, i) => h('th', { scope: 'col', class: NUMERIC.has(i) ? 'num' : null }, c)))), tbody);
  const empty = h('p', { class: 'empty', hidden: true }, 'No connectors yet — ', h('a', { href: '#/mask' }, 'mask a topic'), ' to create one.');
  const noMatch = h('p', { class: 'empty', hidden: true }, 'No connector matches these filters.');
  const loading = h('p', { class: 'muted' }, 'Loading connectors…');
  const wrap = h('div', { class: 'scroll' }, table);

  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Connectors'), h('a', { id: 'new-mask', class: 'button primary', href: '#/mask' }, 'Mask a topic')),
    h('div', { class: 'toolbar' }, nameFilter, stateFilter, count),
    loading,
    empty,
    wrap,
    noMatch,
  );

  function applyFilter() {
    const started = performance.now();
    const q = nameFilter.value.trim().toLowerCase();
    const want = stateFilter.value;
    let visible = 0;
    for (const row of rows.values()) {
      const show = (!q || row.lname.includes(q)) && (!want || row.state === want);
      if (row.tr.hidden === show) row.tr.hidden = !show;
      if (show) visible += 1;
    }
    const took = performance.now() - started;
    setText(count, `${visible} of ${rows.size}`);
    document.body.dataset.filtered = String(visible);
    empty.hidden = rows.size !== 0;
    wrap.hidden = rows.size === 0;
    noMatch.hidden = rows.size === 0 || visible !== 0;
    if (firstRendered) {
      window.turnpikeTimings = window.turnpikeTimings || {};
      window.turnpikeTimings.filterMs = took;
    }
  }

  // Events come in bursts: refilter once per frame, not once per event.
  function queueFilter() {
    if (filterQueued) return;
    filterQueued = true;
    requestAnimationFrame(() => { filterQueued = false; applyFilter(); });
  }

  function render(list) {
    const seen = new Set();
    let previous = null;
    const fresh = document.createDocumentFragment();
    const appendAll = rows.size === 0;
    for (const status of list) {
      seen.add(status.name);
      let row = rows.get(status.name);
      if (row) {
        updateRow(row, status);
      } else {
        row = buildRow(status);
        rows.set(status.name, row);
        if (appendAll) fresh.append(row.tr);
      }
      // Keep the API's order; rows already in place are not moved.
      if (!appendAll) {
        const expected = previous ? previous.tr.nextSibling : tbody.firstChild;
        if (expected !== row.tr) tbody.insertBefore(row.tr, expected);
      }
      previous = row;
    }
    if (appendAll) tbody.append(fresh);
    for (const [name, row] of rows) {
      if (!seen.has(name)) {
        row.tr.remove();
        rows.delete(name);
      }
    }
    loading.hidden = true;
    applyFilter();
    if (!firstRendered) {
      firstRendered = true;
      if (!window.turnpikeTimings || window.turnpikeTimings.firstRenderMs === undefined) {
        window.turnpikeTimings = { firstRenderMs: performance.now() };
      }
    }
  }

  nameFilter.addEventListener('input', () => { if (firstRendered) applyFilter(); });
  stateFilter.addEventListener('change', () => { if (firstRendered) applyFilter(); });

  const poller = every(5000, async () => {
    try {
      const answer = await get('/v1/connectors');
      render((answer && answer.connectors) || []);
      clearAlert('overview');
    } catch (e) {
      loading.hidden = true;
      showAlert(`Could not load the connectors: ${e.detail || e}`, 'overview');
    }
  });

  const unsubscribe = subscribe((event) => {
    if (event.kind !== 'state_changed') return;
    const row = rows.get(event.connector);
    if (!row) {
      // A connector this list has not seen yet: read the list again soon.
      poller.kick();
      return;
    }
    row.state = event.state;
    setState(row.badge, event.state);
    row.tr.dataset.state = event.state;
    // As the host keeps it: FAILED and RESTARTING keep the last error, other states clear it.
    if (event.error) setError(row, event.error);
    else if (event.state !== 'FAILED' && event.state !== 'RESTARTING') setError(row, '');
    queueFilter();
  });

  return () => {
    poller.stop();
    unsubscribe();
  };
}
