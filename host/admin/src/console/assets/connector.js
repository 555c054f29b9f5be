// One connector: its state and counters (polled every 2 s and on its events), the current
// error with the record that caused it, partitions and lag, its events, lifecycle actions,
// and its configuration with an editor that validates before it saves.

import { get, post, put, del, request, seg, subscribe, recentEvents, every } from '/ui/api.js';
import { h, setText, setState, fmtRate, fmtBytes, fmtCount, parseJson, lineMap, lineOf, showAlert, clearAlert, confirmAction } from '/ui/dom.js';
import { eventItem } from '/ui/events.js';

const MAX_EVENTS_HERE = 50;

// Where each action is offered, and what a destructive one asks first.
const ACTIONS = [
  { action: 'pause', label: 'Pause', allowed: (s) => s === 'RUNNING' },
  { action: 'resume', label: 'Resume', allowed: (s) => s === 'PAUSED' },
  { action: 'stop', label: 'Stop', allowed: (s) => s !== 'STOPPED', ask: (n) => `Stop ${n}? It lets go of its plugins and Kafka clients; its configuration and committed offsets stay, and Restart starts it again.` },
  { action: 'restart', label: 'Restart', allowed: () => true },
  { action: 'reset', label: 'Reset offsets', allowed: (s) => s === 'STOPPED', ask: (n, to) => `Move ${n}'s committed offsets to the ${to} records? When it starts again it reads from there${to === 'earliest' ? ', so records are processed again' : ', skipping what is in the topics now'}.` },
  { action: 'delete', label: 'Delete', allowed: () => true, ask: (n) => `Delete ${n}? It stops and its configuration is removed. This cannot be undone.` },
];

// A syntax error names its field in its text ("request body: transforms[0].plugin: …").
function problemsOf(e) {
  if (e.problems && e.problems.length) return e.problems;
  if (e.key) return [{ key: e.key, message: e.detail }];
  const m = /^[^:]*: ([A-Za-z0-9_.[\]]+): (.*)$/s.exec(e.detail || '');
  return m ? [{ key: m[1], message: m[2] }] : [];
}

const pretty = (value) => JSON.stringify(value, null, 2);

