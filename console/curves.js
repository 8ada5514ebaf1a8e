// Learning curves from Vertex AI TensorBoard's time series (what the daemon indexed
// from the jobs' event files): one tag at a time, every run of the experiment overlaid
// (a job's directories, or a tuning job's trials), with smoothing and a log scale.
// The canvas says what it drew in data-* attributes (tests read them).
'use strict';

const Curves = (() => {
  const COLORS = ['#1a73e8', '#d93025', '#188038', '#f29900', '#a142f4', '#12b5cb', '#e8710a', '#5f6368'];

  async function listAll(path, key) {
    const out = [];
    let token = '';
    do {
      const page = await api('GET', path + '?pageSize=1000' + (token ? '&pageToken=' + encodeURIComponent(token) : ''));
      out.push(...(page[key] || []));
      token = page.nextPageToken || '';
    } while (token);
    return out;
  }

  // {tag: [{run, series}]} for every run of the experiment.
  async function seriesByTag(experiment) {
    const byTag = {};
    for (const run of await listAll('/v1/' + experiment + '/runs', 'tensorboardRuns')) {
      const runId = run.name.split('/').pop();
      for (const s of await listAll('/v1/' + run.name + '/timeSeries', 'tensorboardTimeSeries')) {
        (byTag[s.displayName] = byTag[s.displayName] || []).push({ run: runId, series: s.name });
      }
    }
    return byTag;
  }

  async function points(series) {
    const out = [];
    let from = null;
    for (;;) {  // Pages by step: the API answers the first points after a step.
      const q = '?maxDataPoints=10000' + (from === null ? '' : '&filter=' + encodeURIComponent('step > ' + from));
      const values = ((await api('GET', '/v1/' + series + ':read' + q)).timeSeriesData || {}).values || [];
      for (const v of values) out.push([Number(v.step), v.scalar ? v.scalar.value : NaN]);
      if (values.length < 10000) return out;
      from = out[out.length - 1][0];
    }
  }

  // TensorBoard's smoothing: an exponential moving average, debiased at the start.
  function smooth(pts, weight) {
    let last = 0, n = 0;
    return pts.map(([x, y]) => {
      last = last * weight + (1 - weight) * y;
      n += 1;
      return [x, last / (1 - Math.pow(weight, n))];
    });
  }

  function draw(canvas, curves, logScale) {
    const g = canvas.getContext('2d');
    g.clearRect(0, 0, canvas.width, canvas.height);
    const all = curves.flatMap((c) => c.shown).filter(([, y]) => Number.isFinite(y) && (!logScale || y > 0));
    canvas.dataset.runs = String(curves.filter((c) => c.raw.length).length);
    canvas.dataset.series = JSON.stringify(Object.fromEntries(curves.map((c) => [c.run, c.raw])));
    if (!all.length) return;
    const f = (y) => (logScale ? Math.log10(y) : y);
    const xs = all.map((p) => p[0]), ys = all.map((p) => f(p[1]));
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const X = (x) => 50 + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (canvas.width - 70);
    const Y = (y) => canvas.height - 30 - (y1 === y0 ? 0.5 : (f(y) - y0) / (y1 - y0)) * (canvas.height - 50);
    g.fillStyle = '#5f6368';
    g.fillText(String(logScale ? Math.pow(10, y1).toPrecision(3) : y1.toPrecision(3)), 2, 20);
    g.fillText(String(logScale ? Math.pow(10, y0).toPrecision(3) : y0.toPrecision(3)), 2, canvas.height - 30);
    g.fillText('step ' + x0, 50, canvas.height - 8);
    g.fillText('step ' + x1, canvas.width - 80, canvas.height - 8);
    curves.forEach((c, i) => {
      g.strokeStyle = COLORS[i % COLORS.length];
      g.beginPath();
      let started = false;
      for (const [x, y] of c.shown) {
        if (!Number.isFinite(y) || (logScale && y <= 0)) continue;
        started ? g.lineTo(X(x), Y(y)) : g.moveTo(X(x), Y(y));
        started = true;
      }
      g.stroke();
    });
  }

  // The page: #/curves/PROJECT/LOCATION/TENSORBOARD/EXPERIMENT?tag=&smooth=&log=
  async function render(parts, params) {
    const [, project, location, board, experiment] = parts.map(decodeURIComponent);
    const name = `projects/${project}/locations/${location}/tensorboards/${board}/experiments/${experiment}`;
    const tagSelect = el('select', { id: 'curve-tag', 'aria-label': 'tag' });
    const smoothing = el('input', { id: 'curve-smoothing', type: 'range', min: '0', max: '0.99', step: '0.01',
                                    value: params.get('smooth') || '0' });
    const logScale = el('input', { id: 'curve-log', type: 'checkbox' });
    logScale.checked = params.get('log') === '1';
    const status = el('p', { class: 'muted', id: 'curves-status' }, 'Loading…');
    const canvas = el('canvas', { id: 'curve', width: 800, height: 320, class: 'chart' });
    const legend = el('div', { id: 'curve-runs', class: 'controls' });
    show(el('h2', {}, 'Learning curves'), el('p', { class: 'muted' }, name),
      el('div', { class: 'controls' }, el('label', {}, 'tag', tagSelect), el('label', {}, 'smoothing', smoothing),
        el('label', {}, 'log scale', logScale)), legend, canvas, status);
    const hidden = new Set();
    let byTag = {};
    let cached = {};
    let busy = false;
    async function refresh() {
      if (busy) return;  // A slow read outlasting the period: one at a time.
      busy = true;
      try {
        byTag = await seriesByTag(name);
        const tags = Object.keys(byTag).sort();
        if (tagSelect.options.length !== tags.length) {
          tagSelect.replaceChildren(...tags.map((t) => el('option', { value: t }, t)));
          tagSelect.value = params.get('tag') && tags.includes(params.get('tag')) ? params.get('tag') : tags[0] || '';
        }
        cached = {};
        for (const { run, series } of byTag[tagSelect.value] || []) cached[run] = await points(series);
        redraw();
        status.textContent = `${tags.length} tags; refreshed ${new Date().toLocaleTimeString()}`;
        status.className = 'muted';
      } catch (e) {
        status.textContent = e.message;
        status.className = 'error';
      } finally {
        busy = false;
      }
    }
    function redraw() {
      const weight = Number(smoothing.value);
      const runs = Object.keys(cached).sort();
      legend.replaceChildren(...runs.map((run, i) => {
        const box = el('input', { type: 'checkbox', 'aria-label': 'run ' + run });
        box.checked = !hidden.has(run);
        box.addEventListener('change', () => { box.checked ? hidden.delete(run) : hidden.add(run); redraw(); });
        return el('label', {}, el('span', { class: 'swatch-' + (i % COLORS.length) }, run), box);
      }));
      const curves = runs.filter((r) => !hidden.has(r)).map((run) => ({ run, raw: cached[run],
        shown: weight > 0 ? smooth(cached[run], weight) : cached[run] }));
      draw(canvas, curves, logScale.checked);
      const next = hashState().params;
      next.set('tag', tagSelect.value);
      next.set('smooth', smoothing.value);
      logScale.checked ? next.set('log', '1') : next.delete('log');
      setParams(next);
    }
    tagSelect.addEventListener('change', () => { params.set('tag', tagSelect.value); refresh(); });
    smoothing.addEventListener('input', redraw);
    logScale.addEventListener('change', redraw);
    await refresh();
    const timer = setInterval(refresh, 2000);
    return () => clearInterval(timer);
  }

  // The experiment a job's curves are in: its own id, or its tuning job's.
  function linkFor(job, project, location) {
    const spec = job.jobSpec || job.trialJobSpec;
    if (!spec || !spec.tensorboard) return null;
    const board = spec.tensorboard.split('/').pop();
    const id = job.name.split('/').pop();
    return el('a', { id: 'curves-link', href: `#/curves/${encodeURIComponent(project)}/${encodeURIComponent(location)}/${board}/${id}` },
      'Learning curves');
  }

  return { render, linkFor };
})();
