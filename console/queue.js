// The queue and capacity of a project: its waiting jobs in admission order, each with
// why it waits (the job's /details queue note), what its running jobs hold on each
// node (their grants), and, for callers who may read /metrics, each node's free room
// (capacity less what every admitted job holds) and the daemon's totals.
'use strict';

const Queue = (() => {
  const WAITING = { customJobs: 'JOB_STATE_QUEUED', hyperparameterTuningJobs: 'JOB_STATE_QUEUED',
                    trainingPipelines: 'PIPELINE_STATE_QUEUED', jobs: 'QUEUED' };
  const RUNNING = { customJobs: 'JOB_STATE_RUNNING', jobs: 'RUNNING' };

  async function jobsIn(project, location, states) {
    const out = [];
    for (const c of COLLECTIONS) {
      if (!states[c.key]) continue;
      const q = new URLSearchParams({ pageSize: '1000', filter: `state="${states[c.key]}"` });
      const answer = await api('GET', collectionPath(c, project, location) + '?' + q.toString());
      for (const job of answer[c.key] || answer.jobs || []) {
        const id = c.vertex ? job.name.split('/').pop() : job.jobId;
        const path = collectionPath(c, project, location) + '/' + encodeURIComponent(id);
        const details = await api('GET', path + '/details').catch(() => ({}));
        out.push({ c, job, id, details });
      }
    }
    return out;
  }

  // Prometheus text: the samples named, summed over their labels.
  function metric(text, name) {
    let sum = null;
    for (const line of text.split('\n')) {
      if (line.startsWith(name + ' ') || line.startsWith(name + '{')) sum = (sum || 0) + Number(line.split(' ').pop());
    }
    return sum;
  }

  // Samples of `name` by their node label: { node: value }.
  function byNode(text, name) {
    const out = {};
    const re = new RegExp(`^${name}\\{node="((?:[^"\\\\]|\\\\.)*)"\\} (\\S+)$`);
    for (const line of text.split('\n')) {
      const m = line.match(re);
      if (m) out[m[1].replace(/\\(.)/g, '$1')] = Number(m[2]);
    }
    return out;
  }

  // Each node: capacity, held by every admitted job (all projects), and free.
  function nodesFree(text) {
    const cap = { cpus: byNode(text, 'trainyard_node_capacity_cpus'),
                  mem: byNode(text, 'trainyard_node_capacity_memory_bytes'),
                  gpus: byNode(text, 'trainyard_node_capacity_gpus') };
    const held = { cpus: byNode(text, 'trainyard_node_held_cpus'),
                   mem: byNode(text, 'trainyard_node_held_memory_bytes'),
                   gpus: byNode(text, 'trainyard_node_held_gpus') };
    const fmt = (v, gb) => (gb ? (v / 1073741824).toFixed(1) : String(Math.round(v * 100) / 100));
    const cell = (k, node, gb) => {
      const c = cap[k][node] || 0;
      const h = held[k][node] || 0;
      return el('td', {}, `${fmt(c - h, gb)} of ${fmt(c, gb)}`);
    };
    return el('table', { id: 'node-free' },
      el('thead', {}, el('tr', {}, ...['node', 'vCPUs free', 'memory GB free', 'GPUs free'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...Object.keys(cap.cpus).sort().map((node) => el('tr', { 'data-node': node },
        el('td', {}, node), cell('cpus', node), cell('mem', node, true), cell('gpus', node)))));
  }

  async function totals() {
    const headers = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const r = await fetch('/metrics', { headers });
    if (!r.ok) return el('p', { class: 'muted' }, 'The daemon\'s totals are for admins.');
    const text = await r.text();
    const gb = (b) => (b === null ? '?' : (b / 1073741824).toFixed(1));
    return el('div', {}, nodesFree(text), el('table', { id: 'capacity' }, el('tbody', {},
      el('tr', {}, el('th', {}, ''), el('th', {}, 'capacity'), el('th', {}, 'held by admitted jobs')),
      el('tr', {}, el('td', {}, 'vCPUs'), el('td', {}, String(metric(text, 'trainyard_capacity_cpus'))),
        el('td', {}, String(metric(text, 'trainyard_admitted_cpus')))),
      el('tr', {}, el('td', {}, 'memory GB'), el('td', {}, gb(metric(text, 'trainyard_capacity_memory_bytes'))),
        el('td', {}, gb(metric(text, 'trainyard_admitted_memory_bytes')))),
      el('tr', {}, el('td', {}, 'GPUs'), el('td', {}, String(metric(text, 'trainyard_capacity_gpus') || 0)),
        el('td', {}, String(metric(text, 'trainyard_admitted_gpus') || 0))),
      el('tr', {}, el('td', {}, 'jobs waiting'), el('td', {}, String(metric(text, 'trainyard_queue_length'))), el('td', {}, '')))));
  }

  function waitingTable(waiting, project, location) {
    const rows = waiting.map((w) => ({ ...w, position: (w.details.queue || {}).position || 0 }))
      .sort((a, b) => (a.position || 1e9) - (b.position || 1e9));
    return el('table', { id: 'queue' },
      el('thead', {}, el('tr', {}, ...['#', 'job', 'kind', 'queued since', 'why it waits'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows.map((w) => el('tr', { 'data-id': w.id },
        el('td', {}, w.position ? String(w.position) : ''),
        el('td', {}, el('a', { href: jobLink({ c: w.c, id: w.id }, project, location) }, w.job.displayName || w.id)),
        el('td', {}, w.c.label), el('td', {}, (w.details.phases || {}).queueTime || ''),
        el('td', { class: 'reason' }, (w.details.queue || {}).reason || '')))));
  }

  function nodesTable(running) {
    const nodes = {};
    for (const r of running) {
      for (const g of r.details.grants || []) {
        const n = (nodes[g.node] = nodes[g.node] || { cpus: 0, memoryGb: 0, gpus: 0, replicas: 0 });
        n.cpus += g.cpus || 0;
        n.memoryGb += g.memoryGb || 0;
        n.gpus += (g.gpuIndices || []).length;
        n.replicas += 1;
      }
    }
    return el('table', { id: 'nodes' },
      el('thead', {}, el('tr', {}, ...['node', 'replicas', 'vCPUs held', 'memory GB held', 'GPUs held'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...Object.entries(nodes).sort().map(([name, n]) => el('tr', { 'data-node': name },
        el('td', {}, name), el('td', {}, String(n.replicas)), el('td', {}, String(n.cpus)),
        el('td', {}, n.memoryGb.toFixed(1)), el('td', {}, String(n.gpus))))));
  }

  async function render(params) {
    const project = params.get('project') || 'local';
    const location = params.get('location') || 'local';
    const status = el('p', { class: 'muted', id: 'queue-status' }, 'Loading…');
    const holder = el('div', {});
    show(el('h2', {}, `Queue and capacity of ${project}`), status, holder);
    async function refresh() {
      try {
        const [waiting, running, daemon] = await Promise.all([jobsIn(project, location, WAITING),
          jobsIn(project, location, RUNNING), totals()]);
        holder.replaceChildren(el('h3', {}, `Waiting (${waiting.length}), in admission order`),
          waitingTable(waiting, project, location), el('h3', {}, `Held on each node by ${project}'s running jobs`),
          nodesTable(running), el('h3', {}, 'The daemon'), daemon);
        status.textContent = `refreshed ${new Date().toLocaleTimeString()}`;
        status.className = 'muted';
      } catch (e) {
        status.textContent = e.message;
        status.className = 'error';
      }
    }
    await refresh();
    const timer = setInterval(refresh, 2000);
    return () => clearInterval(timer);
  }

  return { render };
})();
