// Drives the real Google Node.js client libraries against a running trainyardd:
//   * googleapis 178.0.0 discovery clients: google.ml v1 and google.aiplatform v1
//   * @google-cloud/aiplatform 6.11.0 GAPIC JobServiceClient over REST (fallback: true)
// What these clients send and need is in docs/api.md "The REST API".
//
// Usage: node clients_test.mjs http://127.0.0.1:PORT
// Env:   TRAINYARD_TEST_IMAGE (default localhost/trainyard/busybox:latest)
//        TRAINYARD_CLIENTS_FILTER=substring  runs only the tests whose name contains it
//
// Every test runs even when an earlier one failed; the last line is `N passed, M failed`.

import assert from 'node:assert/strict';
import net from 'node:net';
import { google } from 'googleapis';
import aiplatform from '@google-cloud/aiplatform';

const rootArg = process.argv[2];
if (!rootArg) {
  console.error('usage: node clients_test.mjs http://127.0.0.1:PORT');
  process.exit(2);
}
const rootUrl = rootArg.endsWith('/') ? rootArg : rootArg + '/';
const base = new URL(rootUrl);
const IMAGE = process.env.TRAINYARD_TEST_IMAGE || 'localhost/trainyard/busybox:latest';
const FILTER = process.env.TRAINYARD_CLIENTS_FILTER || '';

