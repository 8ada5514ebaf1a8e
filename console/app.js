// Trainyard's console: one page over the public REST API of the daemon that serves it.
// What jobs and users wrote (names, labels, log lines, args) is only ever set as text
// (textContent, never markup); the page's policy allows no inline script either.
'use strict';

const TOKEN_KEY = 'trainyard.token';

// ---- the API -------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(method, path, body) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  const json = text ? JSON.parse(text) : {};
  if (!r.ok) {
    if (r.status === 401) askForToken('This daemon needs a token.');
    throw new ApiError(r.status, (json.error && json.error.message) || r.statusText);
  }
  return json;
}

// The caller's role in `project` ("viewer", "editor", "admin" or "none"): what a page
// offers. The API refuses what the role does not allow whatever the page shows.
async function roleIn(project) {
  try {
    return (await api('GET', '/console/caller?project=' + encodeURIComponent(project))).role;
  } catch (e) {
    return 'none';
  }
}
const mayEdit = (role) => role === 'editor' || role === 'admin';

// ---- elements, as text ---------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'onclick' || k === 'onchange' || k === 'oninput') e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function show(...nodes) {
  const main = document.getElementById('main');
  main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
}

function askForToken(why) {
  const input = el('input', { type: 'password', id: 'token', size: 40, 'aria-label': 'token' });
  show(el('form', { id: 'token-form' },
    el('p', {}, why || 'A token for this daemon (kept for this tab only).'), input, ' ',
    el('button', { type: 'submit' }, 'Use')));
  document.getElementById('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    route();
  });
}

// ---- where we are: the hash ----------------------------------------------------------

function hashState() {
  const [path, query] = location.hash.replace(/^#/, '').split('?');
  return { parts: (path || '/jobs').split('/').filter(Boolean), params: new URLSearchParams(query || '') };
}

function setParams(params) {
  const { parts } = hashState();
  history.replaceState(null, '', '#/' + parts.join('/') + '?' + params.toString());
}

// ---- the jobs list -------------------------------------------------------------------

// Each collection the list shows, with how its API names it and its states.
const COLLECTIONS = [
  { key: 'customJobs', label: 'custom job', vertex: true, stateList: 'list' },
  { key: 'hyperparameterTuningJobs', label: 'tuning job', vertex: true },
  { key: 'trainingPipelines', label: 'pipeline', vertex: true, pipeline: true },
  { key: 'jobs', label: 'ml v1 job', vertex: false },
];
const STATES = ['', 'QUEUED', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLING', 'CANCELLED'];

function apiState(c, state) {
  if (!state) return '';
  if (!c.vertex) return state;
  return (c.pipeline ? 'PIPELINE_STATE_' : 'JOB_STATE_') + state;
}

function filterFor(c, params) {
  const terms = [];
  const state = apiState(c, params.get('state'));
  if (state) terms.push(`state="${state}"`);
  const label = params.get('label');
  if (label && label.includes('=')) {
    const [k, v] = label.split('=');
    terms.push(`labels.${k.trim()}="${v.trim()}"`);
  }
  const name = params.get('name');
  if (name) terms.push(c.vertex ? `display_name:"*${name}*"` : `jobId:"*${name}*"`);
  return terms.join(' AND ');
}

function collectionPath(c, project, location) {
  return c.vertex ? `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/${c.key}`
                  : `/v1/projects/${encodeURIComponent(project)}/jobs`;
}

function shortState(s) { return String(s || '').replace(/^(JOB_STATE_|PIPELINE_STATE_)/, ''); }

// The list shows the newest `show` jobs (URL, default 100); *Show more* adds 100.
const LIST_STEP = 100;
function shownCount(params) {
  const n = Number.parseInt(params.get('show') || '', 10);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 10000) : LIST_STEP;
}

// createTime has 0, 3 or 6 fractional digits ("…:15Z", "…:15.549Z"), and as written
// "…:15.549Z" sorts after the later "…:15.549112Z"; padded to 9 digits the strings order
// as the times.
function sortableTime(t) {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(t || '');
  return m ? m[1] + '.' + (m[2] || '').padEnd(9, '0') : String(t || '');
}

// The newest `want` jobs of one collection, newest first, following nextPageToken (the
// API gives at most 100 a page); `more` when the collection has older ones.
async function loadCollection(c, path, filter, want) {
  const list = [];
  let token = '';
  do {
    const q = new URLSearchParams({ pageSize: String(Math.min(want - list.length, 100)) });
    if (filter) q.set('filter', filter);
    if (token) q.set('pageToken', token);
    const answer = await api('GET', path + '?' + q.toString());
    list.push(...(answer[c.key] || answer.jobs || []));
    token = answer.nextPageToken || '';
  } while (token && list.length < want);
  return { list: list.slice(0, want), more: Boolean(token) || list.length > want };
}

async function loadJobs(params) {
  const project = params.get('project') || 'local';
  const location = params.get('location') || 'local';
  const want = shownCount(params);
  const rows = [];
  let more = false;
  for (const c of COLLECTIONS) {
    const got = await loadCollection(c, collectionPath(c, project, location), filterFor(c, params), want);
    more = more || got.more;
    for (const job of got.list) {
      const id = c.vertex ? job.name.split('/').pop() : job.jobId;
      rows.push({ c, job, id, name: c.vertex ? job.displayName : job.jobId,
                  created: job.createTime || '', sortKey: sortableTime(job.createTime), state: job.state });
    }
  }
  // Stable: equal times keep each collection's own newest-first order.
  rows.sort((a, b) => (a.sortKey === b.sortKey ? 0 : a.sortKey < b.sortKey ? 1 : -1));
  // Each collection gave its newest `want`; together, the newest `want` of them all.
  if (rows.length > want) {
    more = true;
    rows.length = want;
  }
  return { rows, project, location, more, want };
}

function jobLink(row, project, location) {
  return `#/job/${row.c.key}/${encodeURIComponent(project)}/${encodeURIComponent(location)}/${encodeURIComponent(row.id)}`;
}

function cancelPath(row, project, location) {
  return collectionPath(row.c, project, location) + '/' + encodeURIComponent(row.id) + ':cancel';
}

function jobsControls(params, canEdit) {
  const input = (name, label, size) => el('label', {}, label,
    el('input', { name, value: params.get(name) || (name === 'project' || name === 'location' ? 'local' : ''), size }));
  const state = el('select', { name: 'state', 'aria-label': 'state' },
    ...STATES.map((s) => el('option', { value: s }, s || 'any state')));
  state.value = params.get('state') || '';
  const form = el('form', { class: 'controls', id: 'jobs-filter' },
    input('project', 'project', 14), input('location', 'location', 12),
    el('label', {}, 'state', state), input('label', 'label k=v', 12), input('name', 'name contains', 14),
    el('button', { type: 'submit' }, 'Apply'),
    canEdit ? el('button', { type: 'button', id: 'bulk-cancel' }, 'Cancel selected') : null);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) next.set(k, v);
    setParams(next);
    route();
  });
  return form;
}