export function mount(root, name) {
  const base = `/v1/connectors/${seg(name)}`;
  let alive = true;
  let state = null;
  let shownConfig = null;
  let validatedText = null;
  let polls = 0;

  // --- Header, actions, counters -------------------------------------------------------
  const stateEl = h('span', { id: 'state', class: 'state' }, '…');
  const since = h('span', { class: 'muted' });
  const resetTo = h('select', { id: 'reset-to', 'aria-label': 'Reset offsets to' }, h('option', { value: 'earliest' }, 'to the earliest records'), h('option', { value: 'latest' }, 'to the latest records'));
  const buttons = ACTIONS.map((a) => h('button', { type: 'button', 'data-action': a.action, class: a.ask ? 'danger' : null }, a.label));
  const byAction = Object.fromEntries(ACTIONS.map((a, i) => [a.action, buttons[i]]));
  const resetGroup = h('span', { class: 'group' }, byAction.reset, resetTo);
  const actionBar = h('div', { class: 'toolbar actions' });
  const actionResult = h('p', { id: 'action-result', role: 'status' });
  const stats = h('dl', { class: 'stats' });
  const statCells = {};
  for (const [key, label] of [['kind', 'Kind'], ['plugins', 'Plugins'], ['flow', 'Reads → writes'], ['records', 'Records in / out'], ['rates', 'Records/s in / out'], ['bytes', 'Bytes/s in / out'], ['lag', 'Lag'], ['broker', 'Kafka broker'], ['plugin', 'Plugin CPU / memory'], ['failed', 'Failed / dead-lettered'], ['restarts', 'Restarts / retries'], ['faults', 'Plugin faults']]) {
    statCells[key] = h('dd');
    stats.append(h('div', null, h('dt', null, label), statCells[key]));
  }
  const errorClass = h('span', { class: 'error-class' });
  const errorMessage = h('span');
  // In the page only while there is a failing record, so its presence means it is filled.
  const errorRecord = h('pre', { id: 'error-record', class: 'code' });
  const recordPart = h('div', null, h('p', { class: 'muted' }, 'The record that failed:'), errorRecord);
  const errorBox = h('section', { id: 'error', class: 'card error-card', hidden: true }, h('h2', null, 'Current error'), h('p', null, errorClass, ' ', errorMessage));
  const swapNote = h('p', { class: 'error', hidden: true });

  // --- Partitions, events ----------------------------------------------------------------
  const partBody = h('tbody');
  const partNote = h('p', { class: 'muted' });
  const partSection = h('section', { class: 'card', hidden: true }, h('h2', null, 'Partitions'), partNote, h('div', { class: 'scroll' }, h('table', { id: 'partitions', class: 'grid' }, h('thead', null, h('tr', null, ['Topic', 'Partition', 'Committed', 'Latest', 'Lag'].map((c, i) => h('th', { scope: 'col', class: i ? 'num' : null }, c)))), partBody)));
  const eventsList = h('ul', { id: 'connector-events', class: 'events' });
  const eventsEmpty = h('p', { class: 'empty' }, 'No events for this connector since this page opened.');

  // --- Configuration and editor ----------------------------------------------------------
  const configEl = h('pre', { id: 'config', class: 'code' });
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const edit = h('textarea', { id: 'config-edit', spellcheck: 'false', wrap: 'off', rows: 18, 'aria-label': 'Edit the configuration (JSON)' });
  const validate = h('button', { id: 'validate', type: 'button' }, 'Check');
  const save = h('button', { id: 'save', type: 'button', class: 'primary', disabled: true }, 'Save');
  const revert = h('button', { id: 'revert', type: 'button', class: 'link' }, 'Start again from the current configuration');
  const verdict = h('p', { id: 'validate-result', role: 'status' });
  const problemsEl = h('ul', { id: 'problems', class: 'problems' });
  let badLines = new Set();

  root.append(
    h('div', { class: 'page-head' }, h('h1', null, name, ' ', stateEl), since),
    actionBar,
    actionResult,
    swapNote,
    errorBox,
    stats,
    partSection,
    h('section', { class: 'card' }, h('h2', null, 'Recent events'), eventsEmpty, eventsList),
    h('section', { class: 'card' }, h('h2', null, 'Configuration'), h('p', { class: 'muted' }, 'Secret values are hidden (***); sending *** back keeps the stored secret.'), configEl),
    h(
      'section',
      { class: 'card' },
      h('h2', null, 'Change the configuration'),
      h('p', { class: 'muted' }, 'Edit the JSON, check it, then save. Save is offered only once this exact text passed the check.'),
      h('div', { class: 'editor' }, gutter, edit),
      h('div', { class: 'toolbar' }, validate, save, revert),
      verdict,
      problemsEl,
    ),
  );

  function drawGutter() {
    const count = edit.value.split('\n').length;
    gutter.replaceChildren(...Array.from({ length: count }, (_, i) => h('span', { class: badLines.has(i + 1) ? 'bad' : null }, `${i + 1}\n`)));
    gutter.scrollTop = edit.scrollTop;
  }

  function selectLine(n) {
    const lines = edit.value.split('\n');
    const start = lines.slice(0, n - 1).reduce((sum, l) => sum + l.length + 1, 0);
    edit.focus();
    edit.setSelectionRange(start, start + (lines[n - 1] || '').length);
  }

  function showProblems(problems) {
    const map = lineMap(edit.value);
    badLines = new Set();
    problemsEl.replaceChildren(
      ...problems.map((p) => {
        const n = lineOf(map, p.key);
        if (n) badLines.add(n);
        const li = h('li', { 'data-path': p.key }, n ? h('button', { type: 'button', class: 'link line' }, `line ${n}`) : null, n ? ' ' : null, h('code', null, p.key), ': ', p.message);
        if (n) li.querySelector('button').addEventListener('click', () => selectLine(n));
        if (n) li.dataset.line = String(n);
        return li;
      }),
    );
    drawGutter();
  }

  function setEditor(text) {
    edit.value = text;
    validatedText = null;
    save.disabled = true;
    showProblems([]);
    setText(verdict, '');
  }

  function parsedEdit() {
    try { return { value: JSON.parse(edit.value) }; } catch (e) { return { error: e.message }; }
  }

  function refusal(e, what) {
    verdict.className = 'error';
    const problems = problemsOf(e);
    setText(verdict, problems.length ? `${what}: ${problems.length === 1 ? 'one problem' : `${problems.length} problems`}.` : `${what}: ${e.detail || e}`);
    showProblems(problems);
  }

  validate.addEventListener('click', async () => {
    const text = edit.value;
    const parsed = parsedEdit();
    if (parsed.error) {
      validatedText = null;
      save.disabled = true;
      verdict.className = 'error';
      setText(verdict, `This is not valid JSON: ${parsed.error}`);
      showProblems([]);
      return;
    }
    validate.disabled = true;
    try {
      const answer = await post(`${base}/validate`, parsed.value);
      if (edit.value !== text) return;
      validatedText = text;
      save.disabled = false;
      verdict.className = 'success';
      setText(verdict, `Valid${answer && answer.plugins && answer.plugins.length ? ` (plugins ${answer.plugins.join(', ')})` : ''}. Save to apply it.`);
      showProblems([]);
    } catch (e) {
      validatedText = null;
      save.disabled = true;
      refusal(e, 'Not valid');
    } finally {
      validate.disabled = false;
    }
  });

  save.addEventListener('click', async () => {
    if (edit.value !== validatedText) return;
    save.disabled = true;
    try {
      const answer = await put(base, JSON.parse(validatedText));
      const how = !answer.changed ? 'Nothing changed: the configuration was already this.' : answer.restarted ? 'Saved; the connector restarted with it.' : 'Saved; the running connector switched plugins between two batches.';
      await refresh();
      setEditor(shownConfig || edit.value);
      verdict.className = 'success';
      setText(verdict, how);
    } catch (e) {
      refusal(e, 'Not saved');
    }
  });

  edit.addEventListener('input', () => {
    save.disabled = edit.value !== validatedText;
    drawGutter();
  });
  edit.addEventListener('scroll', () => { gutter.scrollTop = edit.scrollTop; });
  revert.addEventListener('click', () => { if (shownConfig !== null) setEditor(shownConfig); });

  // --- Status ----------------------------------------------------------------------------
  // Only the actions the state allows are in the page at all (a button that is there can be
  // clicked); they come and go with the state.
  let shownActions = '';
  function showActions() {
    const allowed = state === null ? [] : ACTIONS.filter((a) => a.allowed(state));
    for (const b of buttons) b.disabled = false;
    const key = allowed.map((a) => a.action).join();
    if (key === shownActions) return;
    shownActions = key;
    actionBar.replaceChildren(...allowed.map((a) => (a.action === 'reset' ? resetGroup : byAction[a.action])));
  }

  function showStatus(view) {
    state = view.state;
    setState(stateEl, view.state);
    setText(since, view.state_since ? `since ${new Date(view.state_since).toLocaleString()}` : '');
    showActions();
    const c = statCells;
    setText(c.kind, view.kind);
    setText(c.plugins, (view.plugins || []).join(', ') || '—');
    setText(c.flow, `${(view.topics || []).join(', ') || 'a source plugin'} → ${[view.output_topic, ...(view.routes || [])].filter(Boolean).join(', ') || 'a sink plugin'}`);
    setText(c.records, `${fmtCount(view.records_in)} / ${fmtCount(view.records_out)}`);
    setText(c.rates, `${fmtRate(view.records_in_per_s)} / ${fmtRate(view.records_out_per_s)}`);
    setText(c.bytes, `${typeof view.bytes_in_per_s === 'number' ? `${fmtBytes(view.bytes_in_per_s)}/s` : '—'} / ${typeof view.bytes_out_per_s === 'number' ? `${fmtBytes(view.bytes_out_per_s)}/s` : '—'}`);
    setText(c.lag, typeof view.lag === 'number' ? fmtCount(view.lag) : '—');
    const down = view.broker_unreachable;
    setText(c.broker, down ? `unreachable since ${new Date(down.since).toLocaleString()}: ${down.message}` : `reachable${view.broker_outages ? ` (${fmtCount(view.broker_outages)} outages)` : ''}`);
    c.broker.classList.toggle('error', Boolean(down));
    setText(c.plugin, `${typeof view.plugin_cpu_seconds === 'number' ? `${view.plugin_cpu_seconds.toFixed(1)} s` : '—'} / ${typeof view.plugin_memory_bytes === 'number' ? fmtBytes(view.plugin_memory_bytes) : '—'}`);
    setText(c.failed, `${fmtCount(view.records_failed)} / ${fmtCount(view.records_dead_lettered)}`);
    setText(c.restarts, `${fmtCount(view.restarts)} / ${fmtCount(view.retries)}`);
    setText(c.faults, Object.entries(view.faults || {}).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none');
    const error = view.error;
    errorBox.hidden = !error;
    if (error) {
      setText(errorClass, error.class);
      setText(errorMessage, error.message);
      const record = error.record;
      if (record) {
        const shown = { ...record };
        const value = parseJson(record.value);
        if (value !== undefined) shown.value = value;
        setText(errorRecord, pretty(shown));
        if (!recordPart.isConnected) errorBox.append(recordPart);
      } else recordPart.remove();
    } else {
      recordPart.remove();
    }
    swapNote.hidden = !view.swap_error;
    setText(swapNote, view.swap_error ? `The last switch of plugin versions was refused: ${view.swap_error}` : '');
    partSection.hidden = !(view.topics && view.topics.length);
    const text = pretty(view.config ?? {});
    if (text !== shownConfig) {
      const untouched = shownConfig === null || edit.value === shownConfig;
      shownConfig = text;
      setText(configEl, text);
      if (untouched) setEditor(text);
    }
  }

  async function refreshOffsets() {
    if (partSection.hidden) return;
    try {
      const answer = await get(`${base}/offsets`);
      const parts = (answer && answer.partitions) || [];
      partBody.replaceChildren(...parts.map((p) => h('tr', null, h('td', null, p.topic), h('td', { class: 'num' }, p.partition), h('td', { class: 'num' }, p.committed ?? '—'), h('td', { class: 'num' }, p.latest), h('td', { class: 'num' }, p.lag ?? '—'))));
      setText(partNote, parts.length ? `Consumer group ${answer.group_id}.` : 'No partitions found for its topics yet.');
    } catch (e) {
      setText(partNote, `Could not read the offsets: ${e.detail || e}`);
    }
  }

  async function refresh() {
    try {
      const view = await get(base);
      if (!alive) return;
      showStatus(view);
      clearAlert('connector');
      if (polls % 3 === 0) await refreshOffsets();
      polls += 1;
    } catch (e) {
      if (e.status === 404) {
        poller.stop();
        setState(stateEl, 'GONE');
        showAlert(`There is no connector named ${name} (any more). Go back to the overview.`, 'connector');
        state = null;
        showActions();
      } else {
        showAlert(`Could not read ${name}: ${e.detail || e}`, 'connector');
      }
    }
  }

  async function run(a) {
    const to = resetTo.value;
    if (a.ask && !(await confirmAction(a.ask(name, to), a.label))) return;
    for (const b of buttons) b.disabled = true;
    actionResult.className = 'muted';
    setText(actionResult, `${a.label}…`);
    try {
      if (a.action === 'delete') {
        await del(base);
        location.hash = '#/';
        return;
      }
      if (a.action === 'reset') {
        const answer = await post(`${base}/offsets/reset`, { to });
        const moved = ((answer && answer.partitions) || []).map((p) => `${p.topic}[${p.partition}] → ${p.offset}`).join(', ');
        setText(actionResult, `Offsets moved to the ${to} records${moved ? `: ${moved}` : ''}.`);
      } else {
        await request('POST', `${base}/${a.action}`);
        setText(actionResult, `${a.label}: done.`);
      }
      actionResult.className = 'success';
    } catch (e) {
      actionResult.className = 'error';
      setText(actionResult, `${a.label} refused: ${e.detail || e}`);
    }
    polls = 0;
    await refresh();
    // Should the status not be readable now, the buttons follow the last state known.
    showActions();
  }

  ACTIONS.forEach((a, i) => buttons[i].addEventListener('click', () => run(a)));

  function addEvent(e, live) {
    const li = eventItem(e);
    if (live) eventsList.prepend(li); else eventsList.append(li);
    while (eventsList.childElementCount > MAX_EVENTS_HERE) eventsList.lastElementChild.remove();
    eventsEmpty.hidden = true;
  }
  recentEvents().filter((e) => e.connector === name).reverse().slice(0, MAX_EVENTS_HERE).forEach((e) => addEvent(e, false));

  const poller = every(2000, refresh);
  const unsubscribe = subscribe((e) => {
    if (e.connector !== name) return;
    addEvent(e, true);
    if (e.kind === 'state_changed' && e.state) {
      state = e.state;
      setState(stateEl, e.state);
      showActions();
    }
    poller.kick();
  });
  drawGutter();
  return () => {
    alive = false;
    poller.stop();
    unsubscribe();
  };
}
