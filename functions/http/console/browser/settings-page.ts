import { chatConnections, deleteChatConnection, editWebhook, redeliver, setChatConnection, webhookDeliveries, workspaceSettings } from './console-api.js';
import { byId, messageOf } from './page-helpers.js';
import type { ChatConnectionListView, DeliveryView, WorkspaceWebhookView } from '../../../core/views/settings-views.js';

/**
 * The workspace settings page (`/w/<ws>/settings`, settings-page.ts renders its shell): the
 * Webhooks tab (the events webhook and its delivery log, with Redeliver) and the Chat tab (the
 * chat connections, a Slack connect form, Remove), all through the typed API client, so what the
 * page reads is typed by core/views/settings-views.ts. Bundled by bin/build.js
 * (console-assets/settings-page.js).
 */

const form = byId<HTMLFormElement>('webhook-form');
const message = byId('message');
const rows = byId('deliveries');
const chatForm = byId<HTMLFormElement>('chat-form');
const chatRows = byId('chat-connections');
const input = (f: HTMLFormElement, name: string) => f.elements.namedItem(name) as HTMLInputElement;

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function button(text: string, onClick: () => void): HTMLTableCellElement {
  const td = cell('');
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.addEventListener('click', onClick);
  td.append(b);
  return td;
}

/** Runs an action, showing its refusal under the page. */
function run(action: () => Promise<void>): void {
  message.textContent = '';
  action().catch((error: unknown) => (message.textContent = messageOf(error)));
}

// What the person typed is theirs: the settings arriving after it (a slow first load) do not overwrite it.
let typed = false;
input(form, 'webhook').addEventListener('input', () => (typed = true));

function showWebhook(settings: Partial<WorkspaceWebhookView>, keepTyped: boolean): void {
  if (!(keepTyped && typed)) input(form, 'webhook').value = settings.webhook ?? '';
  if (!keepTyped) typed = false;
  byId('signed').textContent = settings.has_secret ? 'Requests are signed (Standard Webhooks).' : 'Requests are not signed.';
}

function deliveryRow(d: DeliveryView): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.id = d.id;
  const last = d.last_status_code ?? d.last_error ?? '';
  tr.append(cell(d.created_at.replace('T', ' ').slice(0, 19)), cell(d.type), cell(d.subject), cell(d.status), cell(String(d.attempt_count)), cell(String(last)), cell(d.next_attempt_at ?? ''));
  tr.append(
    button('Redeliver', () =>
      run(async () => {
        await redeliver(d.id);
        await loadDeliveries();
      }),
    ),
  );
  return tr;
}

async function loadDeliveries(): Promise<void> {
  const log = await webhookDeliveries();
  rows.replaceChildren(...log.map(deliveryRow));
  byId('no-deliveries').hidden = log.length > 0;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  run(async () => {
    const body: { webhook: string; secret?: string } = { webhook: input(form, 'webhook').value.trim() };
    if (input(form, 'secret').value) body.secret = input(form, 'secret').value;
    showWebhook(await editWebhook(body), false);
    input(form, 'secret').value = '';
    byId('saved').hidden = false;
  });
});
byId('refresh').addEventListener('click', () => run(loadDeliveries));

for (const tab of document.querySelectorAll('[role=tab]')) {
  tab.addEventListener('click', () => {
    for (const other of document.querySelectorAll('[role=tab]')) {
      other.setAttribute('aria-selected', String(other === tab));
      byId(other.getAttribute('aria-controls') ?? '').hidden = other !== tab;
    }
  });
}

/** Where a connection posts: a Slack app's Web API, a Teams bot's team and app id. */
function whereOf(c: ChatConnectionListView[number]): string {
  return c.platform === 'slack' ? String(c.api_url ?? '') : String(c.team_name ?? '') + ' (' + String(c.app_id ?? '') + ')';
}

async function loadChat(): Promise<void> {
  const connections = await chatConnections();
  chatRows.replaceChildren(
    ...connections.map((c) => {
      const tr = document.createElement('tr');
      tr.append(cell(c.name), cell(c.platform), cell(whereOf(c)), cell(c.updated_by));
      tr.append(
        button('Remove', () =>
          run(async () => {
            await deleteChatConnection(c.name);
            await loadChat();
          }),
        ),
      );
      return tr;
    }),
  );
  byId('no-chat').hidden = connections.length > 0;
}

chatForm.addEventListener('submit', (event) => {
  event.preventDefault();
  run(async () => {
    const body: Record<string, unknown> = { platform: 'slack', bot_token: input(chatForm, 'bot_token').value, signing_secret: input(chatForm, 'signing_secret').value };
    const apiUrl = input(chatForm, 'api_url').value.trim();
    if (apiUrl) body.api_url = apiUrl;
    await setChatConnection(input(chatForm, 'chat_name').value.trim(), body);
    input(chatForm, 'bot_token').value = '';
    input(chatForm, 'signing_secret').value = '';
    byId('chat-saved').hidden = false;
    await loadChat();
  });
});

run(async () => {
  showWebhook(await workspaceSettings(), true);
  await loadDeliveries();
});
run(loadChat);
