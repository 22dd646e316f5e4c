import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { badRequest, conflict, notFound } from '../common/errors.js';
import { newShortId } from '../common/crypto.js';
import { parseBody } from '../common/validation.js';
import { findModule, type SuspendSettings } from '../flows/definition.js';
import { getFlowRun, type ChatMessage, type FlowRun } from '../flows/run-state.js';
import { isFinished } from '../jobs/jobs.js';
import { approvalState, resumeUrls, type ResumeUrls } from '../approvals/resume.js';
import { postApprovalMessage } from './chat-messages.js';
import { assertMayAskChat } from './chat-requester.js';
import { recordStepMessage, stepMessageLimit } from './step-message-bound.js';
import { requireChatConnection } from './chat-settings.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * What requestInteractiveChatApproval / request_interactive_chat_approval call (spec 4.9): from
 * inside an approval step (a step with `suspend`), post a message with Approve / Reject buttons to
 * one Slack channel. Each message gets its own resume id, so it counts as one approval: calling it
 * for two channels of a step that requires two approvals needs both. `chat_resource_path` names one
 * of the workspace's chat connections (chat-settings.ts), which only a workspace admin sets up: the
 * job names it and never sees its token. Only the step itself or a workspace admin may ask
 * (chat-requester.ts), and a step only a bounded number of times (step-message-bound.ts).
 */

const MAX_PREFILL_BYTES = 16 * 1024;

/** The fields of the message both chat apps' requests take (Slack's and Teams'). */
export const approvalMessageFields = {
  message: z.string().min(1).max(3000),
  approver: z.string().min(1).max(320).nullish(),
  // A chat message has a size limit (Slack's blocks, Teams' ~28 KB activity); the form's prefill must fit.
  default_args_json: z
    .record(z.string(), z.unknown())
    .nullish()
    .refine((v) => Buffer.byteLength(JSON.stringify(v ?? {})) <= MAX_PREFILL_BYTES, `larger than ${MAX_PREFILL_BYTES} bytes`),
  dynamic_enums_json: z.record(z.string(), z.array(z.string().max(150)).max(100)).nullish(),
};

export const requestBody = z.strictObject({
  chat_resource_path: z.string().min(1).max(500),
  channel_id: z.string().min(1).max(200),
  ...approvalMessageFields,
});

export interface ChatApprovalRequested extends ResumeUrls {
  message_id: string;
  channel: string;
  /** Slack's id of the posted message; null when posting failed (the URLs still decide the step). */
  ts: string | null;
  posted: boolean;
  error: string | null;
}

export async function requestSlackApproval(deps: Pick<CoreDeps, 'store' | 'clock' | 'config' | 'cipher' | 'outbound'>, rights: Rights, stepJobId: string, body: unknown): Promise<ChatApprovalRequested> {
  const { run, settings } = await waitingApprovalStep(deps, rights, stepJobId);
  const input = parseBody(requestBody, body);
  const conn = await requireChatConnection(deps, rights.workspaceId, input.chat_resource_path, 'slack', 'chat_resource_path');
  const resumeId = randomInt(2 ** 32);
  const message = stepApprovalMessage('slack', conn.name, input.channel_id, stepJobId, resumeId, input);
  await recordStepMessage(deps, rights.workspaceId, run.flow_job, message, stepMessageLimit(settings));
  const posted = await postApprovalMessage(deps, conn, rights.workspaceId, run.flow_job, message, { reject: !settings.hide_cancel });
  return approvalRequested(deps, rights, stepJobId, resumeId, message, { channel: message.channel, ts: posted.ts, error: posted.error });
}

type MessageInput = z.infer<z.ZodObject<typeof approvalMessageFields>>;

/** A new message asking for one approval of step `stepJobId`: its own resume id makes it count once. */
export function stepApprovalMessage(platform: ChatMessage['platform'], connection: string, channel: string, stepJobId: string, resumeId: number, input: MessageInput): ChatMessage {
  return {
    id: newShortId(16),
    platform,
    connection,
    channel,
    requested_channel: channel,
    ts: null,
    target: { kind: 'step', step_job: stepJobId, resume_id: resumeId },
    approver: input.approver ?? null,
    text: input.message,
    default_args: input.default_args_json ?? {},
    enums: input.dynamic_enums_json ?? {},
    deliveries: [],
  };
}

/** The answer to a chat approval request: the step's resume URLs and how the posting went. */
export function approvalRequested(
  deps: Pick<CoreDeps, 'config'>,
  rights: Rights,
  stepJobId: string,
  resumeId: number,
  message: ChatMessage,
  posted: { channel: string; ts: string | null; error: string | null },
): ChatApprovalRequested {
  const urls = resumeUrls(deps, { workspaceId: rights.workspaceId, stepJobId, resumeId, approver: message.approver, flowLevel: false });
  return { ...urls, message_id: message.id, channel: posted.channel, ts: posted.ts, posted: posted.ts !== null, error: posted.error };
}

/**
 * The flow run of approval step `stepJobId`, which still waits, for a caller who may ask a chat for
 * its approvals (chat-requester.ts: decided before the job is looked up).
 */
export async function waitingApprovalStep(deps: Pick<CoreDeps, 'store'>, rights: Rights, stepJobId: string): Promise<{ run: FlowRun; settings: SuspendSettings }> {
  await assertMayAskChat(deps, rights, stepJobId);
  const stepJob = await deps.store.getJob(rights.workspaceId, stepJobId);
  if (!stepJob) throw notFound(`job ${stepJobId}`);
  rights.checkJob(stepJob, 'read');
  const run = stepJob.parent_job ? await getFlowRun(deps, rights.workspaceId, stepJob.parent_job) : null;
  const moduleId = run?.step_modules[stepJobId];
  const module = run && moduleId ? findModule(run.modules, moduleId) : undefined;
  if (!run || !module?.suspend) throw badRequest('invalid_request', 'a chat approval is requested from an approval step: a flow step with suspend settings');
  // A flow canceled or failed meanwhile is finished at once; its run is settled on the flow's next
  // turn (on AWS, an execution's), and until then still shows the step waiting.
  const flowJob = await deps.store.getJob(rights.workspaceId, stepJob.parent_job!);
  const waiting = flowJob !== null && !isFinished(flowJob.status) && approvalState(run, stepJobId, module.suspend.required_events) === 'waiting';
  if (!waiting) throw conflict(`approval step ${stepJobId} no longer waits for approvals`);
  return { run, settings: module.suspend };
}
