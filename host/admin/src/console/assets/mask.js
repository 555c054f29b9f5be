// The mask wizard, for people who have never seen the API: pick a topic, click the fields
// that hold personal data in real records, preview the masked records side by side, deploy.
// Deploy is offered only after a preview succeeded for exactly the current choices, and it
// deploys exactly the plugin version and configuration that preview ran.

import { get, put, post, seg } from '/ui/api.js';
import { h, setText, jsonTree, parseJson, errorBody } from '/ui/dom.js';
import { byName } from '/ui/plugins.js';

const MASK_PLUGIN = 'pii-mask';
const SAMPLE_SIZE = 10;

const MODES = [
  ['hash', 'Hash: a fingerprint (equal values stay equal, so joins and counts still work)'],
  ['redact', 'Redact: replace with ***'],
  ['partial', 'Partial: keep only the last 4 characters'],
];

const DETECTORS = [
  ['email', 'E-mail addresses'],
  ['phone', 'Phone numbers'],
  ['credit_card', 'Credit-card numbers'],
  ['ssn', 'US social security numbers'],
];

const step = (n, title, ...body) => h('section', { class: 'card step' }, h('h2', null, h('span', { class: 'step-number' }, String(n)), title), ...body);

/** A record value as the page shows it: a JSON tree when it is JSON, else plain text. */
function valueView(text, options) {
  if (text === null || text === undefined) return h('span', { class: 'muted' }, '(no value: a tombstone)');
  const parsed = parseJson(text);
  return parsed === undefined ? h('span', { class: 'text-value' }, text) : jsonTree(parsed, options);
}