function jobsTable(rows, project, location, canEdit) {
  const body = el('tbody', {}, ...rows.map((r) => el('tr', { 'data-id': r.id },
    el('td', {}, canEdit ? el('input', { type: 'checkbox', 'aria-label': 'select ' + r.id, 'data-cancel': cancelPath(r, project, location) }) : null),
    el('td', {}, r.c.label),
    el('td', {}, el('a', { href: jobLink(r, project, location) }, r.name || r.id)),
    el('td', { class: 'state-' + r.state }, shortState(r.state)),
    el('td', {}, r.created),
    el('td', {}, el('a', { href: jobLink(r, project, location) }, r.id)))));
  return el('table', { id: 'jobs' },
    el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', {}, 'kind'), el('th', {}, 'name'),
      el('th', {}, 'state'), el('th', {}, 'created'), el('th', {}, 'id'))), body);
}

// Shows LIST_STEP more rows; the count is kept in the URL, so a reload keeps it.
function moreButton(params, want) {
  const button = el('button', { type: 'button', id: 'jobs-more' }, `Show ${LIST_STEP} more`);
  button.addEventListener('click', () => {
    const next = new URLSearchParams(params);
    next.set('show', String(want + LIST_STEP));
    setParams(next);
    route();
  });
  return button;
}

