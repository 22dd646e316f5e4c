import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createScript, startServer, type TestServer } from '../http/harness.js';
import { launchBrowser, openAs, type BrowserSession, type WatchedPage } from './browser.js';

/**
 * The pages for what a workspace holds, in Chromium against the real local service: an admin
 * creates a schedule, a secret variable, a connection type and a connection, a route, a group from
 * their pages, disables the schedule and replaces the secret; a refusal of the API shows and
 * changes nothing; the secret's value never reaches a page. The admin changes a folder's rights and
 * a member's role and removes people, each page saying what the API answered. An operator, in a
 * browser of their own, sees what their folder rights let them read, no form or button, and not the
 * folder closed to them.
 */

let s: TestServer;
let admin: BrowserSession;
let operator: BrowserSession;
const opened: WatchedPage[] = [];
const ws = () => `/api/w/${s.workspace}`;
const SECRET = 'first-secret-value-7f3a';
const SECRET2 = 'second-secret-value-9c1d';

beforeAll(async () => {
  [s, admin, operator] = await Promise.all([startServer(), launchBrowser(), launchBrowser()]);
  for (const [username, role] of [['ada', 'admin'], ['opal', 'operator']] as const) {
    expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username, role })).status).toBe(201);
  }
  expect((await s.post(`${ws()}/folders/create`, { name: 'pub', extra_perms: { 'u/opal': false } })).status).toBe(201);
  expect((await s.post(`${ws()}/folders/create`, { name: 'hidden' })).status).toBe(201);
  await createScript(s, 'f/pub/echo', 'bash', 'env="$1"\necho "{\\"env\\": \\"$env\\"}"');
  await createScript(s, 'f/hidden/echo', 'bash', 'echo hidden');
  // What the operator must not see, made over the API.
  expect((await s.post(`${ws()}/schedules/create`, { path: 'f/hidden/nightly', schedule: '0 0 3 * * *', script_path: 'f/hidden/echo' })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/hidden/token', value: 'x', is_secret: true })).status).toBe(201);
}, 120_000);

afterEach(async () => {
  // The refusals the first test provokes (a bad cron, a value its type refuses) are logged by
  // Chromium as failed loads; nothing else may be.
  const problems = opened.flatMap((w) => w.problems.filter((p) => !p.includes('status of 400 (Bad Request)')).map((p) => `${w.page.url()}: ${p}`));
  await Promise.all(opened.splice(0).map((w) => w.page.close().catch(() => undefined)));
  expect(problems, 'console errors, CSP violations or external requests').toEqual([]);
});

afterAll(async () => {
  await Promise.all([admin?.close(), operator?.close()]);
  await s?.stop();
});

function pageAs(session: BrowserSession, username: string, path: string): Promise<Page> {
  return openAs(session, opened, username, s.url + path);
}

const SHOTS = join(import.meta.dirname, 'screenshots');

