import { createHash } from 'node:crypto';
import { updateEntity } from '../store/entities.js';
import { retry } from '../common/retry.js';
import { approverUsernames } from './approval-rules.js';
import { findModule } from '../flows/definition.js';
import { gateNoticeSender, type GateNotice } from './gate-notice-sender.js';
import { getFlowRun, type FlowRun, type GateDelivery } from '../flows/run-state.js';
import type { FlowRunDocument } from '../flows/flow-documents.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Tells a ConsentGate's approvers that a run waits for them (spec 2.7): by email (SMTP locally,
 * SES on AWS, else the outbox), by signed webhook, by SNS and in a Slack channel (core/chat). Each attempt is recorded in the
 * gate's `deliveries`; a notice that keeps failing is recorded as such and never fails or holds
 * the run.
 *
 * The gate is stored with `notices: 'pending'` in the same write that makes the run wait, and
 * becomes `done` only once every channel was tried. So a process that dies in between loses no
 * notice: the interpreter sends pending notices whenever it looks at a waiting gate again, and
 * each shell wakes those runs when it starts (`runsWithPendingNotices` in timers.ts). Delivery is at least
 * once: a crash after sending and before recording sends again (a webhook with the same
 * `webhook-id`, so its receiver can tell).
 */

/** Three attempts per channel and recipient; the waits before the 2nd and 3rd are jittered. */
const NOTICE_RETRY = { attempts: 3, baseDelayMs: 250, maxDelayMs: 2000 };

type NoticeDeps = Pick<CoreDeps, 'store' | 'clock' | 'config' | 'cipher' | 'email' | 'topics' | 'outbound'>;

export async function notifyApprovers(deps: NoticeDeps, flowJob: Job, moduleId: string): Promise<void> {
  const run = await getFlowRun(deps, flowJob.workspace_id, flowJob.id);
  const module = run ? findModule(run.modules, moduleId) : undefined;
  const state = run?.gates?.[moduleId];
  if (!run || !state || module?.value.type !== 'consentgate') return;
  const sender = gateNoticeSender(deps);
  const deliveries: GateDelivery[] = [];
  for (const { target, notice } of await noticesOf(deps, flowJob, run, moduleId)) {
    await retry({ ...NOTICE_RETRY, retryOn: () => true, exhausted: () => new Error('no attempt left') }, async (n) => {
      const at = () => deps.clock.now().toISOString();
      try {
        await sender.send(notice);
        deliveries.push({ channel: notice.channel, target, attempt: n + 1, ok: true, at: at() });
      } catch (e) {
        deliveries.push({ channel: notice.channel, target, attempt: n + 1, ok: false, at: at(), error: String((e as Error).message ?? e).slice(0, 300) });
        throw e;
      }
    }).catch(() => undefined); // recorded above; a failed notice never fails the run
  }
  await updateEntity(deps.store, deps.clock, 'flow_run', flowJob.workspace_id, flowJob.id, `flow run ${flowJob.id}`, (r) => {
    const g = r.gates?.[moduleId];
    if (!g) return r;
    return { ...r, gates: { ...r.gates, [moduleId]: { ...g, notices: 'done' as const, deliveries: [...g.deliveries, ...deliveries] } } };
  });
}

/** Each notice the gate's channels call for, with the target its delivery record names. */
async function noticesOf(deps: NoticeDeps, flowJob: Job, run: FlowRun, moduleId: string): Promise<{ target: string; notice: GateNotice }[]> {
  const module = findModule(run.modules, moduleId);
  const state = run.gates?.[moduleId];
  if (module?.value.type !== 'consentgate' || !state) return [];
  const gate = module.value;
  const consentUrl = `${deps.config.baseInternalUrl}/api/v1/runs/${flowJob.id}/consent`;
  const subject = `Approval needed: ${run.path}`;
  const data = {
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
  const notices: { target: string; notice: GateNotice }[] = [];
  for (const channel of gate.notify) {
    if (channel.channel === 'email') {
      const text = `${state.message}\n\nRun ${flowJob.id} waits for your decision at step ${moduleId}.\nDecide on the approvals page (${deps.config.baseInternalUrl}/approvals) or with: POST ${consentUrl} {"decision": "approved" | "rejected", "reason": "..."}`;
      for (const username of await approverUsernames(deps, flowJob.workspace_id, gate.approvers)) {
        notices.push({ target: username, notice: { channel: 'email', username, subject, text } });
      }
    } else if (channel.channel === 'webhook') {
      // Derived from the run, gate and URL: every attempt, and a resend after a crash, is one message.
      const id = `msg_${createHash('sha256').update(`${flowJob.id}\n${moduleId}\n${channel.url}`).digest('hex').slice(0, 32)}`;
      notices.push({ target: channel.url, notice: { channel: 'webhook', id, url: channel.url, secret: channel.secret, payload: { type: 'consent.requested', data } } });
    } else if (channel.channel === 'sns') {
      notices.push({ target: channel.topic_arn ?? 'approvals topic', notice: { channel: 'sns', topicArn: channel.topic_arn ?? null, subject, text: JSON.stringify({ type: 'consent.requested', data }) } });
    } else if (channel.channel === 'chat') {
      const text = state.message || subject;
      const notice = { workspaceId: flowJob.workspace_id, flowJobId: flowJob.id, moduleId, resource: channel.resource, channelId: channel.channel_id, text };
      notices.push({ target: `${channel.resource} ${channel.channel_id}`, notice: { channel: 'chat', ...notice } });
    }
  }
  return notices;
}

/** Whether the run waits at a gate whose notices were not all tried yet. */
export function gateWithPendingNotices(run: FlowRunDocument): string | null {
  const step = run.step;
  if (run.status !== 'awaiting_approval' || step?.kind !== 'gate') return null;
  const gate = run.gates?.[step.module];
  return gate?.notices === 'pending' && !gate.decision ? step.module : null;
}