export function mount(root) {
  let alive = true;
  let topic = '';
  let records = [];
  let plugin = null;
  let preview = null; // { key, plugin, config } of the last preview that succeeded
  let existing = new Set();
  let outputEdited = false;
  let nameEdited = false;
  let sampleRequest = 0;
  const selected = new Map(); // path -> its row in #mask-fields

  const topicSelect = h('select', { id: 'mask-topic', 'aria-label': 'Topic to mask' }, h('option', { value: '' }, 'Choose a topic…'));
  const topicNote = h('p', { class: 'muted' }, 'Loading the topics…');
  const sample = h('div', { id: 'sample', class: 'sample' });
  const resample = h('button', { id: 'resample', type: 'button', class: 'link', hidden: true }, 'Fetch the latest records again');
  const fieldsBody = h('tbody', { id: 'mask-fields' });
  const fieldsTable = h('table', { class: 'grid' }, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'How to mask it'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Remove')))), fieldsBody);
  const fieldsWrap = h('div', { class: 'scroll', hidden: true }, fieldsTable);
  const noFields = h('p', { class: 'muted' }, 'No field chosen yet. Click a value in the records above.');
  const detectors = h('fieldset', { id: 'detectors', class: 'detectors' }, h('legend', null, 'Also look for these anywhere in the text (they are replaced with ***):'), DETECTORS.map(([value, label]) => h('label', null, h('input', { type: 'checkbox', value }), ' ', label)));
  const nonJson = h('select', { id: 'non-json', 'aria-label': 'Records that are not JSON' }, h('option', { value: 'error' }, 'count as errors: the connector stops on them, nothing unmasked gets through'), h('option', { value: 'pass' }, 'pass through unchanged (unmasked)'));
  const previewButton = h('button', { id: 'preview-button', type: 'button', class: 'primary' }, 'Preview the masked records');
  const previewState = h('p', { class: 'muted', role: 'status' });
  const previewError = h('div', { id: 'preview-error', class: 'error', role: 'alert' });
  const previewEl = h('div', { id: 'preview', class: 'preview' });
  const outputInput = h('input', { id: 'output-topic', type: 'text', autocomplete: 'off', spellcheck: 'false' });
  const nameInput = h('input', { id: 'connector-name', type: 'text', autocomplete: 'off', spellcheck: 'false' });
  const nameNote = h('p', { class: 'muted' });
  const deploy = h('button', { id: 'deploy', type: 'button', class: 'primary', disabled: true }, 'Deploy the mask');
  const deployNote = h('p', { class: 'muted' }, 'Run a preview first: deploying is possible once the preview of your current choices worked.');
  const deployError = h('div', { id: 'deploy-error', class: 'error', role: 'alert' });

  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Mask a topic')),
    h('p', { class: 'lead' }, 'Make a copy of a topic with personal data hidden, for others to read. Nothing changes in the original topic.'),
    step(1, 'Choose the topic that holds personal data', h('label', { for: 'mask-topic' }, 'Topic'), topicSelect, topicNote),
    step(2, 'Click the values to hide', h('p', { class: 'muted' }, 'These are the newest records of the topic. Click a value to hide that field in every record; click again to keep it.'), resample, sample, fieldsWrap, noFields, detectors, h('label', { class: 'inline' }, 'Records that are not JSON: ', nonJson)),
    step(3, 'Check the result', h('p', { class: 'muted' }, 'Runs the mask on the records above, without writing anything anywhere.'), previewButton, previewState, previewError, previewEl),
    step(4, 'Start masking', h('div', { class: 'fields' }, h('label', null, 'Write the masked copy to the topic', outputInput), h('label', null, 'Name of the new connector', nameInput)), nameNote, deploy, deployNote, deployError),
  );

  // --- What is chosen ----------------------------------------------------------------------
  function currentConfig() {
    const fields = [...selected].map(([path, tr]) => ({ path, mode: tr.querySelector('select.mode').value }));
    const chosen = [...detectors.querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value);
    const config = { fields };
    if (chosen.length) config.detectors = chosen;
    if (nonJson.value === 'pass') config.on_non_json = 'pass';
    return config;
  }

  const currentKey = () => JSON.stringify({ topic, config: currentConfig() });

  function choicesChanged() {
    fieldsWrap.hidden = selected.size === 0;
    noFields.hidden = selected.size !== 0;
    const fresh = preview !== null && preview.key === currentKey();
    deploy.disabled = !fresh;
    if (preview && !fresh) setText(previewState, 'Your choices changed since this preview: preview again before deploying.');
    deployNote.hidden = fresh;
  }

  function markSpans(path, on) {
    for (const span of sample.querySelectorAll('.field')) if (span.dataset.path === path) span.classList.toggle('selected', on);
  }

  function toggle(path) {
    if (selected.has(path)) {
      selected.get(path).remove();
      selected.delete(path);
      markSpans(path, false);
    } else {
      const mode = h('select', { class: 'mode', 'aria-label': `How to mask ${path}` }, MODES.map(([value, label]) => h('option', { value }, label)));
      mode.value = 'hash';
      mode.addEventListener('change', choicesChanged);
      const remove = h('button', { type: 'button', class: 'remove link' }, 'Remove');
      remove.addEventListener('click', () => toggle(path));
      const tr = h('tr', { 'data-path': path }, h('td', null, h('code', null, path)), h('td', null, mode), h('td', null, remove));
      selected.set(path, tr);
      fieldsBody.append(tr);
      markSpans(path, true);
    }
    choicesChanged();
  }

  sample.addEventListener('click', (e) => {
    const span = e.target.closest('.field');
    if (span) toggle(span.dataset.path);
  });
  sample.addEventListener('keydown', (e) => {
    const span = e.target.closest('.field');
    if (span && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); toggle(span.dataset.path); }
  });
  detectors.addEventListener('change', choicesChanged);
  nonJson.addEventListener('change', choicesChanged);

  // --- Step 1 and 2: topic and sample -------------------------------------------------------
  function showSample() {
    const leaf = (value, path, span) => {
      if (path === null) {
        span.title = 'This value cannot be chosen on its own: its name has a "." or "[" in it, or it is the whole record';
        return;
      }
      span.classList.add('field');
      span.dataset.path = path;
      span.tabIndex = 0;
      span.setAttribute('role', 'button');
      span.title = `Hide ${path}`;
      if (selected.has(path)) span.classList.add('selected');
    };
    sample.replaceChildren(
      ...records.map((r) =>
        h(
          'div',
          { class: 'record' },
          h('p', { class: 'record-meta' }, `Partition ${r.partition}, offset ${r.offset}`, r.key !== null ? ` · key ${r.key}` : '', r.value_truncated ? ' · too long, shown cut short (not used in the preview)' : ''),
          h('pre', { class: 'code' }, valueView(r.value, { leaf })),
        ),
      ),
    );
    if (!records.length) sample.append(h('p', { class: 'empty' }, 'This topic has no records yet, so there is nothing to click. You can still turn on the detectors below.'));
  }

  async function loadSample() {
    const asked = (sampleRequest += 1);
    sample.replaceChildren(h('p', { class: 'muted' }, 'Reading the newest records…'));
    try {
      const answer = await get(`/v1/topics/${seg(topic)}/sample?limit=${SAMPLE_SIZE}`);
      if (!alive || asked !== sampleRequest) return;
      records = (answer && answer.records) || [];
      showSample();
    } catch (e) {
      if (asked !== sampleRequest) return;
      records = [];
      sample.replaceChildren(h('div', { class: 'error' }, 'Could not read records from this topic: ', errorBody(e)));
    }
  }

  function chooseTopic() {
    topic = topicSelect.value;
    for (const path of [...selected.keys()]) toggle(path);
    for (const box of detectors.querySelectorAll('input')) box.checked = false;
    nonJson.value = 'error';
    preview = null;
    previewEl.replaceChildren();
    previewError.replaceChildren();
    setText(previewState, '');
    deployError.replaceChildren();
    if (!outputEdited) outputInput.value = topic ? `${topic}.masked` : '';
    if (!nameEdited) nameInput.value = topic ? `mask-${topic}`.slice(0, 128) : '';
    showNameNote();
    choicesChanged();
    resample.hidden = !topic;
    records = [];
    if (topic) loadSample();
    else sample.replaceChildren();
  }

  function showNameNote() {
    const name = nameInput.value.trim();
    setText(nameNote, existing.has(name) ? `A connector named ${name} exists already: deploying replaces it.` : '');
    nameNote.className = existing.has(name) ? 'warning' : 'muted';
  }

  topicSelect.addEventListener('change', chooseTopic);
  resample.addEventListener('click', () => { if (topic) loadSample(); });
  outputInput.addEventListener('input', () => { outputEdited = true; });
  nameInput.addEventListener('input', () => { nameEdited = true; showNameNote(); });

  // --- Step 3: preview ----------------------------------------------------------------------
  async function findPlugin() {
    if (plugin) return plugin;
    const answer = await get('/v1/plugins');
    const found = byName(answer && answer.plugins).get(MASK_PLUGIN);
    if (!found || found.kind !== 'transform') return null;
    // The host's own order: the last version registered is the one `@latest` names.
    plugin = { name: found.name, version: found.versions[found.versions.length - 1].version };
    return plugin;
  }

  function previewRow(record, outputs, errors) {
    const before = parseJson(record.value);
    const after = outputs.map((o) => h('pre', { class: 'code' }, before === undefined ? valueView(o.value) : valueView(o.value, { compare: before })));
    const failed = errors.map((e) => h('p', { class: 'error' }, `Refused (${e.kind}): ${e.message}`));
    return h(
      'div',
      { class: 'preview-row' },
      h('div', { class: 'before' }, h('h3', null, `Before · offset ${record.offset}`), h('pre', { class: 'code' }, valueView(record.value, before === undefined ? {} : { compare: parseJson(outputs[0] && outputs[0].value) }))),
      h('div', { class: 'after' }, h('h3', null, 'After'), after.length || failed.length ? [after, failed] : h('p', { class: 'muted' }, 'No output: the record was dropped.')),
    );
  }

  previewButton.addEventListener('click', async () => {
    previewError.replaceChildren();
    const key = currentKey();
    const config = currentConfig();
    const forTopic = topic;
    if (!topic) { previewError.append(h('p', null, 'Choose a topic first (step 1).')); return; }
    if (!config.fields.length && !config.detectors) { previewError.append(h('p', null, 'Choose at least one field to hide (step 2), or turn on a detector.')); return; }
    previewButton.disabled = true;
    setText(previewState, 'Running the mask on the sample…');
    try {
      const found = await findPlugin();
      if (!found) throw new Error(`this host has no ${MASK_PLUGIN} transform plugin; ask its operator`);
      const used = records.filter((r) => !r.value_truncated);
      const body = { config, records: used.map((r) => ({ key: r.key, value: r.value, headers: Object.fromEntries((r.headers || []).map(([k, v]) => [k, v ?? ''])) })) };
      const answer = await post(`/v1/plugins/${seg(found.name)}/${seg(found.version)}/test`, body);
      // Another topic was chosen meanwhile: this preview is of records no longer shown.
      if (!alive || topic !== forTopic) return;
      const outputs = answer.outputs || [];
      const errors = answer.errors || [];
      previewEl.replaceChildren(...used.map((r, i) => previewRow(r, outputs.filter((o) => o.input === i), errors.filter((e) => e.input === i))));
      if (errors.length) {
        preview = null;
        previewError.append(
          h('p', null, `The mask refused ${errors.length} of the ${used.length} records, so it would stop the connector on them:`),
          h('ul', null, errors.map((e) => h('li', null, `offset ${used[e.input] ? used[e.input].offset : '?'}: ${e.message}`))),
          nonJson.value === 'error' ? h('p', null, 'If those records are simply not JSON, step 2 lets you pass such records through unchanged.') : null,
        );
        setText(previewState, '');
      } else {
        preview = { key, plugin: answer.plugin, config };
        const skipped = records.length - used.length;
        setText(previewState, `${answer.plugin} masked ${used.length} records${skipped ? ` (${skipped} too long to preview were left out)` : ''}.${used.length ? '' : ' The topic has no records to try, but the host accepted these choices.'} Changed values are highlighted.`);
      }
    } catch (e) {
      if (topic !== forTopic) return;
      preview = null;
      previewEl.replaceChildren();
      setText(previewState, '');
      previewError.append(h('p', null, 'The preview did not work:'), ...errorBody(e));
    } finally {
      previewButton.disabled = false;
      choicesChanged();
    }
  });

  // --- Step 4: deploy -------------------------------------------------------------------------
  deploy.addEventListener('click', async () => {
    deployError.replaceChildren();
    if (!preview || preview.key !== currentKey()) { choicesChanged(); return; }
    const name = nameInput.value.trim();
    if (!name) { deployError.append(h('p', null, 'Give the new connector a name.')); return; }
    const body = { topics: [topic], output_topic: outputInput.value.trim(), transforms: [{ plugin: preview.plugin, config: preview.config }] };
    deploy.disabled = true;
    try {
      await put(`/v1/connectors/${seg(name)}`, body);
      location.hash = `#/connectors/${encodeURIComponent(name)}`;
    } catch (e) {
      deployError.append(h('p', null, 'The host did not deploy it:'), ...errorBody(e));
      choicesChanged();
    }
  });

  // --- Start -----------------------------------------------------------------------------------
  (async () => {
    try {
      const answer = await get('/v1/topics');
      if (!alive) return;
      const topics = (answer && answer.topics) || [];
      topicSelect.append(...topics.map((t) => h('option', { value: t.name }, `${t.name} (${t.partitions} partition${t.partitions === 1 ? '' : 's'})`)));
      setText(topicNote, topics.length ? '' : 'No topics found. Topics appear here once something writes to Kafka.');
    } catch (e) {
      topicNote.className = 'error';
      setText(topicNote, `Could not list the topics: ${e.detail || e}`);
    }
    try {
      const answer = await get('/v1/connectors');
      existing = new Set(((answer && answer.connectors) || []).map((c) => c.name));
      showNameNote();
    } catch { /* the warning about replacing a connector is a nicety */ }
  })();
  choicesChanged();
  return () => { alive = false; };
}
