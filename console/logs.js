// A job's log on its page. The tail comes first (the API's `?tail=`, so a page of a
// million-line log costs what it shows), older pages on demand (*Earlier lines*), then
// the log is followed live (the NDJSON stream) from where the tail ended. At most KEEP
// lines stay on the page: the oldest go, and can be paged back in. A tuning job's log
// merges its trials' and reads forward only. Lines are set as text, never markup.
'use strict';

const Logs = (() => {
  const PAGE = 500;
  const KEEP = 20000;

  function authHeaders() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? { Authorization: 'Bearer ' + token } : {};
  }

  function controls(box, params) {
    const task = el('input', { id: 'log-task', size: 14, value: params.get('task') || '', placeholder: 'workerpool0-0' });
    const search = el('input', { id: 'log-search', size: 20, value: params.get('q') || '' });
    const trial = el('input', { id: 'log-trial', size: 4, value: params.get('trial') || '' });
    const follow = el('input', { id: 'log-follow', type: 'checkbox' });
    follow.checked = true;
    const filters = {
      keeps: (row) => (!task.value || row.dataset.task === task.value) &&
                      (!trial.value || row.dataset.trial === trial.value) &&
                      (!search.value || row.textContent.includes(search.value)),
      follow: () => follow.checked,
    };
    const apply = () => {
      const next = hashState().params;
      task.value ? next.set('task', task.value) : next.delete('task');
      search.value ? next.set('q', search.value) : next.delete('q');
      trial.value ? next.set('trial', trial.value) : next.delete('trial');
      setParams(next);
      for (const row of box.children) row.hidden = !filters.keeps(row);
    };
    task.addEventListener('input', apply);
    search.addEventListener('input', apply);
    trial.addEventListener('input', apply);
    const bar = el('div', { class: 'controls' }, el('label', {}, 'replica', task), el('label', {}, 'trial', trial),
      el('label', {}, 'search', search), el('label', {}, 'follow', follow));
    return { bar, filters };
  }

  // One line; `data-after` is the cursor just after it (where the next line starts).
  function row(e, filters) {
    const r = el('div', { class: 'sev-' + (e.severity || ''), 'data-task': e.taskName || '',
      'data-trial': e.trialId || '', 'data-after': e.cursor || '' },
      `${e.timestamp || ''} ${e.taskName || ''} ${e.message}`);
    r.hidden = !filters.keeps(r);
    return r;
  }

  function view(path, params, forwardOnly) {
    const box = el('div', { id: 'log', role: 'log' });
    const { bar, filters } = controls(box, params);
    const earlier = el('button', { id: 'log-earlier', type: 'button', hidden: '' }, 'Earlier lines');
    let first = '';  // Where the oldest line on the page starts; '' = the log's start.
    const setFirst = (cursor) => { first = cursor || ''; earlier.hidden = forwardOnly || !first; };

    async function tail(before) {
      const q = new URLSearchParams({ tail: String(PAGE) });
      if (before) q.set('before', before);
      return api('GET', `${path}/logs?${q}`);
    }
    earlier.addEventListener('click', async () => {
      const page = await tail(first);
      const height = box.scrollHeight;
      box.prepend(...page.entries.map((e) => row(e, filters)));
      box.scrollTop += box.scrollHeight - height;  // The lines in view stay in view.
      setFirst(page.previousCursor);
    });
    // The oldest lines go once there are more than KEEP; *Earlier lines* brings them back.
    function trim() {
      let dropped = null;
      while (box.childElementCount > KEEP) {
        dropped = box.firstElementChild;
        dropped.remove();
      }
      if (dropped) setFirst(dropped.dataset.after);
    }
    function append(rows) {
      const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
      box.append(...rows);
      trim();
      if (atEnd && filters.follow()) box.scrollTop = box.scrollHeight;
    }

    // Follows the log (NDJSON until the job ends) from `cursor`.
    async function follow(cursor, stop) {
      while (!stop.done) {
        const q = new URLSearchParams({ follow: 'true' });
        if (cursor) q.set('cursor', cursor);
        const r = await fetch(`${path}/logs?${q}`, { headers: authHeaders(), signal: stop.signal });
        if (!r.ok || !r.body) return;
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let pending = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          pending += decoder.decode(value, { stream: true });
          const lines = pending.split('\n');
          pending = lines.pop();
          const rows = [];
          for (const line of lines) {
            if (!line.trim()) continue;
            const e = JSON.parse(line);
            if (e.cursor) cursor = e.cursor;
            if (e.message !== undefined) rows.push(row(e, filters));
          }
          if (rows.length) append(rows);
        }
      }
    }

    async function start(stop) {
      let cursor = '';
      if (!forwardOnly) {
        const page = await tail('');
        append(page.entries.map((e) => row(e, filters)));
        box.scrollTop = box.scrollHeight;
        setFirst(page.previousCursor);
        cursor = page.nextCursor || '';
      }
      await follow(cursor, stop);
    }
    return { bar, box, earlier, start };
  }

  return { view };
})();