// Never let anything reach Google: no metadata server, no token endpoint, no API host.
// Every TCP connect (node-fetch in gaxios, undici, tls) goes through net.Socket#connect;
// anything but the daemon's host is refused and counted (a failure at the end).
const ALLOWED_HOSTS = new Set([base.hostname, '127.0.0.1', 'localhost', '::1']);
const escapes = [];
const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function connect(...args) {
  let opts = args[0];
  if (Array.isArray(opts)) opts = opts[0]; // net.connect() passes normalized [options, cb]
  let host;
  if (opts && typeof opts === 'object') {
    host = opts.path ? undefined : (opts.host ?? 'localhost');
  } else if (typeof opts === 'number' || /^\d+$/.test(String(opts))) {
    host = typeof args[1] === 'string' ? args[1] : 'localhost';
  }
  if (host !== undefined && !ALLOWED_HOSTS.has(host)) {
    escapes.push(`${host}:${opts?.port ?? ''}`);
    const err = new Error(`clients_test forbids network access to ${host}`);
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return realConnect.apply(this, args);
};
process.env.GCE_METADATA_HOST = '127.0.0.1:9'; // discard port: a metadata probe fails at once
process.env.METADATA_SERVER_DETECTION = 'none';

const PROJECT = 'clients-test';
const LOCATION = 'local';
const RUN = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
const ML_PREFIX = `cli_${RUN}`;
const PARENT = `projects/${PROJECT}/locations/${LOCATION}`;
const NAME_RE = new RegExp(`^projects/${PROJECT}/locations/${LOCATION}/customJobs/\\d+$`);
const OP_RE = new RegExp(
  `^projects/${PROJECT}/locations/${LOCATION}/(customJobs/\\d+/)?operations/[^/]+$`);

// One fixed-token OAuth2 client for everyone: sends `authorization: Bearer test-token`,
// never refreshes (no refresh_token, no expiry_date).
const auth = new google.auth.OAuth2();
auth.setCredentials({ access_token: 'test-token' });

const ml = google.ml({ version: 'v1', rootUrl, auth });
const aip = google.aiplatform({ version: 'v1', rootUrl, auth });
const gapic = new aiplatform.v1.JobServiceClient({
  apiEndpoint: base.hostname,
  port: Number(base.port),
  protocol: 'http',
  fallback: true,
  authClient: auth,
});

// ---------------------------------------------------------------- tiny harness
const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function poll(what, fn, done, { timeoutMs = 120_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (done(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    }
    await sleep(intervalMs);
  }
}

function describeErr(err) {
  const parts = [err?.stack || String(err)];
  if (err?.status !== undefined || err?.code !== undefined) {
    parts.push(`  status=${err.status} code=${err.code}`);
  }
  const data = err?.response?.data;
  if (data !== undefined) parts.push(`  response.data=${JSON.stringify(data)}`);
  const cfg = err?.config;
  if (cfg?.url) parts.push(`  request=${cfg.method || 'GET'} ${cfg.url}`);
  return parts.join('\n');
}

function assertTimestamp(value, what) {
  assert.equal(typeof value, 'string', `${what} should be an RFC 3339 string, got ${value}`);
  assert.match(value, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?Z$/,
    `${what} should be UTC ...Z with 0/3/6/9 fractional digits`);
  const t = Date.parse(value);
  assert.ok(Number.isFinite(t), `${what} does not parse: ${value}`);
  assert.ok(Math.abs(Date.now() - t) < 3600_000, `${what} is not near now: ${value}`);
}

function assertGapicTimestamp(value, what) {
  assert.ok(value && typeof value === 'object', `${what} missing: ${JSON.stringify(value)}`);
  const secs = Number(value.seconds);
  assert.ok(Number.isFinite(secs) && secs > 0, `${what}.seconds bad: ${JSON.stringify(value)}`);
  assert.ok(Math.abs(Date.now() / 1000 - secs) < 3600, `${what} is not near now`);
  assert.ok(Number.isInteger(value.nanos ?? 0) && (value.nanos ?? 0) < 1e9, `${what}.nanos bad`);
}

const ML_STATES = ['QUEUED', 'PREPARING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLING', 'CANCELLED'];

// ---------------------------------------------------------------- googleapis: ml v1
const mlJob = (jobId, script) => ({
  jobId,
  labels: { suite: 'clients' },
  trainingInput: {
    scaleTier: 'BASIC',
    region: 'local',
    masterConfig: { imageUri: IMAGE, containerCommand: ['sh', '-c', script] },
  },
});
const ML_OK = `${ML_PREFIX}_ok`;
const ML_SLEEP = `${ML_PREFIX}_sleep`;

test('ml: jobs.create answers the Job, QUEUED, with createTime', async () => {
  const res = await ml.projects.jobs.create({
    parent: `projects/${PROJECT}`,
    requestBody: mlJob(ML_OK, 'echo hi from ml'),
  });
  assert.equal(res.status, 200);
  // gaxios 7 gives a fetch Headers object; older ones a plain object.
  const ctype = typeof res.headers?.get === 'function'
    ? res.headers.get('content-type') : res.headers?.['content-type'];
  assert.match(String(ctype), /^application\/json/);
  assert.equal(typeof res.data, 'object', 'googleapis needs Content-Type: application/json');
  assert.equal(res.data.jobId, ML_OK);
  assert.ok(ML_STATES.includes(res.data.state), `state is a name: ${res.data.state}`);
  assertTimestamp(res.data.createTime, 'createTime');
  assert.equal(res.data.trainingInput?.scaleTier, 'BASIC');
});

test('ml: jobs.get polls to SUCCEEDED', async () => {
  const job = await poll(`${ML_OK} SUCCEEDED`,
    async () => (await ml.projects.jobs.get({ name: `projects/${PROJECT}/jobs/${ML_OK}` })).data,
    (j) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state));
  assert.equal(job.state, 'SUCCEEDED', `job ended ${job.state}: ${job.errorMessage ?? ''}`);
  assertTimestamp(job.createTime, 'createTime');
  assertTimestamp(job.endTime, 'endTime');
  if (job.startTime) assertTimestamp(job.startTime, 'startTime');
});

test('ml: jobs.create with an existing jobId fails 409 ALREADY_EXISTS', async () => {
  await assert.rejects(
    ml.projects.jobs.create({ parent: `projects/${PROJECT}`, requestBody: mlJob(ML_OK, 'true') }),
    (err) => {
      assert.equal(err.status, 409, describeErr(err));
      assert.equal(err.code, 409);
      assert.equal(err.response?.data?.error?.status, 'ALREADY_EXISTS');
      assert.ok(err.message.length > 0);
      return true;
    });
});

test('ml: jobs.get of a missing job fails 404 NOT_FOUND', async () => {
  await assert.rejects(
    ml.projects.jobs.get({ name: `projects/${PROJECT}/jobs/${ML_PREFIX}_nope` }),
    (err) => {
      assert.equal(err.status, 404, describeErr(err));
      assert.equal(err.response?.data?.error?.status, 'NOT_FOUND');
      return true;
    });
});

test('ml: jobs.list with filter jobId:<prefix>* and pageSize pages through', async () => {
  // A second job so that pageSize 1 needs two pages.
  await ml.projects.jobs.create({
    parent: `projects/${PROJECT}`, requestBody: mlJob(ML_SLEEP, 'sleep 1000'),
  });
  const seen = [];
  let pageToken;
  let pages = 0;
  do {
    const res = await ml.projects.jobs.list({
      parent: `projects/${PROJECT}`, filter: `jobId:${ML_PREFIX}*`, pageSize: 1, pageToken,
    });
    pages++;
    const jobs = res.data.jobs ?? [];
    assert.ok(jobs.length <= 1, `pageSize 1 answered ${jobs.length} jobs`);
    for (const j of jobs) {
      assert.ok(j.jobId.startsWith(ML_PREFIX), `filter let ${j.jobId} through`);
      assert.ok(ML_STATES.includes(j.state), `state is a name: ${j.state}`);
      seen.push(j.jobId);
    }
    pageToken = res.data.nextPageToken || undefined;
    assert.ok(pages < 10, 'paging does not end');
  } while (pageToken);
  assert.deepEqual([...seen].sort(), [ML_OK, ML_SLEEP].sort());
  // Another prefix matches nothing: `{}` or `{jobs: []}`.
  const none = await ml.projects.jobs.list({
    parent: `projects/${PROJECT}`, filter: `jobId:${ML_PREFIX}zzz*`,
  });
  assert.equal((none.data.jobs ?? []).length, 0);
});

test('ml: jobs.cancel with no body (content-length 0) cancels a sleeping job', async () => {
  const name = `projects/${PROJECT}/jobs/${ML_SLEEP}`;
  await poll(`${ML_SLEEP} running`, async () => (await ml.projects.jobs.get({ name })).data,
    (j) => ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state));
  const res = await ml.projects.jobs.cancel({ name }); // no requestBody: empty body
  assert.equal(res.status, 200);
  const now = (await ml.projects.jobs.get({ name })).data;
  assert.ok(['CANCELLING', 'CANCELLED'].includes(now.state), `after cancel: ${now.state}`);
  const done = await poll(`${ML_SLEEP} CANCELLED`,
    async () => (await ml.projects.jobs.get({ name })).data,
    (j) => !['CANCELLING', 'QUEUED', 'PREPARING', 'RUNNING'].includes(j.state),
    { timeoutMs: 60_000 });
  assert.equal(done.state, 'CANCELLED');
});

