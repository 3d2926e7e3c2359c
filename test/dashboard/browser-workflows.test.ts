import { afterAll, describe, expect } from 'vitest';
import { RunsResponse, WorkflowsResponse } from '../../api/routes/workflows.schemas.js';
import { fireRun } from '../../src/workflows/runs.service.js';
import { resolveSchedule, upcomingRuns } from '../../src/workflows/schedule.js';
import { axeViolations, type Browser, launchChromium, screenshot, serveApp, signedInPage } from '../helpers/browser.js';
import { type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';

/**
 * The workflows page in Debian's Chromium: a schedule typed in plain words is read by the server while it is
 * typed, its next five runs shown before saving (the workflows service's own reading); the workflow is created,
 * a run's per-step outcomes shown, then paused and resumed. axe-core finds nothing serious; no other host is asked.
 */

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let ana: SignedInPerson;
it.override('options', {
  env: { DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1', WORKFLOW_POLL_MS: '50' },
  pools: ['agent-turns', 'workflow-runs'],
});
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  ana = await signedIn(env, { name: 'Ana Lima', email: 'ana@workflows.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe('the workflows page in headless Chromium', () => {
  it('shows the next five runs before saving, creates the workflow, shows a run step by step, pauses and resumes it', {
    timeout: 120_000,
  }, async ({ env }) => {
    // The preview route answers what the service's own parser reads, with unreadable words as a sentence.
    const preview = await ana.request('get', '/dashboard/api/workflows/schedule-preview?text=every%20weekday%20at%209am').expect(200);
    const reading = resolveSchedule('every weekday at 9am', 'UTC');
    expect(reading.ok).toBe(true);
    expect(preview.body).toMatchObject({ echo: reading.ok ? reading.echo : null, error: null, timeZone: 'UTC' });
    expect(preview.body.nextRuns).toHaveLength(5);
    if (reading.ok) expect(preview.body.nextRuns[0]).toBe(upcomingRuns(reading.schedule, 1)[0]);
    for (const t of preview.body.nextRuns as number[]) {
      const d = new Date(t);
      expect([d.getUTCHours(), d.getUTCMinutes()]).toEqual([9, 0]);
      expect([0, 6]).not.toContain(d.getUTCDay());
    }
    const unread = await ana.request('get', '/dashboard/api/workflows/schedule-preview?text=whenever%20it%20rains').expect(200);
    expect(unread.body).toMatchObject({ echo: null, nextRuns: [], error: expect.stringContaining('could not understand') });
    const blank = await ana.request('get', '/dashboard/api/workflows/schedule-preview?text=%20').expect(400);
    expect(blank.body.error).toMatch(/text/);

    const { context, page, watch } = await signedInPage(browser, served.base, ana);
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Workflows' }).click();
      await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
      await page.getByText('No workflows yet.').waitFor();

      await page.getByLabel('Name').fill('Morning check');
      await page.getByLabel('Schedule').fill('whenever it rains');
      await page.getByText(/Not understood: could not understand/).waitFor();
      await page.getByLabel('Schedule').fill('every weekday at 9am');
      const next = page.getByRole('list', { name: 'The next five runs (UTC):' });
      await next.waitFor();
      expect(await next.getByRole('listitem').count()).toBe(5);
      await page.getByText(`Read as: ${preview.body.echo}`).waitFor();
      await page.getByLabel('Steps, one a line').fill('What is waiting\nSay hello');
      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
      await page.getByRole('button', { name: 'Create workflow' }).click();
      await page.getByText('“Morning check” is live.').waitFor();

      const listed = WorkflowsResponse.parse((await ana.request('get', '/dashboard/api/v1/workflows').expect(200)).body).workflows;
      expect(listed).toHaveLength(1);
      const w = listed[0]!;
      expect(w).toMatchObject({
        name: 'Morning check',
        status: 'live',
        scheduleText: 'every weekday at 9am',
        nextRunAt: preview.body.nextRuns[0],
      });
      expect(w.steps.map((s) => s.title)).toEqual(['What is waiting', 'Say hello']);

      // A run, fired as the job scheduler fires it, through the agent's own turns.
      const run = await fireRun(env.deps, w.workflowId, 'job-browser', Date.now(), {
        ...env.config.workflows,
        stepTimeoutMs: 20_000,
        pollMs: 50,
      });
      expect(run).not.toBeNull();
      const runs = RunsResponse.parse((await ana.request('get', `/dashboard/api/v1/workflows/${w.workflowId}/runs`).expect(200)).body).runs;
      expect(runs.map((r) => r.steps.map((s) => s.outcome))).toEqual([['done', 'done']]);
      await page.getByRole('button', { name: 'Runs of Morning check' }).click();
      const runList = page.locator('.delivery');
      await runList.first().waitFor();
      expect(await runList.count()).toBe(1);
      await runList.getByText('What is waiting: Done').waitFor();
      await runList.getByText('Say hello: Done').waitFor();
      // The picture shows a second schedule read before saving beside the first workflow's run.
      await page.getByLabel('Schedule').fill('Mondays at 8:30');
      await page.getByText(/Read as: At 08:30, only on Monday/).waitFor();
      expect(await next.getByRole('listitem').count()).toBe(5);
      await screenshot(page, 'dashboard-workflows');

      await page.getByRole('button', { name: 'Pause Morning check' }).click();
      await page.getByText('“Morning check” is paused; it will not run until resumed.').waitFor();
      const workflow = page.locator('li.workflow');
      await workflow.getByText('Paused', { exact: true }).waitFor();
      const paused = WorkflowsResponse.parse((await ana.request('get', '/dashboard/api/v1/workflows').expect(200)).body).workflows[0]!;
      expect(paused).toMatchObject({ status: 'paused', nextRunAt: null });

      await page.getByRole('button', { name: 'Resume Morning check' }).click();
      await page.getByText('“Morning check” is live again.').waitFor();
      await workflow.getByText('Live', { exact: true }).waitFor();
      const resumed = WorkflowsResponse.parse((await ana.request('get', '/dashboard/api/v1/workflows').expect(200)).body).workflows[0]!;
      expect(resumed.status).toBe('live');
      expect(resumed.nextRunAt).toEqual(expect.any(Number));
      const again = await axeViolations(page);
      expect(again, JSON.stringify(again, null, 2)).toEqual([]);

      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('edits a workflow (name, schedule with its next five runs, description, steps, status) and deletes another after asking', {
    timeout: 120_000,
  }, async () => {
    const create = async (name: string, scheduleText: string, steps: string[]) =>
      (
        await ana
          .request('post', '/dashboard/api/v1/workflows', { name, scheduleText, steps: steps.map((title) => ({ title })) })
          .expect(201)
      ).body.workflow as { workflowId: string; steps: { id: string; title: string }[] };
    const digest = await create('Nightly digest', 'every day at 6pm', ['Read the replies', 'Write the digest']);
    const old = await create('Old report', 'every Friday at 4pm', ['Count the sends']);
    const mondays = (await ana.request('get', '/dashboard/api/workflows/schedule-preview?text=Mondays%20at%208%3A30').expect(200)).body;

    const { context, page, watch } = await signedInPage(browser, served.base, ana);
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Workflows' }).click();
      await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
      const row = (name: string) => page.locator('li.workflow').filter({ has: page.getByRole('heading', { name, exact: true }) });
      await row('Nightly digest').waitFor();

      await page.getByRole('button', { name: 'Edit Nightly digest' }).click();
      const form = page.getByRole('form', { name: 'Edit Nightly digest' });
      await form.getByLabel('Name').fill('Monday digest');
      await form.getByLabel('Schedule').fill('Mondays at 8:30');
      const next = form.getByRole('list', { name: /The next five runs/ });
      await form.getByText(`Read as: ${mondays.echo}`).waitFor();
      expect(await next.getByRole('listitem').count()).toBe(5);
      await form.getByLabel('Description (optional)').fill('What came in over the weekend');
      await form.getByLabel('Steps, one a line').fill('Read the replies\nList the meetings booked');
      await form.getByLabel('Status').selectOption('live');
      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
      await screenshot(page, 'dashboard-workflows-edit');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText(/^“Monday digest” is saved; next run /).waitFor();
      await form.waitFor({ state: 'detached' });
      await row('Monday digest')
        .getByText(/“Mondays at 8:30”/)
        .waitFor();

      const listed = WorkflowsResponse.parse((await ana.request('get', '/dashboard/api/v1/workflows').expect(200)).body).workflows;
      const edited = listed.find((w) => w.workflowId === digest.workflowId)!;
      expect(edited).toMatchObject({
        name: 'Monday digest',
        description: 'What came in over the weekend',
        scheduleText: 'Mondays at 8:30',
        status: 'live',
        nextRunAt: mondays.nextRuns[0],
      });
      // The step kept word for word keeps its id (and its run history); the changed line is a new step.
      expect(edited.steps.map((s) => s.title)).toEqual(['Read the replies', 'List the meetings booked']);
      expect(edited.steps[0]!.id).toBe(digest.steps[0]!.id);
      expect(digest.steps.map((s) => s.id)).not.toContain(edited.steps[1]!.id);

      // Delete asks first, in place: Escape steps back; the second time it is deleted.
      await row('Old report').getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('Delete “Old report”? It stops running and its runs are no longer shown.').waitFor();
      await page.keyboard.press('Escape');
      await row('Old report').getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: 'Delete “Old report”' }).click();
      await page.getByText('“Old report” is deleted.').waitFor();
      await row('Old report').waitFor({ state: 'detached' });
      const after = WorkflowsResponse.parse((await ana.request('get', '/dashboard/api/v1/workflows').expect(200)).body).workflows;
      expect(after.map((w) => w.workflowId)).not.toContain(old.workflowId);
      await ana.request('get', `/dashboard/api/v1/workflows/${old.workflowId}/runs`).expect(404);

      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
