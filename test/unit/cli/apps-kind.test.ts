import { describe, expect, it } from 'vitest';
import { apps, renderApp } from '../../../functions/cli/kinds/apps.js';
import { ItemFileError, type SyncContext } from '../../../functions/cli/items.js';

/** The CLI's app kind (functions/cli/kinds/apps.ts): files for an app, and the app read back from them. */

const context = (nonDottedPaths: boolean) => ({ layout: { nonDottedPaths, defaultTs: 'bun' } }) as unknown as SyncContext;
const payload = { path: 'f/ops/dash', summary: 'Dashboard', value: { grid: [{ id: 'a' }] }, policy: { execution_mode: 'viewer' } };

describe('the app kind of svc sync', () => {
  it('writes an app as <path>.app/app.yaml and reads the same app back', async () => {
    for (const nonDotted of [false, true]) {
      const files = renderApp(payload, context(nonDotted));
      const [file] = Object.keys(files);
      expect(file).toBe(nonDotted ? 'f/ops/dash__app/app.yaml' : 'f/ops/dash.app/app.yaml');
      expect(apps.claim(file, context(nonDotted))).toBe('f/ops/dash');
      const item = await apps.parse('f/ops/dash', files, context(nonDotted));
      expect(item.payload).toEqual(payload);
    }
  });

  it('claims no flow or script files, and names the file that is wrong', async () => {
    expect(apps.claim('f/ops/run.flow/flow.yaml', context(false))).toBeNull();
    expect(apps.claim('f/ops/script.ts', context(false))).toBeNull();
    await expect(apps.parse('f/ops/dash', { 'f/ops/dash.app/app.yaml': 'summary: x\nvalue: 3\n' }, context(false))).rejects.toThrow(ItemFileError);
    await expect(apps.parse('f/ops/dash', { 'f/ops/dash.app/other.yaml': 'x: 1\n' }, context(false))).rejects.toThrow(/app.yaml/);
  });
});
