import { generateOpenApi, type OpenApiDocument } from './console-api.js';
import { byId, messageOf } from './page-helpers.js';

/**
 * The OpenAPI page (`/w/<ws>/openapi`, openapi-page.ts renders its shell): the filter rows, the
 * request built from them (typed by the schema `openapi/generate` validates with), the preview and
 * the download, through the typed API client. Bundled by bin/build.js (console-assets/openapi-page.js).
 */

type Selection = Parameters<typeof generateOpenApi>[0];
type RouteFilter = NonNullable<Selection['http_route_filters']>[number];
type WebhookFilter = NonNullable<Selection['webhook_filters']>[number];

const ws = document.body.dataset.workspace ?? '';
const form = byId<HTMLFormElement>('openapi-form');
const message = byId('message');
const preview = byId('preview');
const field = (id: string) => byId<HTMLInputElement | HTMLSelectElement>(id).value.trim();
const ANY_ROUTE: RouteFilter = { folder_regex: '*', path_regex: '*', route_path_regex: '*' };
const ANY_SCRIPT: WebhookFilter = { runnable_kind: 'script', user_or_folder_regex: '*', user_or_folder_regex_value: '*', path: '*' };

/** A field of a filter row, by its name. */
const rowField = (row: Element, name: string) => row.querySelector<HTMLInputElement | HTMLSelectElement>('[name=' + name + ']')!;

function addRow(listId: string, templateId: string, values: RouteFilter | WebhookFilter): void {
  const list = byId(listId);
  const row = byId<HTMLTemplateElement>(templateId).content.firstElementChild!.cloneNode(true) as HTMLElement;
  for (const [name, value] of Object.entries(values)) rowField(row, name).value = value;
  row.querySelector('.remove')!.addEventListener('click', () => {
    row.remove();
    numberRows(list);
  });
  list.append(row);
  numberRows(list);
}

// Each field's accessible name says which filter it belongs to.
function numberRows(list: HTMLElement): void {
  list.querySelectorAll('.filter').forEach((row, i) => {
    for (const labelled of row.querySelectorAll<HTMLElement>('[data-label]')) labelled.setAttribute('aria-label', labelled.dataset.label + ' ' + (i + 1));
  });
}

/** The filter rows of a list, each as the object its field names make (the API checks the values). */
function rows<F>(listId: string, names: (keyof F & string)[]): F[] {
  return [...byId(listId).querySelectorAll('.filter')].map((row) => Object.fromEntries(names.map((name) => [name, rowField(row, name).value.trim()])) as F);
}

function request(): Selection {
  const body: Selection = {
    http_route_filters: rows<RouteFilter>('route-filters', ['folder_regex', 'path_regex', 'route_path_regex']),
    webhook_filters: rows<WebhookFilter>('webhook-filters', ['runnable_kind', 'user_or_folder_regex', 'user_or_folder_regex_value', 'path']),
    format: field('format') as Selection['format'],
  };
  // One of the two given: the other keeps the document's default.
  if (field('title') || field('version')) body.info = { title: field('title') || 'svc workspace ' + ws, version: field('version') || '1.0.0' };
  if (field('url')) body.url = field('url');
  return body;
}

/** Runs an action, showing its refusal (and clearing the preview). */
function run(action: () => Promise<void>): void {
  message.textContent = '';
  action().catch((error: unknown) => {
    preview.textContent = '';
    message.textContent = messageOf(error);
  });
}

function download(document_: OpenApiDocument): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([document_.text], { type: document_.contentType }));
  link.download = 'openapi-' + ws + '.' + field('format');
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  run(async () => {
    preview.textContent = (await generateOpenApi(request())).text;
  });
});
byId('download').addEventListener('click', () =>
  run(async () => {
    const document_ = await generateOpenApi(request());
    preview.textContent = document_.text;
    download(document_);
  }),
);
byId('add-route-filter').addEventListener('click', () => addRow('route-filters', 'route-filter', ANY_ROUTE));
byId('add-webhook-filter').addEventListener('click', () => addRow('webhook-filters', 'webhook-filter', ANY_SCRIPT));
addRow('route-filters', 'route-filter', ANY_ROUTE);
