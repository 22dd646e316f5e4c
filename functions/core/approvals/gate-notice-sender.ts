import { standardWebhookSignature } from '../events/signing.js';
import { notifyUser } from '../identity/notifications.js';
import { postGateMessage, type GateChatNotice } from '../chat/gate-chat.js';
import type { CoreDeps } from '../deps.js';

/**
 * How one ConsentGate notice leaves the service: the single place that knows the channels' wire
 * forms. gate-notices.ts decides who is told, records each attempt and retries; this only sends.
 * Webhooks go through the same SSRF-guarded client as workspace webhooks (`deps.outbound`), so a
 * flow author cannot reach internal addresses through a gate's `notify` either.
 */

export type GateNotice =
  | { channel: 'email'; username: string; subject: string; text: string }
  /** `id` is the Standard Webhooks message id: the same for every attempt of one notice. */
  | { channel: 'webhook'; id: string; url: string; secret?: string; payload: unknown }
  | { channel: 'sns'; topicArn: string | null; subject: string; text: string }
  | ({ channel: 'chat' } & GateChatNotice);

export interface GateNoticeSender {
  /** Sends once; throws when the channel refused or could not be reached (the caller retries). */
  send(notice: GateNotice): Promise<void>;
}

const WEBHOOK_TIMEOUT_MS = 10_000;

type SenderDeps = Pick<CoreDeps, 'store' | 'clock' | 'cipher' | 'email' | 'topics' | 'outbound'>;

export function gateNoticeSender(deps: SenderDeps): GateNoticeSender {
  return {
    async send(notice) {
      switch (notice.channel) {
        case 'email':
          await notifyUser(deps, notice.username, { subject: notice.subject, text: notice.text });
          return;
        case 'webhook':
          await postSigned(deps, notice.id, notice.url, notice.secret, notice.payload);
          return;
        case 'sns':
          if (!deps.topics) throw new Error('this instance has no SNS');
          await deps.topics.publish({ topicArn: notice.topicArn, subject: notice.subject, text: notice.text });
          return;
        case 'chat':
          await postGateMessage(deps, notice);
          return;
      }
    },
  };
}

/** A JSON POST signed in the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature). */
async function postSigned(deps: SenderDeps, id: string, url: string, secret: string | undefined, payload: unknown): Promise<void> {
  if (!deps.outbound) throw new Error('this instance sends no webhooks');
  const body = JSON.stringify(payload);
  // Wall time, not the injected clock: receivers check it against their own clock (replay window).
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp };
  if (secret) headers['webhook-signature'] = standardWebhookSignature(secret, id, timestamp, body);
  const res = await deps.outbound.post({ url, headers, body, timeoutMs: WEBHOOK_TIMEOUT_MS });
  if ('error' in res) throw new Error(res.error);
  if (res.status < 200 || res.status >= 300) throw new Error(`the webhook answered ${res.status}`);
}
