// A job's /details on its page: the phase timeline (each phase's duration, and why
// the job waits while it is queued), its replicas (state, node, exit, restarts,
// image) and its events. Everything is set as text.
'use strict';

const Details = (() => {
  const PHASES = [
    ['queueTime', 'queued'], ['admitTime', 'admitted'], ['imageReadyTime', 'image ready'],
    ['packagesReadyTime', 'packages installed'], ['allRunningTime', 'all replicas running'], ['endTime', 'finished'],
  ];

  function timeline(d) {
    const phases = d.phases || {};
    let previous = null;
    const rows = [];
    for (const [key, label] of PHASES) {
      if (!phases[key]) continue;
      const at = Date.parse(phases[key]);
      const took = previous === null ? '' : ((at - previous) / 1000).toFixed(2) + ' s after the one before';
      rows.push(el('tr', { 'data-phase': key }, el('td', {}, label), el('td', {}, phases[key]), el('td', {}, took)));
      previous = at;
    }
    if (d.queue) {
      rows.push(el('tr', { 'data-phase': 'waiting' }, el('td', {}, 'waiting'),
        el('td', {}, `#${d.queue.position} in the queue`), el('td', { id: 'wait-reason' }, d.queue.reason || '')));
    }
    return el('table', { id: 'timeline' }, el('tbody', {}, ...rows));
  }

  function replicas(d) {
    const grants = d.grants || [];
    const images = (d.images || []).map((i) => i.digest || i.imageId).join(', ');
    const node = (r) => (grants.find((g) => g.pool === r.pool && g.index === r.index) || {}).node || '';
    const exit = (r) => (r.exitCode !== undefined ? 'exit ' + r.exitCode : r.signal !== undefined ? 'signal ' + r.signal : '');
    return el('table', { id: 'replicas' },
      el('thead', {}, el('tr', {}, ...['replica', 'state', 'node', 'hostname', 'exit', 'restarts', 'image']
        .map((h) => el('th', {}, h)))),
      el('tbody', {}, ...(d.replicas || []).map((r) => el('tr', { 'data-task': r.taskName },
        el('td', {}, r.taskName), el('td', {}, r.state), el('td', {}, node(r)), el('td', {}, r.hostname || ''),
        el('td', {}, exit(r)), el('td', {}, String(r.restarts || 0)), el('td', {}, images)))));
  }

  function events(d) {
    return el('ul', { id: 'events' }, ...(d.events || []).map((e) => el('li', {}, `${e.time || ''} ${e.message}`)));
  }

  function render(d) {
    return el('div', {}, el('h4', {}, 'Timeline'), timeline(d), el('h4', {}, 'Replicas'), replicas(d),
      el('h4', {}, 'Events'), events(d));
  }

  return { render };
})();
