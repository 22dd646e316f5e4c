import { createToken, deleteToken, listTokens } from './console-api.js';
import { byId, messageOf } from './page-helpers.js';
import type { TokenView } from '../../../core/views/identity-views.js';

/**
 * The token page (`/tokens`, token-page.ts renders its shell): lists the signed-in person's tokens
 * with the core's expiry badge, creates one (its value shown once) and deletes one, through the
 * typed API client, so a token's fields are read as TokenView types them. Bundled by bin/build.js
 * (console-assets/token-page.js).
 */

const rows = byId('rows');
const form = byId<HTMLFormElement>('create');
const created = byId('created');
const message = byId('message');
const BADGES: Record<NonNullable<TokenView['expiry_badge']>, [string, string]> = {
  expired: ['expired', 'badge-expired'],
  within_7_days: ['expires within 7 days', 'badge-week'],
  within_30_days: ['expires within 30 days', 'badge-month'],
};

function cell(text: string, className?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

/** Runs an action, showing its refusal above the table (and passing it on). */
async function shown<T>(action: () => Promise<T>): Promise<T> {
  message.textContent = '';
  try {
    return await action();
  } catch (error) {
    message.textContent = messageOf(error);
    throw error;
  }
}

function row(t: TokenView): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.prefix = t.token_prefix;
  tr.append(cell(t.label), cell(t.token_prefix + '…', 'mono'), cell(t.scopes ? t.scopes.join(' ') : 'all of yours'), cell(t.workspace_id ?? 'any'), cell(t.expiration ? t.expiration.slice(0, 10) : 'never'));
  const badge = cell('');
  if (t.expiry_badge) {
    const [text, className] = BADGES[t.expiry_badge];
    const span = document.createElement('span');
    span.className = 'badge ' + className;
    span.textContent = text;
    badge.append(span);
  }
  const actions = cell('');
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = 'Delete';
  remove.addEventListener('click', () => {
    if (!confirm('Delete the token "' + t.label + '"? Whatever uses it stops working at once.')) return;
    shown(() => deleteToken(t.token_prefix))
      .then(load)
      .catch(() => {});
  });
  actions.append(remove);
  tr.append(badge, actions);
  return tr;
}

async function load(): Promise<void> {
  const tokens = await listTokens();
  rows.replaceChildren(...tokens.map(row));
  byId('empty').hidden = tokens.length > 0;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value;
  const scopes = field('scopes').split(/[\s,]+/).filter(Boolean);
  const body: { label: string; expiration?: string; scopes?: string[] } = { label: field('label') };
  if (field('expiration')) body.expiration = new Date(field('expiration') + 'T23:59:59Z').toISOString();
  if (scopes.length) body.scopes = scopes;
  shown(() => createToken(body))
    .then(async (token) => {
      byId('new-token').textContent = token;
      created.hidden = false;
      form.reset();
      await load();
    })
    .catch(() => {});
});

load().catch((error: unknown) => (message.textContent = messageOf(error)));
