import { createHmac } from 'node:crypto';
import { newUuid } from '../crypto.js';
import { updateEntity } from '../entities.js';
import { notifyUser } from '../notifications.js';
import { approverUsernames } from './approval-rules.js';
import { findModule } from './definition.js';
import { getFlowRun, type GateDelivery } from './run-state.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Tells a ConsentGate's approvers that a run waits for them (spec 2.7): by email (SMTP locally,
 * SES on AWS, else the outbox) and by signed webhook. Each attempt is recorded in the gate's
 * `deliveries`; a notice that keeps failing is recorded as such and never fails or holds the run.
 */

/** Pauses before the 2nd and 3rd attempt; a minimal backoff of this module's own. */
const RETRY_DELAYS_MS = [200, 1000];
const WEBHOOK_TIMEOUT_MS = 10_000;

export async function notifyApprovers(deps: Pick<CoreDeps, 'store' | 'clock' | 'config' | 'email' | 'topics'>, flowJob: Job, moduleId: string): Promise<void> {
  const run = await getFlowRun(deps, flowJob.workspace_id, flowJob.id);
  const module = run ? findModule(run.modules, moduleId) : undefined;
  const state = run?.gates?.[moduleId];
  if (!run || !state || module?.value.type !== 'consentgate') return;
  const gate = module.value;
  const consentUrl = `${deps.config.baseInternalUrl}/api/v1/runs/${flowJob.id}/consent`;
  const deliveries: GateDelivery[] = [];
  const attempt = async (channel: GateDelivery['channel'], target: string, send: () => Promise<void>) => {
    for (let n = 1; n <= RETRY_DELAYS_MS.length + 1; n++) {
      try {
        await send();
        deliveries.push({ channel, target, attempt: n, ok: true, at: deps.clock.now().toISOString() });
        return;
      } catch (e) {
        deliveries.push({ channel, target, attempt: n, ok: false, at: deps.clock.now().toISOString(), error: String((e as Error).message ?? e).slice(0, 300) });
        const pause = RETRY_DELAYS_MS[n - 1];
        if (pause !== undefined) await new Promise((r) => setTimeout(r, pause));
      }
    }
  };
  const notice = {
    run_id: flowJob.id,
    workspace_id: flowJob.workspace_id,
    flow_path: run.path,
    step_id: moduleId,
    triggered_by: flowJob.created_by,
    message: state.message,
    approvers: gate.approvers,
    deadline: state.deadline,
    consent_url: consentUrl,
  };
  for (const channel of gate.notify) {
    if (channel.channel === 'email') {
      for (const username of await approverUsernames(deps, flowJob.workspace_id, gate.approvers)) {
        await attempt('email', username, async () => {
          await notifyUser(deps, username, {
            subject: `Approval needed: ${run.path}`,
            text: `${state.message}\n\nRun ${flowJob.id} waits for your decision at step ${moduleId}.\nDecide with: POST ${consentUrl} {"decision": "approved" | "rejected", "reason": "..."}`,
          });
        });
      }
    } else if (channel.channel === 'webhook') {
      await attempt('webhook', channel.url, () => postSigned(channel.url, channel.secret, { type: 'consent.requested', data: notice }));
    } else if (channel.channel === 'sns') {
      const topics = deps.topics;
      await attempt('sns', channel.topic_arn ?? 'approvals topic', async () => {
        if (!topics) throw new Error('this instance has no SNS');
        await topics.publish({ topicArn: channel.topic_arn ?? null, subject: `Approval needed: ${run.path}`, text: JSON.stringify({ type: 'consent.requested', data: notice }) });
      });
    }
    // `chat` is refused when the flow is created (flows.ts), so none reaches here.
  }
  if (deliveries.length === 0) return;
  await updateEntity(deps.store, deps.clock, 'flow_run', flowJob.workspace_id, flowJob.id, `flow run ${flowJob.id}`, (r) => {
    const g = r.gates?.[moduleId];
    if (!g) return r;
    return { ...r, gates: { ...r.gates, [moduleId]: { ...g, deliveries: [...g.deliveries, ...deliveries] } } };
  });
}

/** A JSON POST signed in the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature). */
async function postSigned(url: string, secret: string | undefined, payload: unknown): Promise<void> {
  const body = JSON.stringify(payload);
  const id = `msg_${newUuid()}`;
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
