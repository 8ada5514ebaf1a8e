// The console (console/, served at /console/) in Debian's chromium through
// playwright-core, against a real daemon running real jobs on the busybox test image.
// Each case prints ok/FAIL; a screenshot of each page lands in $SHOTS.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const BASE = process.argv[2];
const SHOTS = process.env.SHOTS || '.';
const IMAGE = 'localhost/trainyard/busybox:latest';
const LOC = '/v1/projects/web/locations/us-central1';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const failures = [];

async function api(method, path, body) {
  const r = await fetch(BASE + path, {
    method, headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

async function submit(displayName, script) {
  const job = await api('POST', `${LOC}/customJobs`, {
    displayName, jobSpec: { workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-4' },
      replicaCount: '1', containerSpec: { imageUri: IMAGE, command: ['sh', '-c', script] } }] } });
  return job.name.split('/').pop();
}

async function waitFor(what, check, seconds = 30) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const stateOf = async (id) => (await api('GET', `${LOC}/customJobs/${id}`)).state;

async function run(name, page, fn) {
  const start = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}\n${e.stack}`);
  }
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true }).catch(() => {});
}

const jobsUrl = (params) => `${BASE}/console/#/jobs?project=web&location=us-central1${params || ''}`;
const jobUrl = (id) => `${BASE}/console/#/job/customJobs/web/us-central1/${id}`;

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM,
                                        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
const page = await browser.newPage();
const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));

const done = await submit('finished-job', 'echo done');
await waitFor('the first job to end', async () => (await stateOf(done)) === 'JOB_STATE_SUCCEEDED');
const sleepy = await submit('sleepy-job', 'echo started; sleep 1000');
await waitFor('the sleepy job to run', async () => (await stateOf(sleepy)) === 'JOB_STATE_RUNNING');

await run('the_list_shows_jobs_and_filters_by_state_on_the_server', page, async () => {
  await page.goto(jobsUrl());
  await page.locator(`#jobs tr[data-id="${done}"]`).waitFor();
  await page.locator(`#jobs tr[data-id="${sleepy}"]`).waitFor();
  await page.goto(jobsUrl('&state=RUNNING'));
  await page.reload();
  await page.locator(`#jobs tr[data-id="${sleepy}"]`).waitFor();
  if (await page.locator(`#jobs tr[data-id="${done}"]`).count() !== 0) {
    throw new Error('a SUCCEEDED job is listed under RUNNING');
  }
});

