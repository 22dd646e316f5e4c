import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `v1,` + base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the secret. A secret is `whsec_` + base64 of
 * the key, as the scheme's libraries (`standardwebhooks` on npm) read it; the prefix is optional.
 */

export function standardWebhookSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** A new secret in the scheme's format, for admins who set a webhook without choosing one. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The headers of one signed request; `webhook-signature` only when there is a secret. */
export function signedHeaders(secret: string | null, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/cloudevents+json', 'webhook-id': id, 'webhook-timestamp': timestamp };
  if (secret) headers['webhook-signature'] = standardWebhookSignature(secret, id, timestamp, body);
  return headers;
}