async function renderJobs(params) {
  const canEdit = mayEdit(await roleIn(params.get('project') || 'local'));
  const controls = jobsControls(params, canEdit);
  const status = el('p', { class: 'muted', id: 'jobs-status' }, 'Loading…');
  const holder = el('div', {});
  show(controls, status, holder);
  const bulk = controls.querySelector('#bulk-cancel');
  if (bulk) bulk.addEventListener('click', async () => {
    const boxes = [...holder.querySelectorAll('input[data-cancel]:checked')];
    for (const b of boxes) await api('POST', b.dataset.cancel, {}).catch((e) => { status.textContent = e.message; });
    refresh();
  });
  async function refresh() {
    try {
      const { rows, project, location, more, want } = await loadJobs(params);
      const checked = new Set([...holder.querySelectorAll('input[data-cancel]:checked')].map((b) => b.dataset.cancel));
      holder.replaceChildren(jobsTable(rows, project, location, canEdit), more ? moreButton(params, want) : '');
      for (const b of holder.querySelectorAll('input[data-cancel]')) b.checked = checked.has(b.dataset.cancel);
      const older = more ? ' (older ones below)' : '';
      status.textContent = `${rows.length} jobs, newest first${older}; refreshed ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      holder.replaceChildren();
      status.textContent = e.message;
      status.className = 'error';
    }
  }
  await refresh();
  return setInterval(refresh, 2000);
}

// ---- one job -------------------------------------------------------------------------

function jobPath(collection, project, location, id) {
  const c = COLLECTIONS.find((x) => x.key === collection) || COLLECTIONS[0];
  return collectionPath(c, project, location) + '/' + encodeURIComponent(id);
}

const ENDED = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

// The last lines the job's replicas printed (from the log on the page), beside an error.
function lastLines() {
  const rows = [...document.querySelectorAll('#log div')].filter((r) => r.dataset.task !== 'service');
  return rows.slice(-5).map((r) => r.textContent).join('\n');
}

// enableWebAccess: a link to each running replica's shell, for editors. The daemon
// names the pages; only this origin's are linked.
function shellLinks(job, canEdit) {
  const uris = job.webAccessUris || (job.trainingOutput && job.trainingOutput.webAccessUris) || {};
  const links = [];
  for (const replica of Object.keys(uris).sort()) {
    const u = new URL(uris[replica], location.href);
    if (u.origin !== location.origin || !u.pathname.endsWith('/console/shell.html')) continue;
    links.push(el('a', { href: u.pathname + u.hash, 'data-replica': replica }, replica), ' ');
  }
  return canEdit && links.length ? el('p', { id: 'shells' }, 'Shell: ', ...links) : null;
}

function jobSummary(job, path, canEdit) {
  const state = el('span', { id: 'job-state', class: 'state-' + job.state }, shortState(job.state));
  const cancel = !canEdit || ENDED.includes(shortState(job.state)) ? null : el('button', { id: 'cancel', type: 'button' }, 'Cancel');
  if (cancel) cancel.addEventListener('click', () => api('POST', path + ':cancel', {}).catch((e) => { state.textContent = e.message; }));
  const error = job.error || (job.errorMessage ? { message: job.errorMessage } : null);
  return el('section', {},
    el('h2', { id: 'job-name' }, job.displayName || job.jobId || ''),
    el('p', {}, 'State: ', state, ' ', cancel),
    shellLinks(job, canEdit),
    error ? el('p', { class: 'error', id: 'job-error' }, error.message || '') : null,
    error ? el('pre', { id: 'job-last-lines' }, lastLines()) : null);
}

async function renderJob(parts) {
  const [, collection, project, location, id] = parts.map(decodeURIComponent);
  const path = jobPath(collection, project, location, id);
  const params = hashState().params;
  let job;
  try { job = await api('GET', path); } catch (e) { show(el('p', { class: 'error' }, e.message)); return null; }
  const log = Logs.view(path, params, Boolean(job.studySpec));
  const canEdit = mayEdit(await roleIn(project));
  const summary = el('div', { id: 'summary' }, jobSummary(job, path, canEdit));
  const trials = job.studySpec ? Trials.section() : null;
  const phases = el('div', { id: 'details' });
  show(el('p', {}, el('a', { href: '#/jobs' }, '← jobs'), ' ', Curves.linkFor(job, project, location)), summary,
    trials ? trials.holder : null,
    el('h3', {}, 'Logs'), log.bar, log.earlier, log.box,
    el('h3', {}, 'Details'), phases,
    el('h3', {}, 'Spec'), el('pre', { id: 'spec' }, JSON.stringify(job, null, 2)));
  const stop = { done: false, controller: new AbortController() };
  stop.signal = stop.controller.signal;
  log.start(stop).catch(() => {});
  const refresh = async () => {
    try {
      job = await api('GET', path);
      summary.replaceChildren(jobSummary(job, path, canEdit));
      if (trials) trials.draw(job);
      const details = await api('GET', path + '/details').catch(() => null);
      if (details) phases.replaceChildren(Details.render(details));
    } catch (e) { /* the next refresh tries again */ }
  };
  refresh();
  const timer = setInterval(refresh, 1000);
  return { stop: () => { stop.done = true; stop.controller.abort(); clearInterval(timer); } };
}

// ---- routing -------------------------------------------------------------------------

let current = null;

async function route() {
  if (current) { current(); current = null; }
  const { parts, params } = hashState();
  document.getElementById('where').textContent = parts[0] === 'job' ? `${parts[1]} ${decodeURIComponent(parts[4] || '')}` : '';
  if (parts[0] === 'queue') {
    current = await Queue.render(params);
    return;
  }
  if (parts[0] === 'curves' && parts.length === 5) {
    current = await Curves.render(parts, params);
    return;
  }
  if (parts[0] === 'job' && parts.length === 5) {
    const page = await renderJob(parts);
    if (page) current = page.stop;
    return;
  }
  const timer = await renderJobs(params);
  current = () => clearInterval(timer);
}

window.addEventListener('hashchange', route);
document.getElementById('token-button').addEventListener('click', () => askForToken());
route();