await run('the_list_shows_the_newest_jobs_and_more_on_request', page, async () => {
  // A project of its own with three jobs, shown two at a time (`show`, default 100).
  const paging = '/v1/projects/paging/locations/us-central1/customJobs';
  const ids = [];
  for (const n of [1, 2, 3]) {
    const job = await api('POST', paging, { displayName: `paged-${n}`, jobSpec: { workerPoolSpecs: [{
      machineSpec: { machineType: 'n1-standard-4' }, replicaCount: '1',
      containerSpec: { imageUri: IMAGE, command: ['true'] } }] } });
    ids.push(job.name.split('/').pop());
  }
  await page.goto(`${BASE}/console/#/jobs?project=paging&location=us-central1&show=2`);
  await page.locator(`#jobs tr[data-id="${ids[2]}"]`).waitFor();
  await page.locator('#jobs-more').waitFor();
  const listed = async () => page.locator('#jobs tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.id));
  const firstTwo = await listed();
  if (JSON.stringify(firstTwo) !== JSON.stringify([ids[2], ids[1]])) {
    throw new Error(`show=2 listed ${firstTwo}, not the newest two ${[ids[2], ids[1]]}`);
  }
  await page.locator('#jobs-more').click();
  await page.locator(`#jobs tr[data-id="${ids[0]}"]`).waitFor();
  if (await page.locator('#jobs-more').count() !== 0) throw new Error('Show more offered with every job shown');
  if (!page.url().includes('show=102')) throw new Error(`the count is not in the URL: ${page.url()}`);
  // Out of the way of the queue test's count of what running jobs hold.
  for (const id of ids) await api('POST', `${paging}/${id}:cancel`, {}).catch(() => {});
});

await run('the_job_page_streams_a_live_log_line_within_a_second', page, async () => {
  const id = await submit('talker', 'sleep 3; echo live-line-$(cat /proc/sys/kernel/random/uuid); sleep 1000');
  await page.goto(jobUrl(id));
  await page.locator('#log').waitFor();
  const line = page.locator('#log div', { hasText: 'live-line-' });
  await line.waitFor({ timeout: 30000 });
  const shownAt = Date.now();
  // When the daemon had the line: its entry's timestamp, as the API gives it.
  const entries = (await api('GET', `${LOC}/customJobs/${id}/logs`)).entries;
  const entry = entries.find((e) => e.message.startsWith('live-line-'));
  const lag = shownAt - Date.parse(entry.timestamp);
  if (lag > 1000) throw new Error(`the line showed ${lag} ms after the daemon had it`);
  await api('POST', `${LOC}/customJobs/${id}:cancel`, {});
});

await run('a_failed_jobs_page_says_why_with_its_last_lines_timeline_and_replicas', page, async () => {
  const id = await submit('failing', 'echo about-to-fail; exit 3');
  await waitFor('FAILED', async () => (await stateOf(id)) === 'JOB_STATE_FAILED');
  await page.goto(jobUrl(id));
  await page.locator('#job-error').waitFor();
  await page.locator('#job-last-lines', { hasText: 'about-to-fail' }).waitFor();
  await page.locator('#replicas tr[data-task="workerpool0-0"]', { hasText: 'exit 3' }).waitFor();
  for (const phase of ['queueTime', 'admitTime', 'imageReadyTime', 'allRunningTime', 'endTime']) {
    await page.locator(`#timeline tr[data-phase="${phase}"]`).waitFor();
  }
});

await run('cancel_from_the_page_ends_the_job_cancelled', page, async () => {
  await page.goto(jobUrl(sleepy));
  await page.locator('#cancel').click();
  await waitFor('CANCELLED', async () => (await stateOf(sleepy)) === 'JOB_STATE_CANCELLED', 60);
  await page.locator('#job-state', { hasText: 'CANCELLED' }).waitFor({ timeout: 10000 });
});

await run('the_queue_page_says_why_a_job_waits_and_what_running_jobs_hold', page, async () => {
  // One job takes every vCPU admission may promise (n1-highcpu-2: 2 vCPUs, 1.8 GB);
  // the next waits for it.
  const text = await (await fetch(`${BASE}/metrics`)).text();
  const sample = (name) => Number(text.split('\n').find((l) => l.startsWith(name + ' ')).split(' ').pop());
  const fill = Math.min(Math.floor(sample('trainyard_capacity_cpus') / 2),
                        Math.floor(sample('trainyard_capacity_memory_bytes') / 1.8e9));
  const pool = (n) => ({ machineSpec: { machineType: 'n1-highcpu-2' }, replicaCount: String(n),
    containerSpec: { imageUri: IMAGE, command: ['sh', '-c', 'sleep 1000'] } });
  const job = async (name, replicas) => (await api('POST', `${LOC}/customJobs`, { displayName: name,
    jobSpec: { workerPoolSpecs: replicas > 1 ? [pool(1), pool(replicas - 1)] : [pool(1)] } })).name.split('/').pop();
  const big = await job('everything', fill);
  await waitFor('the big job to run', async () => (await stateOf(big)) === 'JOB_STATE_RUNNING', 60);
  const waiting = await job('waiting', 1);
  await page.goto(`${BASE}/console/#/queue?project=web&location=us-central1`);
  const row = page.locator(`#queue tr[data-id="${waiting}"]`);
  await row.waitFor();
  const reason = (await row.locator('.reason').textContent()).trim();
  if (!reason) throw new Error('no reason is given for the wait');
  const held = page.locator('#nodes tbody tr').first();
  await held.waitFor();
  if ((await held.locator('td').nth(1).textContent()) !== String(fill)) {
    throw new Error('replicas held: ' + await held.textContent());
  }
  await page.locator('#capacity').waitFor();
  // The node the big job fills shows less free than it has ("X of Y").
  const free = page.locator('#node-free tbody tr').first();
  await free.waitFor();
  const [left, all] = (await free.locator('td').nth(1).textContent()).split(' of ').map(Number);
  if (!(left < all) || left < 0) throw new Error(`vCPUs free: ${left} of ${all}`);
  await page.screenshot({ path: `${SHOTS}/queue_page_while_a_job_waits.png`, fullPage: true });
  for (const id of [waiting, big]) await api('POST', `${LOC}/customJobs/${id}:cancel`, {});
  await waitFor('both to end', async () => (await stateOf(big)) === 'JOB_STATE_CANCELLED' &&
    (await stateOf(waiting)) === 'JOB_STATE_CANCELLED', 60);
});

await run('a_hostile_name_and_log_line_are_text_and_run_nothing', page, async () => {
  const id = await submit(HOSTILE, `echo '${HOSTILE}'`);
  await waitFor('the hostile job to end', async () => (await stateOf(id)) === 'JOB_STATE_SUCCEEDED');
  await page.goto(jobsUrl());
  await page.locator('#jobs a', { hasText: HOSTILE }).first().waitFor();
  await page.goto(jobUrl(id));
  await page.locator('#log div', { hasText: HOSTILE }).waitFor();
  await page.locator('#job-name', { hasText: HOSTILE }).waitFor();
  if (await page.evaluate(() => window.__pwned)) throw new Error('the name or the log line ran');
  if (await page.locator('main img').count() !== 0) throw new Error('an <img> element was made');
});

await run('the_console_is_served_with_a_policy_of_its_own_origin', page, async () => {
  const r = await fetch(`${BASE}/console/`);
  const policy = r.headers.get('content-security-policy') || '';
  if (!policy.includes("script-src 'self'") || !policy.includes("default-src 'none'")) {
    throw new Error('policy: ' + policy);
  }
  if (consoleErrors.length) throw new Error('page errors: ' + consoleErrors.join('; '));
});

await run('a_tuning_jobs_page_shows_every_trial_best_first_and_one_line_each', page, async () => {
  const report = 'for a in "$@"; do case $a in --x=*) x=${a#--x=};; esac; done; echo "trial line x=$x"; ' +
    'mkdir -p "$(dirname "$CLOUD_ML_HP_METRIC_FILE")"; ' +
    'echo "{\\"acc\\": \\"$x\\", \\"global_step\\": \\"1\\"}" > "$CLOUD_ML_HP_METRIC_FILE"';
  const study = await api('POST', `${LOC}/hyperparameterTuningJobs`, {
    displayName: 'tuned', maxTrialCount: 4, parallelTrialCount: 4,
    studySpec: { algorithm: 'RANDOM_SEARCH', metrics: [{ metricId: 'acc', goal: 'MAXIMIZE' }],
      parameters: [{ parameterId: 'x', doubleValueSpec: { minValue: 0, maxValue: 1 } },
                   { parameterId: 'n', integerValueSpec: { minValue: '1', maxValue: '5' } }] },
    trialJobSpec: { workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-4' }, replicaCount: '1',
      containerSpec: { imageUri: IMAGE, command: ['sh', '-c', report, 'trainer'] } }] } });
  const id = study.name.split('/').pop();
  const path = `${LOC}/hyperparameterTuningJobs/${id}`;
  await waitFor('the study to end', async () => (await api('GET', path)).state === 'JOB_STATE_SUCCEEDED', 120);
  const trials = (await api('GET', path)).trials;
  const best = [...trials].sort((a, b) => b.finalMeasurement.metrics[0].value - a.finalMeasurement.metrics[0].value);
  await page.goto(`${BASE}/console/#/job/hyperparameterTuningJobs/web/us-central1/${id}`);
  await page.locator('#trials tbody tr').nth(3).waitFor();
  const shown = await page.locator('#trials tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.trial));
  if (JSON.stringify(shown) !== JSON.stringify(best.map((t) => t.id))) {
    throw new Error(`trials shown ${shown}, best first is ${best.map((t) => t.id)}`);
  }
  const lines = await page.locator('#parallel').getAttribute('data-lines');
  if (lines !== '4') throw new Error(`parallel coordinates drew ${lines} lines`);
  await page.getByLabel('show n').uncheck();
  await page.waitForFunction(() => document.querySelector('#parallel').dataset.axes === 'x,acc');
  await page.getByLabel('move acc left').click();
  await page.waitForFunction(() => document.querySelector('#parallel').dataset.axes === 'acc,x');
  if ((await page.locator('#objective').getAttribute('data-points')) !== '4') throw new Error('objective chart');
  await page.getByLabel('compare trial 1').check();
  await page.getByLabel('compare trial 2').check();
  await page.locator('#compare th', { hasText: 'trial' }).waitFor();
  // A trial's own log: its link filters the job's merged log to its lines.
  await page.locator('a[data-trial-logs="2"]').click();
  await page.locator('#log-trial').waitFor();
  await waitFor('trial 2 alone', async () => {
    const rows = await page.locator('#log div:visible').evaluateAll((r) => r.map((x) => [x.dataset.trial, x.textContent]));
    return rows.length > 0 && rows.every(([t]) => t === '2') && rows.some(([, text]) => text.includes('trial line'));
  }, 15);
});