// ---------------------------------------------------------------- googleapis: aiplatform v1
const vertexJob = (displayName, script, extra = {}) => ({
  displayName,
  labels: { suite: 'clients' },
  jobSpec: {
    workerPoolSpecs: [{
      machineSpec: { machineType: 'n1-standard-4' },
      replicaCount: '1',
      containerSpec: { imageUri: IMAGE, command: ['sh', '-c', script] },
    }],
  },
  ...extra,
});
const apiary = {}; // names created by the googleapis aiplatform tests

test('aiplatform: customJobs.create assigns a numeric id, state and times', async () => {
  const res = await aip.projects.locations.customJobs.create({
    parent: PARENT, requestBody: vertexJob(`${RUN}-apiary-ok`, 'echo hi from aiplatform'),
  });
  assert.equal(res.status, 200);
  assert.equal(typeof res.data, 'object');
  assert.match(res.data.name, NAME_RE);
  assert.ok(['JOB_STATE_QUEUED', 'JOB_STATE_PENDING'].includes(res.data.state),
    `state name: ${res.data.state}`);
  assert.equal(res.data.displayName, `${RUN}-apiary-ok`);
  assertTimestamp(res.data.createTime, 'createTime');
  assertTimestamp(res.data.updateTime, 'updateTime');
  const pool = res.data.jobSpec.workerPoolSpecs[0];
  assert.ok(pool.replicaCount === '1' || pool.replicaCount === 1, `replicaCount ${pool.replicaCount}`);
  assert.equal(pool.containerSpec.imageUri, IMAGE);
  apiary.ok = res.data.name;
});

