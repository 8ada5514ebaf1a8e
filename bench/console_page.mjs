// bench/console's browser half: Debian's chromium through playwright-core (the console
// tests' copy) against a daemon whose store bench/console filled. Prints one JSON line:
// milliseconds to the first render of the jobs list and of the long log's job page,
// to each *Earlier lines* page, and the page's answer to a call while it holds them.
//
// usage: node bench/console_page.mjs BASE JOB_ID RUNS
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { chromium } = createRequire(`${root}/tests/console/package.json`)('playwright-core');
const [base, job, runs] = [process.argv[2], process.argv[3], Number(process.argv[4] || 5)];

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless=new'] });
const page = await browser.newPage();
const out = { list_ms: [], job_ms: [], earlier_ms: [], responsive_ms: [] };
const since = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

for (let i = 0; i < runs; i++) {
  await page.goto('about:blank');
  let t0 = process.hrtime.bigint();
  await page.goto(`${base}/console/#/jobs?project=bench&location=local`);
  await page.locator('#jobs tbody tr').first().waitFor();
  await page.locator('#jobs-status', { hasText: 'jobs, newest first' }).waitFor();
  out.list_ms.push(since(t0));

  await page.goto('about:blank');
  t0 = process.hrtime.bigint();
  await page.goto(`${base}/console/#/job/customJobs/bench/local/${job}`);
  await page.locator('#log div').last().waitFor();
  await page.locator('#job-state').waitFor();
  out.job_ms.push(since(t0));
  for (let p = 0; p < 3 && await page.locator('#log-earlier').isVisible(); p++) {
    const rows = await page.locator('#log div').count();
    t0 = process.hrtime.bigint();
    await page.locator('#log-earlier').click();
    await page.waitForFunction((n) => document.querySelectorAll('#log div').length > n, rows);
    out.earlier_ms.push(since(t0));
  }
  t0 = process.hrtime.bigint();
  await page.evaluate(() => document.querySelectorAll('#log div').length);
  out.responsive_ms.push(since(t0));
}
await browser.close();
console.log(JSON.stringify(out));