// The event writer of tests/tensorboard with its messages (protoc's descriptor set).
function eventWriter() {
  const root = new URL('../..', import.meta.url).pathname;
  const desc = `${process.env.WORK}/event.desc`;
  execFileSync('protoc', [`--descriptor_set_out=${desc}`, '-I', `${root}proto`, `${root}proto/tensorboard/event.proto`]);
  return `DESCRIPTOR_SET = "${readFileSync(desc).toString('base64')}"\n` +
    readFileSync(`${root}tests/tensorboard/event_writer.py`, 'utf8');
}

await run('a_trainers_event_files_draw_its_curves', page, async () => {
  await api('POST', '/storage/v1/b?project=web', { name: 'web-curves' });
  const board = (await api('POST', `${LOC}/tensorboards`, { displayName: 'curves' })).response.name;
  const job = await api('POST', `${LOC}/customJobs`, { displayName: 'curves', jobSpec: {
    tensorboard: board, baseOutputDirectory: { outputUriPrefix: 'gs://web-curves/out' },
    workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-4' }, replicaCount: '1',
      containerSpec: { imageUri: 'localhost/trainyard/sklearn-cpu:latest', command: ['python3', '-c', eventWriter()],
                       env: [{ name: 'STEPS', value: '12' }] } }] } });
  const id = job.name.split('/').pop();
  await waitFor('the trainer to end', async () => (await stateOf(id)) === 'JOB_STATE_SUCCEEDED', 120);
  await page.goto(jobUrl(id));
  await page.locator('#curves-link').click();
  await page.locator('#curve-tag option[value="loss"]').waitFor({ state: 'attached' });
  await page.locator('#curve-tag').selectOption('loss');
  await page.waitForFunction(() => {
    const s = JSON.parse(document.querySelector('#curve').dataset.series || '{}');
    return s.default && s.default.length === 12;
  });
  const series = JSON.parse(await page.locator('#curve').getAttribute('data-series'));
  series.default.forEach(([step, value], i) => {
    if (step !== i || Math.abs(value - 1 / (i + 1)) > 1e-6) throw new Error(`point ${i}: ${step}, ${value}`);
  });
  await page.locator('#curve-log').check();
  await page.locator('#curve-smoothing').fill('0.6');
  await page.locator('#curve-tag').selectOption('accuracy');
  await page.waitForFunction(() => document.querySelector('#curve').dataset.runs === '1' &&
    JSON.parse(document.querySelector('#curve').dataset.series).validation);
  if (await page.locator('#curves-status.error').count() !== 0) {
    throw new Error(await page.locator('#curves-status').textContent());
  }
});

