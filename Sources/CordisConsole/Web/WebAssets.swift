/// The web console's own files (the page, its style sheet and its script), compiled into the binary:
/// no package manager, no CDN, no resource bundle to find at run time.
enum WebAssets {
    /// A file the page loads.
    enum Asset: String, Sendable, Hashable, CaseIterable {
        /// `/app.js`.
        case script = "/app.js"
        /// `/app.css`.
        case style = "/app.css"

        /// The asset served at `path`, or nil.
        init?(path: String) { self.init(rawValue: path) }

        /// Its bytes.
        var bytes: [UInt8] {
            switch self {
            case .script: return WebAssets.scriptBytes
            case .style: return WebAssets.styleBytes
            }
        }

        /// Its content type.
        var contentType: String {
            switch self {
            case .script: return "text/javascript; charset=utf-8"
            case .style: return "text/css; charset=utf-8"
            }
        }
    }

    /// The one document every page path serves; the script shows the page its path names.
    static let page: [UInt8] = Array(pageText.utf8)
    static let scriptBytes: [UInt8] = Array(scriptText.utf8)
    static let styleBytes: [UInt8] = Array(styleText.utf8)

    static let pageText = ##"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cordis console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header>
  <div class="brand">Cordis <span class="muted">console</span></div>
  <nav>
    <a href="/cluster" data-page="cluster">Cluster</a>
    <a href="/plugins" data-page="plugins">Plugins</a>
    <a href="/graph" data-page="graph">Graph</a>
    <a href="/timeline" data-page="timeline">Timeline</a>
    <a href="/services" data-page="services">Services</a>
  </nav>
  <div id="link" class="link connecting" title="the console's live stream">connecting…</div>
</header>
<div id="problem" class="banner" hidden></div>
<div id="stale" class="banner stale" role="alert" hidden></div>
<div id="notice" class="banner notice" hidden></div>
<main>
  <section id="page-cluster" data-page="cluster" hidden>
    <h1>Cluster</h1>
    <div id="summary" class="summary"></div>
    <table id="members" class="grid">
      <thead><tr><th>Member</th><th>Health</th><th>Incarnation</th><th>Addresses</th><th>Link</th><th>etcd lease</th><th>Fibers</th><th></th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section id="page-plugins" data-page="plugins" hidden>
    <h1>Plugins</h1>
    <div id="nodes"></div>
  </section>
  <section id="page-graph" data-page="graph" hidden>
    <h1>Graph</h1>
    <div class="legend">
      <span class="state state-active">active</span><span class="state state-pending">pending</span>
      <span class="state state-loading">loading</span><span class="state state-failed">failed</span>
      <span class="state state-lastknown">last known (unreachable)</span>
    </div>
    <div id="graph-error" class="field-error" hidden></div>
    <div id="graph" class="graph"></div>
    <h2>Pending fibers</h2>
    <ul id="pending" class="plain"></ul>
  </section>
  <section id="page-timeline" data-page="timeline" hidden>
    <h1>Timeline</h1>
    <div class="filters">
      <label>Node <select id="filter-node"><option value="">every node</option></select></label>
      <label>Entry <input id="filter-entry" placeholder="any entry" autocomplete="off"></label>
      <span id="timeline-count" class="muted"></span>
    </div>
    <table id="timeline" class="grid">
      <thead><tr><th>Time (UTC)</th><th>Node</th><th>Kind</th><th>What happened</th><th>Operator</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section id="page-services" data-page="services" hidden>
    <h1>Services</h1>
    <div class="columns">
      <div>
        <h2>Provided services</h2>
        <table id="services" class="grid">
          <thead><tr><th>Service</th><th>Providers</th><th>Consumers</th></tr></thead>
          <tbody></tbody>
        </table>
        <h2>Remote interfaces</h2>
        <table id="interfaces" class="grid">
          <thead><tr><th>Service</th><th>Interface</th><th>Methods</th><th>Nodes</th></tr></thead>
          <tbody></tbody>
        </table>
        <h2>Catalog</h2>
        <div id="catalog"></div>
      </div>
      <form id="call" class="card">
        <h2>Call a method</h2>
        <label>Service <select id="call-service"></select></label>
        <label>Method <input id="call-method" list="call-methods" placeholder="value" autocomplete="off" required></label>
        <datalist id="call-methods"></datalist>
        <label>Arguments (JSON: an object by label, an array, or one value)
          <textarea id="call-args" rows="3" spellcheck="false">[]</textarea></label>
        <label>Realm <input id="call-realm" placeholder="root realm" autocomplete="off"></label>
        <button id="call-submit" type="submit">Call</button>
        <div id="call-error" class="field-error" hidden></div>
        <pre id="call-result" class="result" hidden></pre>
      </form>
    </div>
  </section>
</main>
</body>
</html>
"""##

    static let styleText = ##"""
:root {
  --bg: #f6f7f9; --panel: #ffffff; --text: #1d2330; --muted: #6b7280; --line: #e3e6ea;
  --accent: #2f5bd3; --up: #1f8a4c; --down: #c0392b; --warn: #b7791f; --neutral: #8a8f98;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 14px; color: var(--text); background: var(--bg);
}
body { margin: 0; }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #161b26; color: #fff; }
.brand { font-weight: 700; font-size: 16px; letter-spacing: .02em; }
.brand .muted { color: #9aa3b2; font-weight: 400; }
nav { display: flex; gap: 4px; flex: 1; }
nav a { color: #c9d1de; text-decoration: none; padding: 6px 12px; border-radius: 6px; }
nav a:hover { background: #242b3a; color: #fff; }
nav a.current { background: #2f3a52; color: #fff; }
.link { font-size: 12px; padding: 4px 10px; border-radius: 999px; background: #2a3140; color: #c9d1de; }
.link.live::before { content: "● "; color: #44d17a; }
.link.connecting::before, .link.lost::before { content: "● "; color: #f0b429; }
main { padding: 8px 24px 40px; max-width: 1400px; }
h1 { font-size: 20px; margin: 16px 0 12px; }
h2 { font-size: 15px; margin: 18px 0 8px; }
.muted { color: var(--muted); }
.banner { margin: 0; padding: 8px 24px; background: #fdecea; color: #8a1c12; border-bottom: 1px solid #f5c2bc; }
.banner.stale { background: #3a3f4b; color: #f3f4f6; border-bottom-color: #2a2f3a; font-weight: 600; }
body.stale main { filter: grayscale(1); opacity: 0.55; pointer-events: none; user-select: none; }
.link.stale::before { content: "● "; color: #9aa3b2; }
.banner.notice { background: #fff6e0; color: #7a4d00; border-bottom-color: #f1d9a0; }
.banner.notice.ok { background: #e9f7ef; color: #185c35; border-bottom-color: #bfe3cd; }
table.grid { border-collapse: collapse; width: 100%; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
table.grid th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; background: #fafbfc; }
table.grid th, table.grid td { padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.grid tr:last-child td { border-bottom: none; }
.summary { display: flex; gap: 12px; margin-bottom: 12px; }
.summary .tile { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 110px; }
.summary .tile b { display: block; font-size: 22px; }
.health, .state { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; border: 1px solid transparent; }
.health-up { background: #e3f5ea; color: var(--up); }
.health-down, .health-unreachable { background: #fdecea; color: var(--down); }
.health-suspected, .health-degraded { background: #fff3d6; color: var(--warn); }
.health-left, .health-stopped { background: #eceef1; color: var(--neutral); }
.state-active { background: #dff3e4; color: #1f6b3a; }
.state-pending { background: #fbf1c7; color: #7a5b00; }
.state-loading, .state-unloading { background: #dceefb; color: #1d5d90; }
.state-failed { background: #fbe0dc; color: #9b2c20; }
.state-disabled, .state-none { background: #eceef1; color: var(--neutral); }
.state-lastknown { background: #fff; color: var(--neutral); border: 1px dashed var(--neutral); }
.node { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 16px; }
.node.unreachable { border-style: dashed; }
.node.unreachable .entries { color: var(--neutral); }
.node > .head { display: flex; align-items: center; gap: 10px; padding: 10px 14px; border-bottom: 1px solid var(--line); }
.node > .head h2 { margin: 0; }
.entries { width: 100%; border-collapse: collapse; }
.entries td, .entries th { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
.entries th { font-size: 12px; color: var(--muted); font-weight: 600; }
.entries .error { color: var(--down); max-width: 380px; }
.entries .actions { white-space: nowrap; text-align: right; }
.entries tr.editor td { background: #fafbfc; }
button { font: inherit; border: 1px solid #cfd5dd; background: #fff; border-radius: 6px; padding: 3px 10px; cursor: pointer; }
button:hover { border-color: var(--accent); color: var(--accent); }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.danger:hover { border-color: var(--down); color: var(--down); }
button:disabled { opacity: .45; cursor: default; }
input, select, textarea { font: inherit; border: 1px solid #cfd5dd; border-radius: 6px; padding: 4px 8px; background: #fff; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; width: 100%; box-sizing: border-box; }
.switch { position: relative; display: inline-block; width: 34px; height: 18px; }
.switch input { opacity: 0; width: 34px; height: 18px; margin: 0; position: absolute; cursor: pointer; z-index: 1; }
.switch span { position: absolute; inset: 0; background: #cfd5dd; border-radius: 999px; transition: background .15s; }
.switch span::after { content: ""; position: absolute; left: 2px; top: 2px; width: 14px; height: 14px; border-radius: 50%; background: #fff; transition: left .15s; }
.switch input:checked + span { background: var(--up); }
.switch input:checked + span::after { left: 18px; }
.switch input:disabled + span { opacity: .5; }
.config-editor { display: grid; grid-template-columns: minmax(260px, 1fr) minmax(220px, 1fr); gap: 12px; }
.fields { font-size: 12px; color: var(--muted); }
.fields .bad { color: var(--down); font-weight: 600; }
.field-error { color: var(--down); background: #fdecea; border: 1px solid #f5c2bc; border-radius: 6px; padding: 6px 10px; margin-top: 6px; white-space: pre-wrap; }
.add { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 10px 14px; }
.add input, .add select { width: 140px; }
.graph { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px; overflow: auto; min-height: 120px; }
.graph svg { display: block; width: 100%; max-height: 72vh; }
.legend { display: flex; gap: 8px; margin-bottom: 10px; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: 4px 0; }
.filters { display: flex; gap: 16px; align-items: center; margin-bottom: 10px; }
.columns { display: grid; grid-template-columns: 2fr 1fr; gap: 24px; align-items: start; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.card label { display: block; margin-bottom: 10px; color: var(--muted); font-size: 12px; }
.card label input, .card label select, .card label textarea { display: block; width: 100%; box-sizing: border-box; margin-top: 4px; color: var(--text); font-size: 14px; }
.result { background: #161b26; color: #d6e2f5; padding: 10px; border-radius: 6px; white-space: pre-wrap; }
.catalog-node { margin-bottom: 12px; }
td.nowrap { white-space: nowrap; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
"""##

    static let scriptText = ##"""
'use strict';
// The Cordis web console: five pages over one live stream of server-sent events (/events). The console
// process holds the link to the node; every change goes to it as POST /api/action, and the node decides.

const pages = ['cluster', 'plugins', 'graph', 'timeline', 'services'];
const model = { data: null, graph: null, events: [], editors: {}, adds: {} };
// Latency of each fiber change from the node's event to the page's DOM (milliseconds), for the figures.
window.cordisLatencies = [];

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== 'string') node[key] = value;
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function currentPage() {
  const name = location.pathname.replace(/^\//, '');
  return pages.includes(name) ? name : 'cluster';
}

function show() {
  const page = currentPage();
  for (const section of document.querySelectorAll('main > section')) section.hidden = section.dataset.page !== page;
  for (const link of document.querySelectorAll('nav a')) link.classList.toggle('current', link.dataset.page === page);
  document.title = 'Cordis console: ' + page;
  schedule('all');
}

function notice(text, ok) {
  const box = document.getElementById('notice');
  box.textContent = text;
  box.classList.toggle('ok', !!ok);
  box.hidden = !text;
}

async function act(command, node, args) {
  const response = await fetch('/api/action', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, credentials: 'same-origin',
    body: JSON.stringify({ command, node, args }),
  });
  let body = {};
  try { body = await response.json(); } catch (error) { body = { error: 'the console answered ' + response.status }; }
  if (!response.ok) throw new Error(body.error || ('the console answered ' + response.status));
  return body.result;
}

// ---- Data helpers

function statusNodes() { return (model.data && model.data.status && model.data.status.nodes) || []; }
// The members the node reached lists, then those this page saw before and the node no longer lists
// (a member forgotten, or whose etcd registration ended): shown as `left` until they come back.
const seenMembers = {};
function memberList() {
  const listed = (model.data && model.data.members && model.data.members.members) || [];
  for (const member of listed) seenMembers[member.name] = member;
  const names = new Set(listed.map((member) => member.name));
  const gone = Object.keys(seenMembers).sort().filter((name) => !names.has(name))
    .map((name) => Object.assign({}, seenMembers[name], { health: 'left', linked: false, self: false }));
  return listed.concat(gone);
}
function statusNode(name) { return statusNodes().find((node) => node.name === name); }
function catalogOf(node) { return ((model.data && model.data.catalog) || {})[node] || []; }

function healthOf(member) {
  const node = statusNode(member.name);
  if (node && node.degraded) return 'degraded';
  if (member.health) return member.health;
  return member.reachable ? 'up' : 'down';
}

function lastSeenText(node) {
  if (!node || node.reachable !== false) return '';
  if (typeof node.lastSeen !== 'number') return 'never seen';
  // Counted on from when the console fetched it, by this page's clock.
  const since = (Date.now() - (model.receivedAt || Date.now())) / 1000;
  return 'last seen ' + Math.floor(node.lastSeen + since) + ' s ago';
}

function time(seconds) {
  return new Date(seconds * 1000).toISOString().replace('T', ' ').replace('Z', '');
}

// ---- Cluster

// The Cluster page's rows by member, each with what it shows. A row whose member shows the same is kept
// as it is, so a Forget button under the pointer is never replaced mid-click; only the "last seen" count
// ticks inside it.
let memberRows = new Map();

function renderCluster() {
  const members = memberList();
  const counts = {};
  for (const member of members) counts[healthOf(member)] = (counts[healthOf(member)] || 0) + 1;
  const summary = document.getElementById('summary');
  summary.replaceChildren(
    el('div', { class: 'tile' }, el('b', { text: String(members.length) }), 'members'),
    ...['up', 'suspected', 'degraded', 'down', 'stopped', 'left'].filter((health) => counts[health])
      .map((health) => el('div', { class: 'tile' }, el('b', { text: String(counts[health]) }), health)));
  const previous = memberRows;
  memberRows = new Map();
  const rows = members.map((member) => {
    const node = statusNode(member.name);
    const health = healthOf(member);
    // Only a node in etcd mode reports its lease: held (its id and time to live) or lost (`degraded`).
    const lease = node && node.degraded ? 'lost: ' + node.degraded
      : node && node.lease ? 'held ' + node.lease.id + ' (TTL ' + node.lease.ttl + ' s)' : '—';
    const link = member.self ? 'this node' : (member.linked ? 'linked' : 'no link');
    const fibers = String(node ? (node.fibers || []).length : 0) + (node && node.reachable === false ? ' (last known)' : '');
    const reason = node && node.unreachable ? node.unreachable : '';
    const unseen = Boolean(node && node.reachable === false);
    const shown = JSON.stringify([member.name, member.self, health, reason, unseen, member.incarnation,
      member.addresses, link, lease, fibers]);
    const kept = previous.get(member.name);
    if (kept && kept.shown === shown) {
      memberRows.set(member.name, kept);
      return kept.row;
    }
    const row = el('tr', { 'data-member': member.name, 'data-health': health },
      el('td', {}, el('b', { text: member.name }), member.self ? el('span', { class: 'muted', text: ' (reached)' }) : null),
      el('td', {}, el('span', { class: 'health health-' + health, text: health }),
        reason || unseen ? el('div', { class: 'muted' }, reason || null, reason && unseen ? '; ' : null,
          unseen ? el('span', { 'data-seen': member.name }) : null) : null),
      // An incarnation is a UUID: its first 8 digits tell lives apart, the whole one is its tooltip.
      el('td', { class: 'mono nowrap', title: member.incarnation || '',
        text: member.incarnation ? member.incarnation.slice(0, 8) + '…' : '' }),
      el('td', { class: 'mono', text: (member.addresses || []).join('\n') }),
      el('td', { class: 'nowrap', text: link }),
      el('td', { text: lease }),
      el('td', { class: 'nowrap', text: fibers }),
      // A member that is down or stopped can be forgotten (admin role: the node decides).
      el('td', {}, health === 'down' || health === 'stopped' ? el('button', {
        type: 'button', 'data-forget': member.name, text: 'Forget',
        onclick: () => act('forget', null, { member: member.name })
          .then(() => notice('forgot ' + member.name, true)).catch((error) => notice(error.message)),
      }) : null));
    memberRows.set(member.name, { shown, row });
    return row;
  });
  const body = document.querySelector('#members tbody');
  // Only rows that changed are touched: a kept row is not even moved.
  const wanted = new Set(rows);
  for (const child of [...body.children]) if (!wanted.has(child)) child.remove();
  rows.forEach((row, index) => { if (body.children[index] !== row) body.insertBefore(row, body.children[index] || null); });
  tickLastSeen();
}

// An unreachable member's "last seen" counts on between changes, by this page's clock.
function tickLastSeen() {
  for (const span of document.querySelectorAll('#members [data-seen]')) {
    const text = lastSeenText(statusNode(span.dataset.seen));
    if (span.textContent !== text) span.textContent = text;
  }
}

// ---- Plugins

function entryTree(entries) {
  const children = {};
  for (const entry of entries) (children[entry.parent || ''] = children[entry.parent || ''] || []).push(entry);
  const ordered = [];
  const walk = (parent, depth) => {
    for (const entry of children[parent] || []) {
      ordered.push({ entry, depth });
      if (entry.plugin === 'group') walk(entry.id, depth + 1);
    }
  };
  walk('', 0);
  // An entry whose group is missing is still shown.
  const placed = new Set(ordered.map((item) => item.entry));
  for (const entry of entries) if (!placed.has(entry)) ordered.push({ entry, depth: 0 });
  return ordered;
}

function stateOf(entry) {
  if (entry.state) return entry.state;
  return entry.disabled ? 'disabled' : 'none';
}

function configProblems(message) {
  // The node's `invalid config:` lines name the field as `(at a.b)`: path → what is wrong with it.
  const problems = {};
  for (const line of message.split('\n')) {
    const match = line.match(/^\s*-?\s*(.*?)\s*\(at ([^)]+)\)\s*$/);
    if (match) problems[match[2]] = match[1];
  }
  return problems;
}

function configText(entry) {
  // The editor opens on the config the entry has, as stored, so saving it unchanged changes nothing;
  // a node too old to report configs sends none, and the editor then starts from {}.
  return entry.config === undefined ? '{}' : JSON.stringify(entry.config, null, 2);
}

function renderEditor(node, entry, key) {
  const editor = model.editors[key];
  const fields = (catalogOf(node.name).find((plugin) => plugin.name === entry.plugin) || {}).config || [];
  const textarea = el('textarea', { rows: 5, spellcheck: 'false', 'data-config': key, 'aria-label': 'config of ' + key });
  textarea.value = editor.text;
  textarea.addEventListener('input', () => { editor.text = textarea.value; });
  const problems = editor.error ? configProblems(editor.error) : {};
  const save = el('button', { class: 'primary', type: 'button', 'data-save': key, text: 'Save config' });
  save.addEventListener('click', async () => {
    let config;
    try {
      config = JSON.parse(editor.text);
    } catch (error) {
      editor.error = 'not JSON: ' + error.message;
      renderPlugins(true);
      return;
    }
    save.disabled = true;
    try {
      await act('config', node.name, { entry: entry.id, config });
      delete model.editors[key];
      notice(key + ': config saved', true);
    } catch (error) {
      editor.error = error.message;
    }
    renderPlugins(true);
  });
  const cancel = el('button', { type: 'button', text: 'Cancel', onclick: () => { delete model.editors[key]; renderPlugins(true); } });
  return el('tr', { class: 'editor', 'data-editor': key },
    el('td', { colspan: 6 },
      el('div', { class: 'config-editor' },
        el('div', {}, textarea, el('div', {}, save, ' ', cancel),
          editor.error ? el('div', { class: 'field-error', 'data-config-error': key, text: editor.error }) : null),
        el('div', { class: 'fields' },
          el('div', { text: fields.length ? 'Fields of ' + entry.plugin + ':' : entry.plugin + ' takes no declared config fields' }),
          el('ul', { class: 'plain' }, fields.map((field) => el('li', {
            class: field.path in problems ? 'bad' : '',
            'data-field': field.path,
            text: field.path + ': ' + field.type + (field.optional ? ' (optional)' : '') + (field.path in problems ? ' ← ' + problems[field.path] : ''),
          })))))));
}

function renderEntry(node, item, live) {
  const entry = item.entry;
  const key = node.name + ':' + entry.id;
  const state = stateOf(entry);
  const toggle = el('input', { type: 'checkbox', role: 'switch', checked: !entry.disabled, disabled: !live, 'data-switch': key, 'aria-label': 'enable ' + key });
  toggle.addEventListener('change', async () => {
    toggle.disabled = true;
    try {
      await act(toggle.checked ? 'enable' : 'disable', node.name, { entry: entry.id });
      notice(key + (toggle.checked ? ' enabled' : ' disabled'), true);
    } catch (error) {
      toggle.checked = !toggle.checked;
      notice(key + ': ' + error.message);
    }
    toggle.disabled = !live;
  });
  const button = (label, handler, extra) => el('button', Object.assign({ type: 'button', text: label, disabled: !live, onclick: handler }, extra || {}));
  const run = async (command, args, done) => {
    try {
      const result = await act(command, node.name, Object.assign({ entry: entry.id }, args || {}));
      notice(done(result), true);
    } catch (error) {
      notice(key + ': ' + error.message);
    }
  };
  const idCell = el('td', {}, el('b', { text: entry.id }));
  idCell.style.paddingLeft = (10 + item.depth * 22) + 'px';
  const row = el('tr', { 'data-entry': key, 'data-state': state },
    idCell,
    el('td', { class: 'mono', text: entry.plugin }),
    el('td', {}, el('span', { class: 'state state-' + (live ? state : 'lastknown'), 'data-state-of': key, text: live ? state : state + ' (last known)' })),
    el('td', { class: 'error', text: entry.error || '' }),
    el('td', {}, el('label', { class: 'switch', title: 'enabled' }, toggle, el('span'))),
    el('td', { class: 'actions' },
      entry.plugin === 'group' ? null : button('Config', () => { model.editors[key] = model.editors[key] || { text: configText(entry), error: null }; renderPlugins(true); }, { 'data-edit': key }),
      ' ', button('Restart', () => run('restart', {}, (result) => key + ' restarted: ' + ((result && result.state) || 'done')), { 'data-restart': key }),
      ' ', button('Move', () => {
        const parent = window.prompt('Move ' + key + ' into which group? (empty: the top level)', entry.parent || '');
        if (parent === null) return;
        run('move', parent ? { parent } : {}, () => key + ' moved');
      }),
      ' ', button('Remove', () => { if (window.confirm('Remove ' + key + '?')) run('remove', {}, () => key + ' removed'); }, { class: 'danger' })));
  return row;
}

function renderAdd(node) {
  const draft = model.adds[node.name] = model.adds[node.name] || { id: '', plugin: '', parent: '', config: '' };
  const input = (field, placeholder) => {
    const box = el('input', { placeholder, 'data-add': node.name + ':' + field, autocomplete: 'off' });
    box.value = draft[field];
    box.addEventListener('input', () => { draft[field] = box.value; });
    return box;
  };
  const plugins = el('select', { 'data-add': node.name + ':plugin' },
    el('option', { value: '', text: 'plugin…' }),
    catalogOf(node.name).map((plugin) => el('option', { value: plugin.name, text: plugin.name })),
    el('option', { value: 'group', text: 'group' }));
  plugins.value = draft.plugin;
  plugins.addEventListener('change', () => { draft.plugin = plugins.value; });
  const groups = el('select', { 'data-add': node.name + ':parent' }, el('option', { value: '', text: 'top level' }),
    (node.entries || []).filter((entry) => entry.plugin === 'group').map((entry) => el('option', { value: entry.id, text: 'in ' + entry.id })));
  groups.value = draft.parent;
  groups.addEventListener('change', () => { draft.parent = groups.value; });
  const add = el('button', { type: 'button', class: 'primary', text: 'Add entry', onclick: async () => {
    const entry = { id: draft.id, plugin: draft.plugin };
    if (draft.config.trim()) {
      try { entry.config = JSON.parse(draft.config); } catch (error) { notice('the new entry\'s config is not JSON: ' + error.message); return; }
    }
    try {
      await act('add', node.name, Object.assign({ entry }, draft.parent ? { parent: draft.parent } : {}));
      notice(node.name + ':' + draft.id + ' added', true);
      delete model.adds[node.name];
      renderPlugins(true);
    } catch (error) {
      notice(node.name + ': ' + error.message);
    }
  } });
  return el('div', { class: 'add' }, input('id', 'entry id'), plugins, groups, input('config', 'config JSON (optional)'), add);
}

let pluginsSignature = '';
// The rows drawn last, by node and entry: a row whose entry, depth and reachability did not change is
// kept as it is, so a redraw of thousands of entries builds only the rows that changed.
let entryRows = new Map();
function entryRow(node, item, live) {
  const key = node.name + ':' + item.entry.id;
  const signature = JSON.stringify([item.entry, item.depth, live]);
  const kept = entryRows.get(key);
  if (kept && kept.signature === signature) return kept.row;
  const row = renderEntry(node, item, live);
  entryRows.set(key, { signature, row });
  return row;
}
function renderPlugins(force) {
  const signature = JSON.stringify([statusNodes().map((node) => [node.name, node.reachable, node.entries, node.lastSeen && Math.floor(node.lastSeen)]), model.data && model.data.catalog]);
  if (!force && signature === pluginsSignature) return;
  pluginsSignature = signature;
  const container = document.getElementById('nodes');
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.config : null;
  const previous = entryRows;
  entryRows = new Map();
  const keep = (node, item, live) => {
    const key = node.name + ':' + item.entry.id;
    if (previous.has(key)) entryRows.set(key, previous.get(key));
    return entryRow(node, item, live);
  };
  container.replaceChildren(...statusNodes().map((node) => {
    const live = node.reachable !== false;
    const rows = [];
    for (const item of entryTree(node.entries || [])) {
      rows.push(keep(node, item, live));
      const key = node.name + ':' + item.entry.id;
      if (model.editors[key] && live) rows.push(renderEditor(node, item.entry, key));
    }
    return el('div', { class: 'node' + (live ? '' : ' unreachable'), 'data-node': node.name },
      el('div', { class: 'head' }, el('h2', { text: node.name }),
        live ? el('span', { class: 'health health-up', text: 'reachable' })
          : el('span', { class: 'health health-down', text: 'unreachable, ' + lastSeenText(node) + ': entries as last known' })),
      el('table', { class: 'entries' },
        el('thead', {}, el('tr', {}, ['Entry', 'Plugin', 'State', 'Error', 'Enabled', ''].map((title) => el('th', { text: title })))),
        el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: 6, class: 'muted', text: 'no entries' })))),
      live ? renderAdd(node) : null);
  }));
  if (focused) {
    const again = container.querySelector('textarea[data-config="' + CSS.escape(focused) + '"]');
    if (again) again.focus();
  }
}

// A fiber's change shown at once, before the refetched status confirms it.
function applyEvent(event) {
  if (event.kind !== 'status' || !event.detail || !event.detail.entry) return;
  const key = event.node + ':' + event.detail.entry;
  const badge = document.querySelector('[data-state-of="' + CSS.escape(key) + '"]');
  if (!badge || !event.detail.to) return;
  badge.textContent = event.detail.to;
  badge.className = 'state state-' + event.detail.to;
  badge.closest('tr').dataset.state = event.detail.to;
  // The row no longer shows what its entry's last status said: it is drawn again with the next one.
  entryRows.delete(key);
  window.cordisLatencies.push(Date.now() - event.time * 1000);
  // The status the console fetches after this event redraws the row, even if it looks unchanged.
  pluginsSignature = '';
}

// ---- Graph

function renderGraph() {
  const graph = model.graph || {};
  const error = document.getElementById('graph-error');
  error.textContent = graph.error || '';
  error.hidden = !graph.error;
  const box = document.getElementById('graph');
  // The SVG comes from Graphviz, which escapes every label it draws.
  if (box.dataset.svg !== graph.svg) {
    box.innerHTML = graph.svg || '';
    box.dataset.svg = graph.svg || '';
    const svg = box.querySelector('svg');
    if (svg) {
      // Scaled to the box by its viewBox, not drawn at Graphviz's point size.
      svg.removeAttribute('width');
      svg.removeAttribute('height');
    }
  }
}

function renderPending() {
  const items = [];
  for (const node of statusNodes()) {
    for (const fiber of node.fibers || []) {
      if (fiber.state !== 'pending') continue;
      const name = (fiber.entry || fiber.plugin) + ' #' + fiber.fiber + ' on ' + node.name;
      const waits = (fiber.missing || []).length ? 'waits for ' + fiber.missing.join(', ') : 'waits';
      items.push(el('li', {}, el('span', { class: 'state state-' + (node.reachable === false ? 'lastknown' : 'pending'), text: 'pending' }), ' ', name, ': ', waits));
    }
  }
  document.getElementById('pending').replaceChildren(...(items.length ? items : [el('li', { class: 'muted', text: 'no fiber waits' })]));
}

// ---- Timeline

function renderTimeline() {
  const select = document.getElementById('filter-node');
  const nodes = new Set(memberList().map((member) => member.name));
  for (const event of model.events) nodes.add(event.node);
  const chosen = select.value;
  const options = [...nodes].sort();
  if (select.options.length !== options.length + 1 || options.some((name, index) => select.options[index + 1].value !== name)) {
    select.replaceChildren(el('option', { value: '', text: 'every node' }), ...options.map((name) => el('option', { value: name, text: name })));
    select.value = chosen;
  }
  const entry = document.getElementById('filter-entry').value.trim();
  const shown = model.events.filter((event) => (!chosen || event.node === chosen)
    && (!entry || (event.detail && (event.detail.entry === entry || (event.detail.change || '').includes(entry))))).slice(-500).reverse();
  document.getElementById('timeline-count').textContent = shown.length + ' of ' + model.events.length + ' events';
  document.querySelector('#timeline tbody').replaceChildren(...shown.map((event) => el('tr', { 'data-kind': event.kind },
    el('td', { class: 'mono nowrap', text: time(event.time) }),
    el('td', { text: event.node }),
    el('td', { text: event.kind }),
    el('td', { text: event.text || JSON.stringify(event.detail) }),
    el('td', { text: (event.detail && event.detail.operator) || '' }))));
}

// ---- Services

function renderServices() {
  const providers = {};
  const consumers = {};
  for (const node of statusNodes()) {
    for (const fiber of node.fibers || []) {
      const who = node.name + ':' + (fiber.entry || ('#' + fiber.fiber));
      for (const slot of fiber.provides || []) {
        const name = slot.realm ? slot.service + '@' + slot.realm : slot.service;
        if (!fiber.plugin.startsWith('remote:')) (providers[name] = providers[name] || []).push(who);
      }
      for (const service of Object.keys(fiber.injects || {})) (consumers[service] = consumers[service] || []).push(who);
    }
  }
  const names = [...new Set([...Object.keys(providers), ...Object.keys(consumers)])].sort();
  document.querySelector('#services tbody').replaceChildren(...names.map((name) => el('tr', { 'data-service': name },
    el('td', {}, el('b', { text: name })),
    el('td', { text: (providers[name] || []).join(', ') || '—' }),
    el('td', { text: (consumers[name] || []).join(', ') || '—' }))));
  const select = document.getElementById('call-service');
  const services = [...new Set(Object.keys(providers).map((name) => name.split('@')[0]))].sort();
  const chosen = select.value;
  if ([...select.options].map((option) => option.value).join() !== services.join()) {
    select.replaceChildren(...services.map((name) => el('option', { value: name, text: name })));
    if (services.includes(chosen)) select.value = chosen;
  }
  const remote = interfacesByService();
  document.querySelector('#interfaces tbody').replaceChildren(...Object.keys(remote).sort().map((name) => el('tr', { 'data-interface': name },
    el('td', {}, el('b', { text: name })),
    el('td', { class: 'mono', text: remote[name].interface + ' ' + remote[name].version }),
    el('td', { class: 'mono', text: remote[name].methods.join(', ') || '—' }),
    el('td', { text: remote[name].nodes.join(', ') }))));
  fillMethods();
  const catalog = (model.data && model.data.catalog) || {};
  document.getElementById('catalog').replaceChildren(...Object.keys(catalog).sort().map((node) => el('div', { class: 'catalog-node' },
    el('h2', { text: 'node ' + node }),
    el('table', { class: 'grid' },
      el('thead', {}, el('tr', {}, ['Plugin', 'Provides', 'Injects', 'Config fields'].map((title) => el('th', { text: title })))),
      el('tbody', {}, (catalog[node] || []).map((plugin) => el('tr', {},
        el('td', {}, el('b', { text: plugin.name })),
        el('td', { text: (plugin.provides || []).join(', ') || '—' }),
        el('td', { text: (plugin.injects || []).join(', ') || '—' }),
        el('td', { class: 'mono', text: (plugin.config || []).map((field) => field.path + ': ' + field.type + (field.optional ? '?' : '')).join(', ') || '—' }))))))));
}

// Each remote-capable service with its interface, version, methods and the nodes that know it.
function interfacesByService() {
  const all = (model.data && model.data.interfaces) || {};
  const byService = {};
  for (const node of Object.keys(all).sort()) {
    for (const entry of all[node] || []) {
      const known = byService[entry.service] || (byService[entry.service] = { interface: entry.interface, version: entry.version, methods: entry.methods || [], nodes: [] });
      known.nodes.push(node);
    }
  }
  return byService;
}

// Offers the chosen service's methods in the method field.
function fillMethods() {
  const chosen = document.getElementById('call-service').value;
  const methods = (interfacesByService()[chosen] || { methods: [] }).methods;
  const list = document.getElementById('call-methods');
  if ([...list.options].map((option) => option.value).join() !== methods.join()) {
    list.replaceChildren(...methods.map((name) => el('option', { value: name })));
  }
}

function setUpCall() {
  document.getElementById('call-service').addEventListener('change', fillMethods);
  document.getElementById('call').addEventListener('submit', async (submit) => {
    submit.preventDefault();
    const error = document.getElementById('call-error');
    const output = document.getElementById('call-result');
    error.hidden = true;
    output.hidden = true;
    let parsed;
    try {
      parsed = JSON.parse(document.getElementById('call-args').value || '{}');
    } catch (problem) {
      error.textContent = 'the arguments are not JSON: ' + problem.message;
      error.hidden = false;
      return;
    }
    let args = parsed;
    if (Array.isArray(parsed)) args = Object.fromEntries(parsed.map((value, index) => ['_' + index, value]));
    else if (parsed === null || typeof parsed !== 'object') args = { _0: parsed };
    const request = { service: document.getElementById('call-service').value, method: document.getElementById('call-method').value.trim(), args };
    const realm = document.getElementById('call-realm').value.trim();
    if (realm) request.realm = realm;
    try {
      const result = await act('call', null, request);
      output.textContent = JSON.stringify(result, null, 2);
      output.hidden = false;
    } catch (problem) {
      error.textContent = problem.message;
      error.hidden = false;
    }
  });
}

// ---- The live stream

// What changed since the last frame; drawn once per animation frame, however many messages came.
const dirty = new Set();
let frameAsked = false;
function schedule(...parts) {
  for (const part of parts) dirty.add(part);
  if (frameAsked) return;
  frameAsked = true;
  requestAnimationFrame(() => {
    frameAsked = false;
    const parts = new Set(dirty);
    dirty.clear();
    if (parts.has('all')) renderAll();
    else if (parts.has('timeline') && currentPage() === 'timeline') renderTimeline();
    if (parts.has('graph') && currentPage() === 'graph') renderGraph();
    if (stale) disableControls();
  });
}

// ---- A lost stream

// Why the page no longer hears the console (null while it does). What the page shows then is as it was
// when the stream went: greyed, every control off, and a banner that says so plainly.
let stale = null;
function controls() { return document.querySelectorAll('main button, main input, main select, main textarea'); }
function disableControls() {
  for (const control of controls()) {
    if (!control.disabled) { control.disabled = true; control.dataset.staleOff = '1'; }
  }
}
function showStale(why) {
  stale = why;
  document.body.classList.add('stale');
  const banner = document.getElementById('stale');
  banner.textContent = why;
  banner.hidden = false;
  const link = document.getElementById('link');
  link.className = 'link stale';
  link.textContent = why.startsWith('This page\'s token') ? 'token no longer valid' : 'stream lost, reconnecting…';
  disableControls();
}
function clearStale() {
  if (!stale) return;
  stale = null;
  document.body.classList.remove('stale');
  document.getElementById('stale').hidden = true;
  for (const control of controls()) {
    if (control.dataset.staleOff) { control.disabled = false; delete control.dataset.staleOff; }
  }
}
function lostAt() { return new Date().toISOString().slice(11, 19) + ' UTC'; }

function renderAll() {
  const problem = document.getElementById('problem');
  problem.textContent = (model.data && model.data.problem) || '';
  problem.hidden = !(model.data && model.data.problem);
  // Only the page in view is drawn; showing another page draws it then.
  const page = currentPage();
  if (page === 'cluster') renderCluster();
  if (page === 'plugins') renderPlugins(false);
  if (page === 'graph') {
    renderPending();
    renderGraph();
  }
  if (page === 'services') renderServices();
  if (page === 'timeline') renderTimeline();
}

let reconnectDelay = 1000;
function connect() {
  const link = document.getElementById('link');
  const source = new EventSource('/events');
  source.addEventListener('open', () => { link.className = 'link live'; link.textContent = 'live'; });
  source.addEventListener('error', () => {
    if (!stale) {
      showStale('The console\'s live stream was lost at ' + lostAt() + ': what this page shows is as it was then, '
        + 'and its controls are off until the stream is back. Reconnecting…');
    }
    // The browser retries a stream that broke by itself; one the console refused (or that never opened)
    // is closed: ask why, then try again or say the token is no longer valid.
    if (source.readyState !== EventSource.CLOSED) return;
    source.close();
    const probe = new AbortController();
    fetch('/events', { credentials: 'same-origin', signal: probe.signal, headers: { Accept: 'text/event-stream' } })
      .then((response) => {
        probe.abort();
        if (response.status === 401) {
          showStale('This page\'s token is no longer valid (the web console was restarted or stopped, and a new one has '
            + 'another token): this page shows the cluster as it was at ' + lostAt() + '. Open the address with the '
            + 'token the web console printed when it started.');
          return;
        }
        setTimeout(connect, reconnectDelay);
      })
      .catch(() => {
        // Nothing answers at this address (the console is stopped): try again, waiting longer each time.
        reconnectDelay = Math.min(reconnectDelay * 2, 5000);
        setTimeout(connect, reconnectDelay);
      });
  });
  source.addEventListener('state', (message) => {
    model.data = JSON.parse(message.data);
    model.receivedAt = Date.now();
    reconnectDelay = 1000;
    clearStale();
    link.className = 'link live';
    link.textContent = 'live via ' + model.data.node;
    schedule('all');
  });
  source.addEventListener('graph', (message) => {
    model.graph = JSON.parse(message.data);
    window.cordisGraphLayoutSeconds = model.graph.layoutSeconds;
    schedule('graph');
  });
  source.addEventListener('history', (message) => { model.events = JSON.parse(message.data); schedule('timeline'); });
  source.addEventListener('event', (message) => {
    const event = JSON.parse(message.data);
    model.events.push(event);
    if (model.events.length > 1000) model.events.splice(0, model.events.length - 1000);
    applyEvent(event);
    schedule('timeline');
  });
}

document.addEventListener('DOMContentLoaded', () => {
  for (const link of document.querySelectorAll('nav a')) {
    link.addEventListener('click', (click) => {
      click.preventDefault();
      history.pushState(null, '', link.getAttribute('href'));
      notice('');
      show();
    });
  }
  window.addEventListener('popstate', show);
  document.getElementById('filter-node').addEventListener('change', renderTimeline);
  document.getElementById('filter-entry').addEventListener('input', renderTimeline);
  setUpCall();
  show();
  connect();
  // An unreachable member's "last seen" keeps counting between changes (a local clock, nothing is fetched).
  setInterval(() => { if (currentPage() === 'cluster') tickLastSeen(); }, 1000);
});
"""##
}
