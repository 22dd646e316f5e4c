import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { getEntityValue, tryCreateEntity, updateEntity } from '../store/entities.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import type { WebhookSetting } from '../documents/entity-values.js';

/**
 * Where a scope's events go: a workspace's webhook (spec 6.1) or the instance events webhook
 * (6.2, scope `*instance`). One `webhook` document per scope; the secret is sealed with the
 * instance's SecretCipher, bound to the scope, and never shown again.
 */

export interface WebhookTarget {
  url: string;
  secret: string | null;
}

const KEY = 'webhook';
const sealContext = (scope: string) => ({ webhook: scope });

/** http(s) only: anything else (file:, data:, javascript:) is refused before it is stored. */
const webhookUrl = z
  .string()
  .max(2048)
  .refine((u) => u === '' || isHttpUrl(u), 'an http:// or https:// URL, or empty to turn the webhook off');

function isHttpUrl(u: string): boolean {
  try {
    const url = new URL(u);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** Standard Webhooks secrets are base64 (optionally `whsec_`-prefixed) of 24 to 64 bytes. */
const webhookSecret = z
  .string()
  .max(200)
  .refine((s) => s === '' || isStandardSecret(s), 'a Standard Webhooks secret: whsec_ followed by base64 of 24 to 64 bytes');

function isStandardSecret(s: string): boolean {
  const b64 = s.startsWith('whsec_') ? s.slice('whsec_'.length) : s;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return false;
  const bytes = Buffer.from(b64, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

export const editWorkspaceWebhookBody = z.strictObject({ webhook: webhookUrl, secret: webhookSecret.optional() });
export const editInstanceWebhookBody = z.strictObject({ url: webhookUrl, secret: webhookSecret.optional() });

type SettingDeps = Pick<CoreDeps, 'store' | 'clock' | 'cipher'>;

/**
 * Sets (or, with an empty URL, turns off) a scope's webhook. Without `secret` a changed URL keeps
 * no secret of the old one: a secret belongs to the receiver it was shared with.
 */
export async function setWebhook(deps: SettingDeps, scope: string, by: string, url: string, secret: string | undefined): Promise<void> {
  const current = await getEntityValue(deps.store, 'webhook', scope, KEY);
  const keepSecret = secret === undefined && current !== null && current.url === url;
  const sealed = secret ? await deps.cipher.encrypt(secret, sealContext(scope)) : keepSecret ? current!.secret : null;
  const value: WebhookSetting = { url, secret: url === '' ? null : sealed, updated_by: by };
  if (await tryCreateEntity(deps.store, deps.clock, 'webhook', scope, KEY, value)) return;
  await updateEntity(deps.store, deps.clock, 'webhook', scope, KEY, 'webhook setting', () => value);
}

export async function editWorkspaceWebhook(deps: SettingDeps, rights: Rights, body: unknown): Promise<{ webhook: string; has_secret: boolean }> {
  rights.check('workspaces', 'write');
  const input = parseBody(editWorkspaceWebhookBody, body);
  if (input.webhook === '' && input.secret) throw badRequest('invalid_request', 'secret: there is no webhook to sign for', { field: 'secret' });
  await setWebhook(deps, rights.workspaceId, rights.principal.username, input.webhook, input.secret);
  return webhookView(deps, rights.workspaceId);
}

/** What settings pages and get_settings show: the URL and whether requests are signed, never the secret. */
export async function webhookView(deps: Pick<CoreDeps, 'store'>, scope: string): Promise<{ webhook: string; has_secret: boolean }> {
  const setting = await getEntityValue(deps.store, 'webhook', scope, KEY);
  return { webhook: setting?.url ?? '', has_secret: !!setting?.secret };
}

/** Where the scope's events go now, with the secret opened; null when it has no webhook. */
export async function webhookTarget(deps: Pick<CoreDeps, 'store' | 'cipher'>, scope: string): Promise<WebhookTarget | null> {
  const setting = await getEntityValue(deps.store, 'webhook', scope, KEY);
  if (!setting || setting.url === '') return null;
  return { url: setting.url, secret: setting.secret ? await deps.cipher.decrypt(setting.secret, sealContext(scope)) : null };
}

/** Whether events of the scope are recorded at all: only while it has a webhook. */
export async function hasWebhook(deps: Pick<CoreDeps, 'store'>, scope: string): Promise<boolean> {
  const setting = await getEntityValue(deps.store, 'webhook', scope, KEY);
  return !!setting && setting.url !== '';
}