// A long log opens at its tail and pages backwards on demand, every line once, in order.
await run('a_long_log_opens_at_its_tail_and_pages_backwards', page, async () => {
  const id = await submit('long-log', 'i=0; while [ $i -lt 1200 ]; do echo "numbered $i"; i=$((i+1)); done; sleep 1000');
  const numbered = () => page.$$eval('#log div[data-task="workerpool0-0"]',
    (rows) => rows.map((r) => Number(r.textContent.split('numbered ')[1])));
  await waitFor('its 1200 lines', async () => {
    const r = await api('GET', `${LOC}/customJobs/${id}/logs?tail=1&task=workerpool0-0`);
    return r.entries.length && r.entries[0].message === 'numbered 1199';
  }, 60);
  await page.goto(jobUrl(id));
  await page.locator('#log div', { hasText: 'numbered 1199' }).waitFor();
  let shown = await numbered();
  if (shown.length > 500 || shown[0] < 700) throw new Error(`the page opened with lines from ${shown[0]}`);
  while (await page.locator('#log-earlier').isVisible()) {
    const before = shown.length;
    await page.locator('#log-earlier').click();
    await waitFor('an earlier page', async () => (shown = await numbered()).length > before, 10);
  }
  if (shown.length !== 1200 || shown.some((n, i) => n !== i)) throw new Error('lines missing or out of order');
  await api('POST', `${LOC}/customJobs/${id}:cancel`, {});
  await waitFor('CANCELLED', async () => (await stateOf(id)) === 'JOB_STATE_CANCELLED', 60);
});

