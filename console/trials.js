// The trials of a tuning job on its page: a table best first, the objective per trial
// with the best-so-far line, parallel coordinates (axes hideable and movable), the
// intermediate measurements per trial (what early stopping saw), and two or more
// trials side by side. Canvases say what they drew in data-* attributes (tests read
// them). Everything a trial holds is set as text.
'use strict';

const Trials = (() => {
  const objectiveOf = (t) => {
    const m = t.finalMeasurement && t.finalMeasurement.metrics && t.finalMeasurement.metrics[0];
    return m && typeof m.value === 'number' ? m.value : null;
  };
  const paramsOf = (t) => Object.fromEntries((t.parameters || []).map((p) => [p.parameterId, p.value]));
  const seconds = (t) => (t.startTime && t.endTime ? (Date.parse(t.endTime) - Date.parse(t.startTime)) / 1000 : null);

  function bestFirst(trials, maximize) {
    return [...trials].sort((a, b) => {
      const x = objectiveOf(a), y = objectiveOf(b);
      if (x === null) return y === null ? 0 : 1;
      if (y === null) return -1;
      return maximize ? y - x : x - y;
    });
  }

  function table(sorted, names, metric, chosen, onChoose) {
    const head = el('tr', {}, el('th', {}, 'compare'), el('th', {}, 'trial'), el('th', {}, 'state'),
      ...names.map((n) => el('th', {}, n)), el('th', {}, metric), el('th', {}, 'seconds'), el('th', {}, 'log'));
    const page = location.hash.split('?')[0];
    const rows = sorted.map((t) => {
      const box = el('input', { type: 'checkbox', 'aria-label': 'compare trial ' + t.id });
      box.checked = chosen.has(t.id);
      box.addEventListener('change', () => onChoose(t.id, box.checked));
      const p = paramsOf(t);
      const s = seconds(t);
      return el('tr', { 'data-trial': t.id }, el('td', {}, box), el('td', {}, t.id), el('td', {}, t.state || ''),
        ...names.map((n) => el('td', {}, p[n] === undefined ? '' : String(p[n]))),
        el('td', {}, objectiveOf(t) === null ? '' : String(objectiveOf(t))),
        el('td', {}, s === null ? '' : s.toFixed(1)),
        // The job's log with this trial's lines only (the log's trial filter).
        el('td', {}, el('a', { href: `${page}?trial=${encodeURIComponent(t.id)}`, 'data-trial-logs': t.id }, 'logs')));
    });
    return el('table', { id: 'trials' }, el('thead', {}, head), el('tbody', {}, ...rows));
  }

  function canvas(id, width, height) {
    const c = el('canvas', { id, width, height, class: 'chart' });
    return [c, c.getContext('2d')];
  }

  // Axis scale: a value to a fraction 0..1 of the values seen (categories by order).
  function scaleFor(values) {
    const numbers = values.filter((v) => typeof v === 'number');
    if (numbers.length === values.length) {
      const lo = Math.min(...numbers), hi = Math.max(...numbers);
      return (v) => (hi === lo ? 0.5 : (v - lo) / (hi - lo));
    }
    const cats = [...new Set(values.map(String))];
    return (v) => (cats.length === 1 ? 0.5 : cats.indexOf(String(v)) / (cats.length - 1));
  }

  function objectiveChart(trials, maximize) {
    const [c, g] = canvas('objective', 640, 220);
    const byId = [...trials].sort((a, b) => Number(a.id) - Number(b.id)).filter((t) => objectiveOf(t) !== null);
    const values = byId.map(objectiveOf);
    c.dataset.points = String(values.length);
    if (!values.length) return c;
    const y = scaleFor(values.concat([Math.min(...values), Math.max(...values)]));
    const X = (i) => 30 + (i * 600) / Math.max(1, values.length - 1);
    const Y = (v) => 200 - y(v) * 180;
    g.fillStyle = '#1a73e8';
    values.forEach((v, i) => { g.beginPath(); g.arc(X(i), Y(v), 3, 0, 2 * Math.PI); g.fill(); });
    g.strokeStyle = '#188038';
    g.beginPath();
    let best = null;
    values.forEach((v, i) => {
      best = best === null ? v : (maximize ? Math.max(best, v) : Math.min(best, v));
      i === 0 ? g.moveTo(X(i), Y(best)) : g.lineTo(X(i), Y(best));
    });
    g.stroke();
    return c;
  }

  function parallel(trials, axes, metric) {
    const [c, g] = canvas('parallel', 640, 260);
    const shown = axes.filter((a) => a.shown);
    const value = (t, a) => (a.name === metric ? objectiveOf(t) : paramsOf(t)[a.name]);
    const complete = trials.filter((t) => shown.every((a) => value(t, a) !== undefined && value(t, a) !== null));
    const scales = shown.map((a) => scaleFor(complete.map((t) => value(t, a))));
    const X = (i) => 40 + (i * 560) / Math.max(1, shown.length - 1);
    g.strokeStyle = '#9aa0a6';
    g.fillStyle = '#202124';
    shown.forEach((a, i) => {
      g.beginPath(); g.moveTo(X(i), 20); g.lineTo(X(i), 230); g.stroke();
      g.fillText(a.name, X(i) - 20, 250);
    });
    g.strokeStyle = 'rgba(26, 115, 232, 0.6)';
    for (const t of complete) {
      g.beginPath();
      shown.forEach((a, i) => {
        const yy = 230 - scales[i](value(t, a)) * 210;
        i === 0 ? g.moveTo(X(i), yy) : g.lineTo(X(i), yy);
      });
      g.stroke();
    }
    c.dataset.lines = String(shown.length > 1 ? complete.length : 0);
    c.dataset.axes = shown.map((a) => a.name).join(',');
    return c;
  }

  function axisControls(axes, redraw) {
    return el('div', { class: 'controls', id: 'axes' }, ...axes.map((a, i) => {
      const box = el('input', { type: 'checkbox', 'aria-label': 'show ' + a.name });
      box.checked = a.shown;
      box.addEventListener('change', () => { a.shown = box.checked; redraw(); });
      const left = el('button', { type: 'button', 'aria-label': 'move ' + a.name + ' left' }, '←');
      left.addEventListener('click', () => {
        // Past the hidden axes to the shown one before it: what the picture shows moves.
        let j = i - 1;
        while (j > 0 && !axes[j].shown) j -= 1;
        if (j >= 0) { axes.splice(j, 0, axes.splice(i, 1)[0]); redraw(); }
      });
      return el('label', {}, a.name, el('span', {}, box, left));
    }));
  }

  function measurements(trials, metric) {
    const [c, g] = canvas('measurements', 640, 220);
    const series = trials.map((t) => (t.measurements || []).map((m) => ({
      step: Number(m.stepCount || 0), v: (m.metrics || []).find((x) => x.metricId === metric) })).filter((p) => p.v));
    const all = series.flat();
    c.dataset.curves = String(series.filter((s) => s.length).length);
    if (!all.length) return c;
    const xs = scaleFor(all.map((p) => p.step)), ys = scaleFor(all.map((p) => p.v.value));
    g.strokeStyle = 'rgba(217, 48, 37, 0.7)';
    for (const s of series) {
      g.beginPath();
      s.forEach((p, i) => {
        const X = 30 + xs(p.step) * 600, Y = 200 - ys(p.v.value) * 180;
        i === 0 ? g.moveTo(X, Y) : g.lineTo(X, Y);
      });
      g.stroke();
    }
    return c;
  }

  function comparison(trials, chosen, names, metric) {
    const picked = trials.filter((t) => chosen.has(t.id));
    if (picked.length < 2) return el('p', { class: 'muted', id: 'compare' }, 'Tick two or more trials to compare them.');
    const row = (label, f) => el('tr', {}, el('th', {}, label), ...picked.map((t) => el('td', {}, f(t))));
    return el('table', { id: 'compare' },
      row('trial', (t) => t.id), row('state', (t) => t.state || ''),
      ...names.map((n) => row(n, (t) => String(paramsOf(t)[n] ?? ''))),
      row(metric, (t) => String(objectiveOf(t) ?? '')),
      row('measurements', (t) => String((t.measurements || []).length)));
  }

  // The section for `job` (a Vertex HyperparameterTuningJob), redrawn on each refresh.
  function section() {
    const chosen = new Set();
    let axes = null;
    const holder = el('section', { id: 'trials-section' });
    function draw(job) {
      const metric = job.studySpec.metrics[0].metricId;
      const maximize = job.studySpec.metrics[0].goal === 'MAXIMIZE' || job.studySpec.metrics[0].goal === 1;
      const trials = job.trials || [];
      const names = (job.studySpec.parameters || []).map((p) => p.parameterId);
      if (!axes) axes = names.concat([metric]).map((name) => ({ name, shown: true }));
      const redraw = () => draw(job);
      const onChoose = (id, on) => { on ? chosen.add(id) : chosen.delete(id); redraw(); };
      holder.replaceChildren(
        el('h3', {}, `Trials (${trials.length}), best first by ${metric}`),
        table(bestFirst(trials, maximize), names, metric, chosen, onChoose),
        el('h3', {}, 'Objective per trial, and the best so far'), objectiveChart(trials, maximize),
        el('h3', {}, 'Parallel coordinates'), axisControls(axes, redraw), parallel(trials, axes, metric),
        el('h3', {}, 'Intermediate measurements'), measurements(trials, metric),
        el('h3', {}, 'Compared'), comparison(trials, chosen, names, metric));
    }
    return { holder, draw };
  }

  return { section };
})();