test('aiplatform: customJobs.get polls to JOB_STATE_SUCCEEDED', async () => {
  assert.ok(apiary.ok, 'create failed');
  const job = await poll('apiary job SUCCEEDED',
    async () => (await aip.projects.locations.customJobs.get({ name: apiary.ok })).data,
    (j) => ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED'].includes(j.state));
  assert.equal(job.state, 'JOB_STATE_SUCCEEDED', JSON.stringify(job.error ?? {}));
  assert.equal(job.name, apiary.ok);
  assertTimestamp(job.createTime, 'createTime');
  assertTimestamp(job.endTime, 'endTime');
  if (job.startTime) assertTimestamp(job.startTime, 'startTime');
});

test('aiplatform: customJobs.list pages include the job', async () => {
  assert.ok(apiary.ok, 'create failed');
  const names = [];
  let pageToken;
  let pages = 0;
  do {
    const res = await aip.projects.locations.customJobs.list({ parent: PARENT, pageSize: 2, pageToken });
    pages++;
    for (const j of res.data.customJobs ?? []) {
      assert.match(j.name, NAME_RE);
      assert.equal(typeof j.state, 'string', `state should be a name: ${j.state}`);
      names.push(j.name);
    }
    pageToken = res.data.nextPageToken || undefined;
    assert.ok(pages < 50, 'paging does not end');
  } while (pageToken);
  assert.ok(names.includes(apiary.ok), `${apiary.ok} not in ${names}`);
  assert.equal(new Set(names).size, names.length, 'a job appears on two pages');
});

test('aiplatform: customJobs.cancel (no body) on a sleeping job', async () => {
  const created = await aip.projects.locations.customJobs.create({
    parent: PARENT, requestBody: vertexJob(`${RUN}-apiary-sleep`, 'sleep 1000'),
  });
  const name = created.data.name;
  await poll('apiary sleeper running',
    async () => (await aip.projects.locations.customJobs.get({ name })).data,
    (j) => j.state !== 'JOB_STATE_QUEUED' && j.state !== 'JOB_STATE_PENDING');
  const res = await aip.projects.locations.customJobs.cancel({ name });
  assert.equal(res.status === 200 || res.status === 204, true, `status ${res.status}`);
  const now = (await aip.projects.locations.customJobs.get({ name })).data;
  assert.ok(['JOB_STATE_CANCELLING', 'JOB_STATE_CANCELLED'].includes(now.state), now.state);
  const done = await poll('apiary sleeper CANCELLED',
    async () => (await aip.projects.locations.customJobs.get({ name })).data,
    (j) => j.state !== 'JOB_STATE_CANCELLING' && j.state !== 'JOB_STATE_RUNNING',
    { timeoutMs: 60_000 });
  assert.equal(done.state, 'JOB_STATE_CANCELLED');
  assert.equal(done.error?.code, 1, `error should be {code: 1 (CANCELLED)}: ${JSON.stringify(done.error)}`);
  apiary.cancelled = name;
});

test('aiplatform: customJobs.delete answers an Operation; operations.get reaches done', async () => {
  assert.ok(apiary.ok, 'create failed');
  const res = await aip.projects.locations.customJobs.delete({ name: apiary.ok });
  assert.equal(res.status, 200);
  const op = res.data;
  assert.match(op.name, OP_RE);
  if (op.metadata) assert.match(op.metadata['@type'], /^type\.googleapis\.com\//);
  const final = await poll('delete operation done',
    async () => (await aip.projects.locations.operations.get({ name: op.name })).data,
    (o) => o.done === true, { timeoutMs: 30_000 });
  assert.equal(final.name, op.name);
  assert.equal(final.error, undefined, `operation failed: ${JSON.stringify(final.error)}`);
  if (final.response) {
    assert.equal(final.response['@type'], 'type.googleapis.com/google.protobuf.Empty');
  }
  // GAPIC polls the same operation as GET /ui/{name}, without $alt.
  const ui = await fetch(new URL(`/ui/${op.name}`, base),
    { headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' } });
  assert.equal(ui.status, 200, `GET /ui/${op.name}: ${ui.status}`);
  assert.equal((await ui.json()).name, op.name);
  await assert.rejects(aip.projects.locations.customJobs.get({ name: apiary.ok }),
    (err) => { assert.equal(err.status, 404, describeErr(err)); return true; });
});

test('aiplatform: get of a non-numeric id is 400, of a missing id 404', async () => {
  await assert.rejects(aip.projects.locations.customJobs.get({ name: `${PARENT}/customJobs/abc` }),
    (err) => { assert.equal(err.status, 400, describeErr(err)); return true; });
  await assert.rejects(
    aip.projects.locations.customJobs.get({ name: `${PARENT}/customJobs/9123456789012345678` }),
    (err) => {
      assert.equal(err.status, 404, describeErr(err));
      assert.equal(err.response?.data?.error?.status, 'NOT_FOUND');
      return true;
    });
});

// ---------------------------------------------------------------- GAPIC JobServiceClient (REST)
const gapicJob = (displayName, script, containerSpec) => ({
  displayName,
  labels: { suite: 'clients' },
  jobSpec: {
    workerPoolSpecs: [{
      machineSpec: { machineType: 'n1-standard-4' },
      replicaCount: 1,
      containerSpec: containerSpec ?? { imageUri: IMAGE, command: ['sh', '-c', script] },
    }],
  },
});
const gx = {};

test('gapic: createCustomJob resolves with a server-assigned name and a JobState', async () => {
  const [job] = await gapic.createCustomJob({
    parent: PARENT, customJob: gapicJob(`${RUN}-gapic-ok`, 'echo hi from gapic'),
  });
  assert.match(job.name, NAME_RE);
  assert.ok(['JOB_STATE_QUEUED', 'JOB_STATE_PENDING'].includes(job.state), `state: ${job.state}`);
  assert.equal(job.displayName, `${RUN}-gapic-ok`);
  assertGapicTimestamp(job.createTime, 'createTime');
  assertGapicTimestamp(job.updateTime, 'updateTime');
  const pool = job.jobSpec.workerPoolSpecs[0];
  assert.equal(pool.replicaCount, '1');
  assert.equal(pool.machineSpec.machineType, 'n1-standard-4');
  assert.equal(pool.containerSpec.imageUri, IMAGE);
  assert.deepEqual(pool.containerSpec.command, ['sh', '-c', 'echo hi from gapic']);
  assert.deepEqual(job.labels, { suite: 'clients' });
  gx.ok = job.name;
});

test('gapic: getCustomJob polls to JOB_STATE_SUCCEEDED', async () => {
  assert.ok(gx.ok, 'create failed');
  const job = await poll('gapic job SUCCEEDED',
    async () => (await gapic.getCustomJob({ name: gx.ok }))[0],
    (j) => ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED'].includes(j.state));
  assert.equal(job.state, 'JOB_STATE_SUCCEEDED', JSON.stringify(job.error));
  assertGapicTimestamp(job.createTime, 'createTime');
  assertGapicTimestamp(job.endTime, 'endTime');
});

test('gapic: the server answers enums as numbers for $alt=json;enum-encoding=int', async () => {
  // What the GAPIC client asks for on the wire (it decodes either form to names, so check raw).
  assert.ok(gx.ok, 'create failed');
  const url = new URL(`/v1/${gx.ok}`, base);
  url.search = '$alt=json%3Benum-encoding=int';
  const asInt = await (await fetch(url, { headers: { authorization: 'Bearer test-token' } })).json();
  assert.equal(asInt.state, 4, `state with enum-encoding=int: ${JSON.stringify(asInt.state)}`);
  const plain = await (await fetch(new URL(`/v1/${gx.ok}`, base),
    { headers: { authorization: 'Bearer test-token' } })).json();
  assert.equal(plain.state, 'JOB_STATE_SUCCEEDED');
});

test('gapic: listCustomJobs (autoPaginate) includes the job', async () => {
  assert.ok(gx.ok, 'create failed');
  const [jobs] = await gapic.listCustomJobs({ parent: PARENT });
  const names = jobs.map((j) => j.name);
  assert.ok(names.includes(gx.ok), `${gx.ok} not in ${names}`);
  for (const j of jobs) {
    assert.match(j.name, NAME_RE);
    assert.notEqual(j.state, 'JOB_STATE_UNSPECIFIED', `${j.name} state decoded as UNSPECIFIED`);
  }
  // And the lazy iterator with a small page size sees the same set.
  const lazy = [];
  const iter = gapic.listCustomJobsAsync({ parent: PARENT, pageSize: 1 }, { autoPaginate: false });
  for await (const j of iter) lazy.push(j.name);
  assert.deepEqual([...lazy].sort(), [...names].sort());
});

test('gapic: cancelCustomJob on a sleeping job resolves', async () => {
  const [created] = await gapic.createCustomJob({
    parent: PARENT, customJob: gapicJob(`${RUN}-gapic-sleep`, 'sleep 1000'),
  });
  const name = created.name;
  await poll('gapic sleeper running', async () => (await gapic.getCustomJob({ name }))[0],
    (j) => j.state !== 'JOB_STATE_QUEUED' && j.state !== 'JOB_STATE_PENDING');
  const [empty] = await gapic.cancelCustomJob({ name }); // "Received null response" if body empty
  assert.deepEqual({ ...empty }, {});
  const [now] = await gapic.getCustomJob({ name });
  assert.ok(['JOB_STATE_CANCELLING', 'JOB_STATE_CANCELLED'].includes(now.state), now.state);
  const done = await poll('gapic sleeper CANCELLED', async () => (await gapic.getCustomJob({ name }))[0],
    (j) => j.state !== 'JOB_STATE_CANCELLING' && j.state !== 'JOB_STATE_RUNNING',
    { timeoutMs: 60_000 });
  assert.equal(done.state, 'JOB_STATE_CANCELLED');
  assert.equal(done.error?.code, 1, JSON.stringify(done.error));
  gx.cancelled = name;
});

test('gapic: deleteCustomJob on a finished job; operation.promise() resolves', async () => {
  assert.ok(gx.ok, 'create failed');
  const [operation] = await gapic.deleteCustomJob({ name: gx.ok });
  assert.match(operation.name, OP_RE);
  // done: false makes promise() poll GET /ui/{name} (docs/contracts/client-wire.md section 2).
  console.log(`      delete answered ${operation.name}, done: ${operation.done}`);
  const [response, metadata, raw] = await operation.promise();
  assert.deepEqual({ ...response }, {});
  assert.equal(raw.done, true);
  void metadata;
  await assert.rejects(gapic.getCustomJob({ name: gx.ok }),
    (err) => { assert.equal(err.code, 404, describeErr(err)); return true; });
  // checkDeleteCustomJobProgress polls the same operation by name (GET /ui/...).
  const again = await gapic.checkDeleteCustomJobProgress(operation.name);
  assert.equal(again.done, true);
});

test('gapic: deleteCustomJob of the cancelled job; operation.promise() resolves', async () => {
  assert.ok(gx.cancelled, 'cancel test failed');
  const [operation] = await gapic.deleteCustomJob({ name: gx.cancelled });
  await operation.promise();
});

test('gapic: getCustomJob of a missing numeric id rejects with 404', async () => {
  await assert.rejects(gapic.getCustomJob({ name: `${PARENT}/customJobs/9123456789012345678` }),
    (err) => {
      assert.equal(err.code, 404, describeErr(err));
      assert.match(err.message, /NOT_FOUND/);
      return true;
    });
});

test('gapic: createCustomJob without containerSpec.imageUri rejects 400 naming the field', async () => {
  await assert.rejects(
    gapic.createCustomJob({
      parent: PARENT,
      customJob: gapicJob(`${RUN}-gapic-bad`, null, { command: ['sh', '-c', 'true'] }),
    }),
    (err) => {
      assert.equal(err.code, 400, describeErr(err));
      assert.match(err.message,
        /worker_?[pP]ool_?[sS]pecs\[0\]\.container_?[sS]pec\.image_?[uU]ri/, err.message);
      assert.match(err.message, /INVALID_ARGUMENT/);
      return true;
    });
});

// ------------------------------------------------ @google-cloud/storage
// The Cloud Storage client as training code uses it, pointed at the daemon the
// documented way (STORAGE_EMULATOR_HOST); it verifies CRC32C on every transfer.
process.env.STORAGE_EMULATOR_HOST = rootUrl.replace(/\/$/, '');
const { Storage } = await import('@google-cloud/storage');
const gcs = new Storage({ projectId: PROJECT });
const BUCKET = `clients-${RUN}`;

test('storage: bucket, resumable and multipart uploads, download, list, delete', async () => {
  await gcs.createBucket(BUCKET);
  const bucket = gcs.bucket(BUCKET);
  const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
  await bucket.file('dir/resumable.bin').save(big);                       // resumable (default)
  await bucket.file('dir/small.txt').save('hello storage', { resumable: false });  // multipart
  const [back] = await bucket.file('dir/resumable.bin').download();
  assert.ok(back.equals(big), 'downloaded bytes differ');
  const [text] = await bucket.file('dir/small.txt').download();
  assert.equal(text.toString(), 'hello storage');
  const [files] = await bucket.getFiles({ prefix: 'dir/' });
  assert.deepEqual(files.map((f) => f.name).sort(), ['dir/resumable.bin', 'dir/small.txt']);
  const [meta] = await bucket.file('dir/small.txt').getMetadata();
  assert.equal(meta.size, '13');
  assert.ok(meta.crc32c && meta.md5Hash, JSON.stringify(meta));
  await bucket.file('dir/small.txt').delete();
  const [exists] = await bucket.file('dir/small.txt').exists();
  assert.equal(exists, false);
});

// ---------------------------------------------------------------- run
let passed = 0;
let failed = 0;
const started = Date.now();
for (const t of tests) {
  if (FILTER && !t.name.includes(FILTER)) continue;
  const t0 = Date.now();
  try {
    await t.fn();
    passed++;
    console.log(`ok    ${t.name} (${Date.now() - t0} ms)`);
  } catch (err) {
    failed++;
    console.log(`FAIL  ${t.name} (${Date.now() - t0} ms)\n${describeErr(err).replace(/^/gm, '      ')}`);
  }
}
await gapic.close().catch(() => {});
if (escapes.length > 0) {
  failed++;
  console.log(`FAIL  no network access outside ${base.host}: blocked ${escapes.join(', ')}`);
}
console.log(`${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
process.exit(failed === 0 ? 0 : 1);
