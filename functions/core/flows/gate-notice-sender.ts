import { createHmac } from 'node:crypto';
import { notifyUser } from '../notifications.js';
import type { CoreDeps } from '../deps.js';

/**
 * How one ConsentGate notice leaves the service: the single place that knows the channels' wire
 * forms. gate-notices.ts decides who is told, records each attempt and retries; this only sends.
 * Swapping the transport (for instance webhooks through the workspace-webhook client with its
 * SSRF guard and delivery records) is a change to `gateNoticeSender` alone.
 */

export type GateNotice =
  | { channel: 'email'; username: string; subject: string; text: string }
  /** `id` is the Standard Webhooks message id: the same for every attempt of one notice. */
  | { channel: 'webhook'; id: string; url: string; secret?: string; payload: unknown }
  | { channel: 'sns'; topicArn: string | null; subject: string; text: string };

export interface GateNoticeSender {
  /** Sends once; throws when the channel refused or could not be reached (the caller retries). */
  send(notice: GateNotice): Promise<void>;
}

const WEBHOOK_TIMEOUT_MS = 10_000;

export function gateNoticeSender(deps: Pick<CoreDeps, 'store' | 'clock' | 'email' | 'topics'>): GateNoticeSender {
  return {
    async send(notice) {
      switch (notice.channel) {
        case 'email':
          await notifyUser(deps, notice.username, { subject: notice.subject, text: notice.text });
          return;
        case 'webhook':
          await postSigned(notice.id, notice.url, notice.secret, notice.payload);
          return;
        case 'sns':
          if (!deps.topics) throw new Error('this instance has no SNS');
          await deps.topics.publish({ topicArn: notice.topicArn, subject: notice.subject, text: notice.text });
          return;
      }
    },
  };
}

/** A JSON POST signed in the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature). */
async function postSigned(id: string, url: string, secret: string | undefined, payload: unknown): Promise<void> {
  const body = JSON.stringify(payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp };
  if (secret) headers['webhook-signature'] = standardWebhookSignature(secret, id, timestamp, body);
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS), redirect: 'manual' });
  await res.body?.cancel();
  if (res.status < 200 || res.status >= 300) throw new Error(`the webhook answered ${res.status}`);
}

/**
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. The secret is a Standard Webhooks secret:
 * `whsec_` + base64 of the key (the prefix is optional), as the scheme's own libraries read it.
 */
export function standardWebhookSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
