import { listRuns, run } from './console-api.js';
import { byId, messageOf, readSchemaForm, schemaForm } from './page-helpers.js';
import type { RunPageView } from '../../../core/views/run-views.js';
import { wireCopyButtons } from './copy-buttons.js';

/**
 * A script's or flow's page (`/w/<ws>/item/<path>`, workspace-pages.ts renders it): its run form,
 * built from the input schema, that starts a run and opens its page, and its last runs from
 * `GET jobs/runs`, both through the typed API client; the webhook section's copy buttons. Bundled for the browser by bin/build.js
 * (console-assets/item-page.js).
 */

const data = document.body.dataset;
const path = data.path ?? '';

schemaForm(byId('run-fields'), JSON.parse(data.schema ?? '{}') as unknown, {});
byId('run-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const message = byId('message');
  message.textContent = '';
  try {
    run(data.kind === 'flow' ? { flow: path } : { script: path }, readSchemaForm(byId('run-fields')), 'console')
      .then((id) => location.assign(runHref(id)))
      .catch((e: unknown) => (message.textContent = messageOf(e)));
  } catch (e) {
    message.textContent = messageOf(e);
  }
});
wireCopyButtons();
const runHref = (id: string) => '/w/' + encodeURIComponent(data.workspace ?? '') + '/run/' + encodeURIComponent(id);

function entry(run: RunPageView['runs'][number]): HTMLLIElement {
  const li = document.createElement('li');
  const status = document.createElement('span');
  status.className = 'status s-' + run.status;
  status.textContent = run.status;
  const link = document.createElement('a');
  link.href = runHref(run.id);
  link.textContent = run.created_at.replace('T', ' ').slice(0, 19);
  li.append(status, ' ', link, ' by ' + run.created_by);
  return li;
}

function none(): HTMLLIElement {
  const li = document.createElement('li');
  li.className = 'muted';
  li.textContent = 'no runs yet';
  return li;
}

// This item's own runs: `path_exact`, since `path` is a prefix (f/a/b would list f/a/bc's runs too).
listRuns(new URLSearchParams({ per_page: '10', path_exact: path }))
  .then((page) => {
    document.getElementById('recent')?.replaceChildren(...(page.runs.length ? page.runs.map(entry) : [none()]));
  })
  .catch(() => {});