// enableWebAccess: the job page links each running replica's shell; the shell page
// runs a command in the replica's container; a job without the flag offers none and
// its shell is refused.
const terminalShows = (want) => {
  const b = window.shellTerminal.buffer.active;
  let text = '';
  for (let i = 0; i < b.length; i++) text += b.getLine(i).translateToString(true) + '\n';
  return text.includes(want);
};
await run('the_web_shell_runs_hostname_in_a_replica_and_is_refused_without_the_flag', page, async () => {
  const made = await api('POST', `${LOC}/customJobs`, {
    displayName: 'shell-job', jobSpec: { enableWebAccess: true, workerPoolSpecs: [{
      machineSpec: { machineType: 'n1-standard-4' }, replicaCount: '1',
      containerSpec: { imageUri: IMAGE, command: ['sh', '-c', 'sleep 1000'] } }] } });
  const id = made.name.split('/').pop();
  const plain = await submit('no-shell-job', 'sleep 1000');
  await waitFor('its shell', async () => {
    const job = await api('GET', `${LOC}/customJobs/${id}`);
    return job.webAccessUris && job.webAccessUris['workerpool0-0'];
  }, 60);
  const hostname = execFileSync('podman', ['inspect', '-f', '{{.Config.Hostname}}', `ty-${id}-1-0-0`])
    .toString().trim();
  await page.goto(jobUrl(id));
  await page.locator('#shells a[data-replica="workerpool0-0"]').click();
  await page.locator('#shell-state', { hasText: 'connected' }).waitFor({ timeout: 20000 });
  await page.keyboard.type('echo "host:$(hostname)"');
  await page.keyboard.press('Enter');
  await page.waitForFunction(terminalShows, 'host:' + hostname, { timeout: 15000 });
  await page.screenshot({ path: `${SHOTS}/web_shell.png`, fullPage: true });

  await waitFor('the plain job to run', async () => (await stateOf(plain)) === 'JOB_STATE_RUNNING', 60);
  await page.goto(jobUrl(plain));
  await page.locator('#job-state', { hasText: 'RUNNING' }).waitFor();
  if (await page.locator('#shells').count() !== 0) throw new Error('a job without the flag offers a shell');
  await page.goto(`${BASE}/console/shell.html#${LOC}/customJobs/${plain}:shell?replica=workerpool0-0`);
  await page.locator('#shell-state.error', { hasText: 'enableWebAccess' }).waitFor({ timeout: 15000 });
  for (const job of [id, plain]) {
    await api('POST', `${LOC}/customJobs/${job}:cancel`, {});
    await waitFor('CANCELLED', async () => (await stateOf(job)) === 'JOB_STATE_CANCELLED', 60);
  }
});

