// Plugins: every plugin with its versions, and an upload (drop a .wasm file or choose one).
// The host needs a name and a version with each upload (`POST /v1/plugins?name=&version=`).

import { get, request } from '/ui/api.js';
import { h, setText, showAlert, clearAlert } from '/ui/dom.js';

/**
 * The plugins of a `GET /v1/plugins` answer, one entry per name, versions in the host's
 * order: registration order, so the last one is what `@latest` resolves to.
 */
export function byName(versions) {
  const out = new Map();
  for (const v of versions || []) {
    if (!out.has(v.name)) out.set(v.name, { name: v.name, kind: v.kind, versions: [] });
    out.get(v.name).versions.push(v);
  }
  return out;
}

function shortDigest(digest) {
  const [algo, hex] = String(digest || '').split(':');
  return hex ? `${algo}:${hex.slice(0, 12)}…` : String(digest || '');
}

function row(plugin) {
  const latest = plugin.versions[plugin.versions.length - 1];
  const usedBy = [...new Set(plugin.versions.flatMap((v) => v.used_by || []))];
  const digests = plugin.versions.map((v) => `${v.version}: ${v.digest}`).join('\n');
  return h(
    'tr',
    { 'data-plugin': plugin.name },
    h('td', { class: 'name' }, plugin.name),
    h('td', null, plugin.kind),
    h('td', null, plugin.versions.map((v, i) => [i ? ', ' : '', v.version]), plugin.versions.length > 1 ? h('span', { class: 'muted' }, ' (latest last)') : null),
    h('td', null, h('code', { class: 'digest', title: digests }, shortDigest(latest.digest))),
    h('td', null, usedBy.length ? usedBy.map((c, i) => [i ? ', ' : '', h('a', { href: `#/connectors/${encodeURIComponent(c)}` }, c)]) : h('span', { class: 'muted' }, 'none')),
  );
}

/** A plugin name guessed from a file name (`My_Mask.wasm` → `my_mask`). */
function nameFromFile(fileName) {
  return fileName.replace(/\.wasm$/i, '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
}

export function mount(root) {
  const tbody = h('tbody');
  const table = h('table', { id: 'plugins', class: 'grid' }, h('thead', null, h('tr', null, ['Name', 'Kind', 'Versions', 'Digest (latest)', 'Used by'].map((c) => h('th', { scope: 'col' }, c)))), tbody);
  const empty = h('p', { class: 'empty', hidden: true }, 'No plugins yet — upload one below.');
  const nameInput = h('input', { id: 'upload-name', type: 'text', placeholder: 'e.g. my-mask', autocomplete: 'off', spellcheck: 'false' });
  const versionInput = h('input', { id: 'upload-version', type: 'text', placeholder: 'e.g. 1.0.0', autocomplete: 'off', spellcheck: 'false' });
  const fileInput = h('input', { id: 'upload-input', type: 'file', accept: '.wasm' });
  const result = h('p', { id: 'upload-result', role: 'status' });
  const zone = h(
    'div',
    { id: 'drop-zone', class: 'drop-zone' },
    h('p', null, 'Drop a WebAssembly component (.wasm) here, or choose the file:'),
    fileInput,
  );
  let alive = true;

  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Plugins')),
    empty,
    h('div', { class: 'scroll' }, table),
    h(
      'section',
      { class: 'card' },
      h('h2', null, 'Upload a plugin'),
      h('p', { class: 'muted' }, 'The host compiles the component and checks which kind of plugin it is. A new version of an existing plugin becomes its latest.'),
      h('div', { class: 'fields' }, h('label', null, 'Name', nameInput), h('label', null, 'Version', versionInput)),
      zone,
      result,
    ),
  );

  async function refresh() {
    try {
      const answer = await get('/v1/plugins');
      if (!alive) return;
      const plugins = [...byName(answer && answer.plugins).values()];
      tbody.replaceChildren(...plugins.map(row));
      empty.hidden = plugins.length !== 0;
      table.hidden = plugins.length === 0;
      clearAlert('plugins');
    } catch (e) {
      showAlert(`Could not load the plugins: ${e.detail || e}`, 'plugins');
    }
  }

  async function upload(file) {
    if (!file) return;
    if (!nameInput.value.trim()) nameInput.value = nameFromFile(file.name);
    const query = new URLSearchParams();
    if (nameInput.value.trim()) query.set('name', nameInput.value.trim());
    if (versionInput.value.trim()) query.set('version', versionInput.value.trim());
    result.className = 'muted';
    setText(result, `Uploading ${file.name}… (the host compiles it; this can take a few seconds)`);
    try {
      const answer = await request('POST', `/v1/plugins?${query}`, { body: file, type: 'application/wasm' });
      result.className = 'success';
      setText(result, `Uploaded ${answer.name} ${answer.version}`);
      result.title = `${answer.kind} plugin, ${answer.digest}`;
    } catch (e) {
      result.className = 'error';
      setText(result, e.detail || String(e));
      result.title = e.code || '';
    } finally {
      fileInput.value = '';
    }
    await refresh();
  }

  fileInput.addEventListener('change', () => upload(fileInput.files && fileInput.files[0]));
  for (const type of ['dragenter', 'dragover']) {
    zone.addEventListener(type, (e) => {
      e.preventDefault();
      zone.classList.add('over');
    });
  }
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    const file = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
    upload(file);
  });

  refresh();
  return () => { alive = false; };
}
