import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { startServer, waitForJob, type TestServer } from '../http/harness.js';
import { launchBrowser, openAs, type BrowserSession, type WatchedPage } from './browser.js';

/**
 * Issue 36's flow editor, in Chromium against the real local service: a two-step flow built from
 * the starting flow by adding an approval step on the graph, edited in the step panel and in the
 * YAML (each following the other), checked by the API as it changes (an error pointing at its
 * step), saved as a new version and run until the approval step, then approved on the run page.
 * No console error, CSP violation or external request on the way. Screenshots at 1280 and 390 px
 * go to test/browser/screenshots (git-ignored).
 */

let s: TestServer;
let browser: BrowserSession;
const opened: WatchedPage[] = [];
const SHOTS = join(import.meta.dirname, 'screenshots');
const ws = () => `/api/w/${s.workspace}`;
const HOSTILE = '<img src=x onerror=alert(1)>';

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
  expect((await s.post('/api/users/create', { username: 'ada', email: 'ada@example.com', password: 'ada-password' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'ada', role: 'developer' })).status).toBe(201);
});

afterEach(async () => {
  const problems = opened.flatMap((w) => w.problems.map((p) => `${w.page.url()}: ${p}`));
  await Promise.all(opened.splice(0).map((w) => w.page.close().catch(() => undefined)));
  expect(problems, 'console errors, CSP violations or external requests').toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** Who the browser's shared cookie jar is signed in as: another person signs in afresh. */
let signedInAs: string | null = null;

function pageAs(username: string, path: string): Promise<Page> {
  return openAs(browser, opened, username, s.url + path, async (page) => {
    if (signedInAs !== username) await page.context().clearCookies();
    signedInAs = username;
  });
}

async function screenshots(page: Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
    if (width === 390) await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

const yamlText = (page: Page) => page.locator('.cm-content').innerText();
const graphSteps = (page: Page) => page.locator('#graph [data-step]').evaluateAll((nodes) => nodes.map((n) => `${n.getAttribute('data-step')}=${n.querySelector('title')?.textContent}`));
const noProblem = (page: Page) => page.locator('#problems').getByText("The API's check finds no problem.").waitFor();

describe('the flow editor', { timeout: 120_000 }, () => {
  it('builds a two-step flow with an approval step, checks it by step, saves it and runs it', async () => {
    const home = await pageAs('ada', `/w/${s.workspace}`);
    await home.getByRole('link', { name: 'New flow' }).click();
    await home.waitForURL(/\/flows\/new$/);
    const page = home;
    await page.locator('.cm-editor').waitFor();
    await expect(page.locator('#yaml-text').isHidden()).resolves.toBe(true);
    await noProblem(page);
    expect(await graphSteps(page)).toEqual(['value.modules.0=greet']);
    // A test run runs the flow in the editor, unsaved, with the form its schema makes.
    await expect(page.getByLabel(/^name/).inputValue()).resolves.toBe('world');
    await page.getByLabel('Path').fill('u/ada/two_step');
    await page.getByLabel(/^name/).fill('Ada');
    await page.getByRole('button', { name: 'Test run' }).click();
    await page.locator('#run-status.s-success').waitFor();
    await expect(page.locator('#run-result').innerText()).resolves.toContain('"hello Ada"');
    // Its run page shows it, and offers no re-run: what it ran was never saved.
    const testRunPage = await pageAs('ada', (await page.locator('#run-link a').getAttribute('href'))!);
    await testRunPage.locator('#status.s-success').waitFor();
    await expect(testRunPage.locator('#rerun').count()).resolves.toBe(0);
    await testRunPage.close();

    // The graph adds the approval step; the YAML follows, and a comment typed into it stays.
    const editor = page.getByRole('textbox', { name: 'Flow YAML' });
    await editor.click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.insertText('# built in the browser\n');
    await page.getByLabel('New step', { exact: true }).selectOption({ label: 'Approval step' });
    await page.getByRole('button', { name: 'Add at the end' }).click();
    await page.locator('#step-heading').getByText('Step approval_1').waitFor();
    expect(await graphSteps(page)).toEqual(['value.modules.0=greet', 'value.modules.1=approval_1']);
    await expect(yamlText(page)).resolves.toMatch(/^# built in the browser\n[\s\S]*- id: approval_1[\s\S]*suspend:\n\s+required_events: 1/);

    // The panel: a bad id is reported by the API's check at its step, in the graph and the list.
    await page.getByLabel('Id', { exact: true }).fill('Approve-Me');
    await page.getByLabel('Id', { exact: true }).press('Tab');
    const problem = page.locator('#problems li');
    await expect.poll(() => page.locator('#problems').innerText()).toMatch(/Step Approve-Me \(value\.modules\.1\): value\.modules\.1\.id: lowercase letters/);
    await page.locator('#graph .node.invalid[data-step="value.modules.1"]').waitFor();
    await problem.getByRole('button', { name: 'Show in the YAML' }).click();
    await expect(page.locator('.cm-activeLine').innerText()).resolves.toContain('- id: Approve-Me');
    await page.getByLabel('Id', { exact: true }).fill('approve');
    await page.getByLabel('Summary', { exact: true }).fill(HOSTILE);
    await page.getByLabel('Summary', { exact: true }).press('Tab');
    await noProblem(page);
    // Hostile text is text: in the graph's label and the panel, never markup.
    await expect.poll(() => graphSteps(page)).toContain(`value.modules.1=approve: ${HOSTILE}`);
    await expect(page.locator('#graph img, #step-panel img').count()).resolves.toBe(0);

    // The YAML edits the graph: the first step's id changed in the text is the graph's. The API's
    // check of the edit is held until the keyboard is on that step: its answer redraws the graph,
    // and the step keeps the keyboard.
    let releaseCheck!: () => void;
    const checkHeld = new Promise<void>((resolve) => (releaseCheck = resolve));
    await page.route('**/flows/validate', async (route) => {
      await checkHeld;
      await route.continue();
    });
    const yaml = await yamlText(page);
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(yaml.replace('- id: greet', '- id: hello'));
    await expect.poll(() => graphSteps(page)).toContain('value.modules.0=hello');
    const firstStep = page.locator('#graph [data-step="value.modules.0"]');
    await firstStep.focus();
    await firstStep.evaluate((node) => node.setAttribute('data-drawn-before', ''));
    await page.evaluate(() => ((window as unknown as { listed?: Element | null }).listed = document.querySelector('#problems')?.firstElementChild));
    releaseCheck();
    // The check's answer is listed and the graph redrawn: the same steps, so the same node, still focused.
    await expect.poll(() => page.evaluate(() => document.querySelector('#problems')?.firstElementChild !== (window as unknown as { listed: Element }).listed)).toBe(true);
    await expect(page.locator('#graph [data-drawn-before]').getAttribute('data-step')).resolves.toBe('value.modules.0');
    await page.unroute('**/flows/validate');
    await expect(page.evaluate(() => document.activeElement?.getAttribute('data-step'))).resolves.toBe('value.modules.0');
    await page.keyboard.press('Enter');
    await expect(page.locator('#step-heading').innerText()).resolves.toBe('Step hello');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('step-heading');
    await noProblem(page);
    // The selected step alone: a flow of that one step, with the form's inputs; the approval after it never comes.
    const before = await page.locator('#run-link a').getAttribute('href');
    await page.getByRole('button', { name: 'Test the selected step' }).click();
    await expect.poll(() => page.locator('#run-link a').getAttribute('href')).not.toBe(before);
    await page.locator('#run-status.s-success').waitFor();
    await expect(page.locator('#run-result').innerText()).resolves.toContain('"hello Ada"');
    const stepRun = await (await s.fetch(`${ws()}/jobs_u/get/${(await page.locator('#run-link a').getAttribute('href'))!.split('/').pop()}`)).json();
    expect(stepRun.flow_status.modules).toEqual(['hello']);
    await screenshots(page, 'flow-editor-new');

    expect((await s.fetch(`${ws()}/flows/get/u/ada/two_step`)).status).toBe(404);
    await page.getByLabel('What changed (optional)').fill('first version');
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.waitForURL(/\/flows\/edit\/u\/ada\/two_step\?saved=\d+$/);
    const flow = await (await s.fetch(`${ws()}/flows/get/u/ada/two_step`)).json();
    expect(flow.value.modules.map((m: { id: string }) => m.id)).toEqual(['hello', 'approve']);
    expect(flow.value.modules[1]).toMatchObject({ summary: HOSTILE, suspend: { required_events: 1, timeout: 86400 } });
    expect(flow).toMatchObject({ deployment_message: 'first version', schema: { properties: { name: { type: 'string' } } } });
    await expect(page.locator('#saved').innerText()).resolves.toContain(String(flow.id));
    expect(await graphSteps(page)).toEqual(['value.modules.0=hello', `value.modules.1=approve: ${HOSTILE}`]);

    // Run the saved version: it waits at the approval step; approved on its run page, it ends.
    await page.getByLabel(/^name/).fill('Ada');
    await page.getByRole('button', { name: 'Run the saved version' }).click();
    await page.locator('#run-status.s-suspended').waitFor();
    await page.getByRole('link', { name: 'run page' }).click();
    await expect(page.locator('#rerun').count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator('form p[role=status]').getByText(/^Approved/).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const job = await waitForJob(s, id, 45_000);
    expect(job, JSON.stringify(job.result)).toMatchObject({ status: 'success', script_path: 'u/ada/two_step' });
  });

  it('adds steps inside a loop and a branch, reorders and removes them from the graph and the panel, and saves the shape', async () => {
    const page = await pageAs('ada', `/w/${s.workspace}/flows/new`);
    await page.locator('.cm-editor').waitFor();
    await noProblem(page);
    const addTo = async (button: string, select: string, kind: string) => {
      await page.locator(`#${select}`).selectOption({ label: kind });
      await page.getByRole('button', { name: button, exact: true }).click();
    };
    await addTo('Add at the end', 'add-kind', 'For loop');
    await page.locator('#step-heading').getByText('Step loop_1').waitFor();
    await addTo('Add inside the loop', 'inside-kind-loop', 'Inline Python');
    await page.locator('#step-heading').getByText('Step step_1').waitFor();
    await page.locator('#graph [data-step="value.modules.1"]').click();
    await addTo('Add after', 'after-kind', 'Branch (first match)');
    await page.locator('#step-heading').getByText('Step branch_1').waitFor();
    await addTo('Add to branch 1', 'inside-kind-branch-0', 'Inline TypeScript');
    await page.locator('#graph [data-step="value.modules.2"]').click();
    await addTo('Add to the default branch', 'inside-kind-default', 'ConsentGate');
    await page.locator('#step-heading').getByText('Step gate_1').waitFor();
    await noProblem(page);
    expect(await graphSteps(page)).toEqual([
      'value.modules.0=greet',
      'value.modules.1=loop_1',
      'value.modules.1.value.modules.0=step_1',
      'value.modules.2=branch_1',
      'value.modules.2.value.branches.0.modules.0=step_2',
      'value.modules.2.value.default.0=gate_1',
    ]);
    // Steps added to an empty list are written as blocks, like the rest of the YAML, not inline.
    await expect(yamlText(page)).resolves.toMatch(/\n\s+modules:\n\s+- id: step_2\n/);
    await expect(yamlText(page)).resolves.toMatch(/\n\s+default:\n\s+- id: gate_1\n/);
    const topIds = async () => ((parse(await yamlText(page)) as { value: { modules: { id: string }[] } }).value.modules).map((m) => m.id);

    // On the graph with the keyboard: Alt+Up moves the branch above the loop and keeps the focus on it.
    await page.locator('#graph [data-step="value.modules.2"]').focus();
    await page.keyboard.press('Alt+ArrowUp');
    await expect.poll(topIds).toEqual(['greet', 'branch_1', 'loop_1']);
    await expect(page.evaluate(() => document.activeElement?.getAttribute('data-step'))).resolves.toBe('value.modules.1');
    await expect(page.locator('#step-heading').innerText()).resolves.toBe('Step branch_1');
    // Delete removes the focused step; the focus goes to the step now in its place.
    await page.locator('#graph [data-step="value.modules.0"]').focus();
    await page.keyboard.press('Delete');
    await expect.poll(topIds).toEqual(['branch_1', 'loop_1']);
    await expect(page.evaluate(() => document.activeElement?.getAttribute('data-step'))).resolves.toBe('value.modules.0');
    // The panel's buttons do the same.
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Move down' }).click();
    await expect.poll(topIds).toEqual(['loop_1', 'branch_1']);
    await expect(page.getByRole('button', { name: 'Move down' }).isDisabled()).resolves.toBe(true);
    await page.locator('#graph [data-step="value.modules.0.value.modules.0"]').click();
    await page.getByRole('button', { name: 'Remove this step' }).click();
    await expect.poll(async () => (await graphSteps(page)).length).toBe(4);
    await noProblem(page);
    await screenshots(page, 'flow-editor-shapes');

    await page.getByLabel('Path').fill('u/ada/shapes');
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.waitForURL(/\/flows\/edit\/u\/ada\/shapes\?saved=\d+$/);
    const flow = await (await s.fetch(`${ws()}/flows/get/u/ada/shapes`)).json();
    expect(flow.value.modules).toMatchObject([
      { id: 'loop_1', value: { type: 'forloopflow', modules: [] } },
      { id: 'branch_1', value: { type: 'branchone', branches: [{ expr: 'false', modules: [{ id: 'step_2' }] }], default: [{ id: 'gate_1', value: { type: 'consentgate' } }] } },
    ]);
  });

  it("shows an approval step's approver groups when the step is opened again, as a list or in the static form", async () => {
    const page = await pageAs('ada', `/w/${s.workspace}/flows/new`);
    await page.locator('.cm-editor').waitFor();
    await noProblem(page);
    await page.getByLabel('New step', { exact: true }).selectOption({ label: 'Approval step' });
    await page.getByRole('button', { name: 'Add at the end' }).click();
    await page.locator('#step-heading').getByText('Step approval_1').waitFor();
    const groups = page.getByLabel('Approver groups (comma-separated)');
    await groups.fill('finance, legal');
    await groups.press('Tab');
    await expect.poll(async () => (parse(await yamlText(page)) as { value: { modules: { suspend?: unknown }[] } }).value.modules[1]!.suspend).toMatchObject({ user_groups_required: ['finance', 'legal'] });
    const reopen = async () => {
      await page.locator('#graph [data-step="value.modules.0"]').click();
      await page.locator('#step-heading').getByText('Step greet').waitFor();
      await page.locator('#graph [data-step="value.modules.1"]').click();
      await page.locator('#step-heading').getByText('Step approval_1').waitFor();
    };
    await reopen();
    await expect(groups.inputValue()).resolves.toBe('finance, legal');

    // The same setting in its static form, typed into the YAML.
    const yaml = await yamlText(page);
    const editor = page.getByRole('textbox', { name: 'Flow YAML' });
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(yaml.replace(/user_groups_required:\n(\s+- \w+\n)+/, 'user_groups_required: { type: static, value: [ops] }\n'));
    // The panel follows the YAML once it is read, and shows the same on opening the step again.
    await expect.poll(() => groups.inputValue()).toBe('ops');
    await reopen();
    await expect(groups.inputValue()).resolves.toBe('ops');
  });

  it("keeps the graph's step nodes while the graph stays the same: a click during a redraw is not lost", async () => {
    const page = await pageAs('ada', `/w/${s.workspace}/flows/new`);
    await page.locator('.cm-editor').waitFor();
    await noProblem(page);
    // The node a person is pressing on, and what the check last listed.
    await page.evaluate(() => {
      const probe = window as unknown as { stepNode?: Element | null; listed?: Element | null };
      probe.stepNode = document.querySelector('#graph [data-step="value.modules.0"]');
      probe.listed = document.querySelector('#problems')?.firstElementChild;
    });
    const stillThere = () => page.evaluate(() => (window as unknown as { stepNode: Element }).stepNode.isConnected);

    // Selecting a step marks it on the same node.
    await page.locator('#graph [data-step="value.modules.0"]').click();
    await page.locator('#step-heading').getByText('Step greet').waitFor();
    await expect(stillThere()).resolves.toBe(true);
    await expect(page.evaluate(() => (window as unknown as { stepNode: Element }).stepNode.classList.contains('selected'))).resolves.toBe(true);

    // A YAML edit that leaves the steps as they are, and the API's check answering it, redraw nothing.
    const editor = page.getByRole('textbox', { name: 'Flow YAML' });
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText('\n# a comment the graph does not show\n');
    await expect.poll(() => page.evaluate(() => document.querySelector('#problems')?.firstElementChild !== (window as unknown as { listed: Element }).listed)).toBe(true);
    await expect(stillThere()).resolves.toBe(true);
  });

  it("copies a saved flow's webhook as curl, with the token's placeholder", async () => {
    const flow = { path: 'u/ada/copied', summary: '', description: '', value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1; }', input_transforms: {} } }] } };
    expect((await s.post(`${ws()}/flows/create`, flow)).status).toBe(201);
    const page = await pageAs('ada', `/w/${s.workspace}/flows/edit/u/ada/copied`);
    await page.locator('.cm-editor').waitFor();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
    const copy = page.locator('button.copy').first();
    await copy.click();
    await expect.poll(() => copy.innerText()).toBe('Copied');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain(`${s.url}/api/w/${s.workspace}/jobs/run/f/u/ada/copied`);
    expect(copied).toContain("-H 'Authorization: Bearer $SVC_TOKEN'");
  });

  it('keeps the YAML in a text box, and says what cannot be done, when the editor bundle does not load', async () => {
    const page = await openAs(browser, opened, 'ada', `${s.url}/w/${s.workspace}/flows/new`, async (tab) => {
      if (signedInAs !== 'ada') await tab.context().clearCookies();
      signedInAs = 'ada';
      // The editor bundle (CodeMirror, yaml, the graph) only: the page's own bundle still loads.
      await tab.route(/\/console\/assets\/flow-editor-[A-Za-z0-9_=-]{12}\.js$/, (route) => route.abort());
    });
    await page.locator('#graph').getByText('The graph could not load: the YAML can still be edited, checked and saved.').waitFor();
    await expect(page.locator('#yaml-text').isVisible()).resolves.toBe(true);
    await expect(page.locator('.cm-editor').count()).resolves.toBe(0);
    await page.getByLabel('Flow YAML').fill('summary: typed by hand\n');
    await expect(page.getByLabel('Flow YAML').inputValue()).resolves.toBe('summary: typed by hand\n');
    await page.getByLabel('Path').fill('u/ada/no_bundle');
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.locator('#save-message').getByText('Not saved: the editor could not load').waitFor();
    expect((await s.fetch(`${ws()}/flows/get/u/ada/no_bundle`)).status).toBe(404);
    const watched = opened.find((w) => w.page === page)!;
    expect(watched.problems.every((p) => p.includes('flow-editor-') || p.startsWith('console error: Failed to load resource')), watched.problems.join('\n')).toBe(true);
    watched.problems.length = 0;
  });

  it('is for those who may write flows: an operator gets no link and a 403 page', async () => {
    expect((await s.post('/api/users/create', { username: 'opal', email: 'opal@example.com', password: 'opal-password' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'opal', role: 'operator' })).status).toBe(201);
    const page = await pageAs('opal', `/w/${s.workspace}`);
    await expect(page.getByRole('link', { name: 'New flow' }).count()).resolves.toBe(0);
    const res = await page.goto(`${s.url}/w/${s.workspace}/flows/new`);
    expect(res!.status()).toBe(403);
    await expect(page.locator('main').innerText()).resolves.toContain('You may not create flows in this workspace.');
    const watched = opened.find((w) => w.page === page)!;
    expect(watched.problems).toEqual(['console error: Failed to load resource: the server responded with a status of 403 (Forbidden)']);
    watched.problems.length = 0;
  });
});