// A second daemon, with tokens: an admin, and a viewer of web-a only.
async function daemonWithTokens() {
  const dir = `${process.env.WORK}/tokens`;
  mkdirSync(dir, { recursive: true });
  const entry = (name, role, project) => `  - name: ${name}\n    sha256: ${
    createHash('sha256').update('ty_' + name).digest('hex')}\n    role: ${role}\n    projects: ["${project}"]\n`;
  writeFileSync(`${dir}/config.yaml`, 'tokens:\n' + entry('root', 'admin', '*') + entry('val', 'viewer', 'web-a'));
  const child = spawn(process.env.DAEMON, ['--config', `${dir}/config.yaml`, '--listen', '127.0.0.1:0',
    '--port-file', `${dir}/port`, '--data-dir', `${dir}/data`, '--stop-grace', '2'], { stdio: 'ignore' });
  await waitFor('the second daemon', async () => existsSync(`${dir}/port`) &&
    readFileSync(`${dir}/port`, 'utf8').trim() !== '', 20);
  return { child, base: `http://127.0.0.1:${readFileSync(`${dir}/port`, 'utf8').trim()}` };
}

await run('with_tokens_a_viewer_sees_no_cancel_and_no_other_project', page, async () => {
  const { child, base } = await daemonWithTokens();
  try {
    const asRoot = async (project, displayName) => {
      const r = await fetch(`${base}/v1/projects/${project}/locations/us-central1/customJobs`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ty_root' },
        body: JSON.stringify({ displayName, jobSpec: { workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-4' },
          replicaCount: '1', containerSpec: { imageUri: IMAGE, command: ['sh', '-c', 'sleep 1000'] } }] } }) });
      return (await r.json()).name.split('/').pop();
    };
    const mine = await asRoot('web-a', 'viewers-job');
    const theirs = await asRoot('web-b', 'secret-job');
    const viewer = await browser.newPage();
    await viewer.goto(`${base}/console/#/jobs?project=web-a&location=us-central1`);
    await viewer.locator('#token').fill('ty_val');
    await viewer.locator('#token-form button').click();
    await viewer.locator(`#jobs tr[data-id="${mine}"]`).waitFor();
    if (await viewer.locator('#bulk-cancel').count() !== 0 || await viewer.locator('#jobs input').count() !== 0) {
      throw new Error('a viewer is offered cancel in the list');
    }
    await viewer.goto(`${base}/console/#/job/customJobs/web-a/us-central1/${mine}`);
    await viewer.locator('#job-state').waitFor();
    if (await viewer.locator('#cancel').count() !== 0) throw new Error('a viewer is offered cancel');
    await viewer.screenshot({ path: `${SHOTS}/viewer_job_page.png`, fullPage: true });
    await viewer.goto(`${base}/console/#/jobs?project=web-b&location=us-central1`);
    await viewer.locator('#jobs-status.error').waitFor();
    if (await viewer.locator(`#jobs tr[data-id="${theirs}"]`).count() !== 0) {
      throw new Error("another project's job is listed");
    }
    if (!(await viewer.locator('#jobs-status').textContent()).includes('web-b')) {
      throw new Error('the refusal does not say which project');
    }
    await viewer.close();
    // Their replicas end before the daemon does (a stopped daemon leaves them running).
    for (const [project, id] of [['web-a', mine], ['web-b', theirs]]) {
      const job = `${base}/v1/projects/${project}/locations/us-central1/customJobs/${id}`;
      const auth = { Authorization: 'Bearer ty_root' };
      await fetch(`${job}:cancel`, { method: 'POST', headers: auth });
      await waitFor('CANCELLED', async () =>
        (await (await fetch(job, { headers: auth })).json()).state === 'JOB_STATE_CANCELLED', 60);
    }
  } finally {
    child.kill('SIGTERM');
  }
});

await browser.close();
console.log('console:', failures.length ? 'FAILED ' + failures.join(', ') : 'all cases passed');
process.exit(failures.length ? 1 : 0);