async function screenshots(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Submits a form and waits for the page to come back with what the action did. */
async function submit(page: Page, form: string) {
  await Promise.all([page.waitForEvent('load'), page.locator(`${form} button[type=submit]`).click()]);
  await expect(page.locator('#done').textContent()).resolves.toMatch(/^Done: /);
}

const rowOf = (page: Page, table: string, text: string) => page.getByRole('table', { name: table, exact: true }).locator('tr', { hasText: text });

describe('the workspace pages', { timeout: 90_000 }, () => {
  it('lets an admin create and change schedules, secrets, connections, routes and groups from their pages', async () => {
    const page = await pageAs(admin, 'ada', `/w/${s.workspace}/schedules`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Schedules');
    await page.fill('#new-schedule-path', 'f/pub/morning');
    await page.fill('#new-schedule-schedule', '0 30 6 * * *');
    await page.fill('#new-schedule-script_path', 'f/pub/echo');
    await page.fill('#new-schedule-args', '{"env": "prod"}');
    await submit(page, '#new-schedule');
    const row = rowOf(page, 'Schedules', 'f/pub/morning');
    await expect(row.locator('td').nth(3).textContent()).resolves.toMatch(/06:30:00.*06:30:00.*06:30:00/s);
    await expect(row.textContent()).resolves.toContain('enabled');
    // Disable: one press, the page comes back with the schedule disabled, as the API says.
    await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Disable schedule f/pub/morning' }).click()]);
    await expect(rowOf(page, 'Schedules', 'f/pub/morning').textContent()).resolves.toContain('disabled');
    await screenshots(page, 'schedules');
    const stored = await (await s.fetch(`${ws()}/schedules/get/f/pub/morning`)).json();
    expect(stored).toMatchObject({ enabled: false, args: { env: 'prod' }, schedule: '0 30 6 * * *', timezone: 'UTC' });
    // A bad cron: the API's refusal on the page, nothing stored.
    await page.fill('#new-schedule-path', 'f/pub/broken');
    await page.fill('#new-schedule-schedule', 'every morning');
    await page.fill('#new-schedule-script_path', 'f/pub/echo');
    await page.locator('#new-schedule button[type=submit]').click();
    await page.locator('#message').filter({ hasText: /cron|schedule/i }).waitFor();
    expect((await s.fetch(`${ws()}/schedules/get/f/pub/broken`)).status).toBe(404);

    // A secret: created, listed as write-only, replaced; its value is never in a page.
    await page.goto(`${s.url}/w/${s.workspace}/variables`);
    await page.fill('#new-variable-path', 'f/pub/api_key');
    await page.fill('#new-variable-value', SECRET);
    await submit(page, '#new-variable');
    await expect(rowOf(page, 'Variables', 'f/pub/api_key').textContent()).resolves.toContain('secret, write-only');
    expect(await page.content()).not.toContain(SECRET);
    expect(await (await s.fetch(`${ws()}/variables/get_value/f/pub/api_key`)).json()).toBe(SECRET);
    await rowOf(page, 'Variables', 'f/pub/api_key').getByLabel('New value').fill(SECRET2);
    await Promise.all([page.waitForEvent('load'), rowOf(page, 'Variables', 'f/pub/api_key').getByRole('button', { name: 'Set value' }).click()]);
    expect(await page.content()).not.toContain(SECRET2);
    expect(await (await s.fetch(`${ws()}/variables/get_value/f/pub/api_key`)).json()).toBe(SECRET2);
    await screenshots(page, 'variables');

    // A connection type, then a connection checked against it.
    await page.goto(`${s.url}/w/${s.workspace}/resources`);
    await page.fill('#new-resource-type-name', 'warehouse');
    await page.fill('#new-resource-type-schema', JSON.stringify({ type: 'object', properties: { host: { type: 'string' } }, required: ['host'] }));
    await submit(page, '#new-resource-type');
    await page.fill('#new-resource-path', 'f/pub/wh');
    await page.selectOption('#new-resource-resource_type', 'warehouse');
    await page.fill('#new-resource-value', '{"port": 5432}');
    await page.locator('#new-resource button[type=submit]').click();
    await page.locator('#message').filter({ hasText: /host/ }).waitFor();
    expect((await s.fetch(`${ws()}/resources/get/f/pub/wh`)).status).toBe(404);
    await page.fill('#new-resource-value', '{"host": "db.internal"}');
    await submit(page, '#new-resource');
    await expect(rowOf(page, 'Connections', 'f/pub/wh').textContent()).resolves.toContain('warehouse');
    expect(await (await s.fetch(`${ws()}/resources/get/f/pub/wh`)).json()).toMatchObject({ resource_type: 'warehouse', value: { host: 'db.internal' } });

    // A route, then deleted with the two-press button.
    await page.goto(`${s.url}/w/${s.workspace}/routes`);
    await page.fill('#new-route-path', 'f/pub/hello');
    await page.fill('#new-route-route_path', 'hello/:name');
    await page.fill('#new-route-script_path', 'f/pub/echo');
    await submit(page, '#new-route');
    const route = rowOf(page, 'Routes', 'f/pub/hello');
    await expect(route.textContent()).resolves.toContain('POST hello/:name');
    const remove = route.getByRole('button', { name: 'Delete route f/pub/hello' });
    await remove.click();
    expect(await remove.textContent()).toBe('Confirm: Delete');
    expect((await s.fetch(`${ws()}/http_triggers/get/f/pub/hello`)).status).toBe(200);
    await Promise.all([page.waitForEvent('load'), remove.click()]);
    expect(await page.getByRole('table', { name: 'Routes' }).count()).toBe(0);
    expect((await s.fetch(`${ws()}/http_triggers/get/f/pub/hello`)).status).toBe(404);

    // A group with a member.
    await page.goto(`${s.url}/w/${s.workspace}/groups`);
    await page.fill('#new-group-name', 'oncall');
    await submit(page, '#new-group');
    await rowOf(page, 'Groups', 'oncall').getByLabel('Username').fill('opal');
    await Promise.all([page.waitForEvent('load'), rowOf(page, 'Groups', 'oncall').getByRole('button', { name: 'Add', exact: true }).click()]);
    await expect(rowOf(page, 'Groups', 'oncall').textContent()).resolves.toContain('opal');
    expect((await (await s.fetch(`${ws()}/groups/get/oncall`)).json()).members).toContain('opal');

    await page.goto(`${s.url}/w/${s.workspace}/members`);
    await expect(rowOf(page, 'Members', 'opal').textContent()).resolves.toContain('operator');
  });

  it("lets an admin change a folder's rights, a member's role, and remove people, each saying what the API did", async () => {
    expect((await s.post('/api/users/create', { username: 'tess', email: 'tess@example.com', password: 'tess-password' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'tess', role: 'developer' })).status).toBe(201);
    expect((await s.post(`${ws()}/groups/create`, { name: 'night' })).status).toBe(201);
    expect((await s.post(`${ws()}/groups/adduser/night`, { username: 'tess' })).status).toBe(200);

    const page = await pageAs(admin, 'ada', `/w/${s.workspace}/folders`);
    const folder = rowOf(page, 'Folders', 'pub');
    await folder.getByText('Change rights').click();
    // JSON that does not parse is refused on the page, before any call.
    await folder.getByLabel(/Extra rights/).fill('{not json');
    await folder.getByRole('button', { name: 'Save' }).click();
    await expect(page.locator('#message').textContent()).resolves.toBe('extra_perms: not valid JSON');
    await folder.getByLabel(/Owners/).fill('u/ada, u/tess');
    await folder.getByLabel(/Extra rights/).fill('{"u/opal": false, "u/tess": true}');
    await Promise.all([page.waitForEvent('load'), folder.getByRole('button', { name: 'Save' }).click()]);
    await expect(page.locator('#done').textContent()).resolves.toBe('Done: folder pub saved, owned by u/ada, u/tess.');
    expect(await (await s.fetch(`${ws()}/folders/get/pub`)).json()).toMatchObject({ owners: ['u/ada', 'u/tess'], extra_perms: { 'u/opal': false, 'u/tess': true } });

    await page.goto(`${s.url}/w/${s.workspace}/groups`);
    const remove = rowOf(page, 'Groups', 'night').getByRole('button', { name: 'Remove tess from group night' });
    await remove.click();
    await Promise.all([page.waitForEvent('load'), remove.click()]);
    await expect(page.locator('#done').textContent()).resolves.toBe('Done: tess removed from group night.');
    expect((await (await s.fetch(`${ws()}/groups/get/night`)).json()).members).toEqual([]);

    await page.goto(`${s.url}/w/${s.workspace}/members`);
    await rowOf(page, 'Members', 'tess').getByLabel('Role', { exact: true }).selectOption('operator');
    await Promise.all([page.waitForEvent('load'), rowOf(page, 'Members', 'tess').getByRole('button', { name: 'Change role' }).click()]);
    await expect(page.locator('#done').textContent()).resolves.toBe('Done: tess is now operator.');
    await expect(rowOf(page, 'Members', 'tess').locator('td').nth(1).textContent()).resolves.toBe('operator');
    const leave = rowOf(page, 'Members', 'tess').getByRole('button', { name: 'Remove tess from the workspace' });
    await leave.click();
    await Promise.all([page.waitForEvent('load'), leave.click()]);
    await expect(page.locator('#done').textContent()).resolves.toBe('Done: tess removed from the workspace.');
    expect(((await (await s.fetch(`${ws()}/users/list`)).json()) as { username: string }[]).map((m) => m.username)).not.toContain('tess');
  });

  it('shows an operator only what their folder rights let them read, and nothing to change', async () => {
    const page = await pageAs(operator, 'opal', `/w/${s.workspace}/schedules`);
    expect(await rowOf(page, 'Schedules', 'f/pub/morning').count()).toBe(1);
    expect(await page.locator('body').textContent()).not.toContain('f/hidden');
    expect(await page.locator('form[data-api], button[data-api]').count()).toBe(0);

    await page.goto(`${s.url}/w/${s.workspace}/variables`);
    expect(await rowOf(page, 'Variables', 'f/pub/api_key').count()).toBe(1);
    expect(await page.locator('body').textContent()).not.toContain('f/hidden');
    expect(await page.locator('form[data-api], button[data-api]').count()).toBe(0);
    expect(await page.content()).not.toContain(SECRET2);

    await page.goto(`${s.url}/w/${s.workspace}/folders`);
    expect(await rowOf(page, 'Folders', 'pub').count()).toBe(1);
    expect(await rowOf(page, 'Folders', 'hidden').count()).toBe(0);
    expect(await page.locator('form[data-api], button[data-api]').count()).toBe(0);

    await page.goto(`${s.url}/w/${s.workspace}/members`);
    expect(await rowOf(page, 'Members', 'ada').count()).toBe(1);
    expect(await page.locator('form[data-api], button[data-api]').count()).toBe(0);
  });
});
