import { z } from 'zod';
import type { Same } from './same.js';
import type { GoTarget } from '../../ports.js';
import type { ResumeOutcome, ResumeUrls } from '../approvals/resume.js';
import type { ConsentOutcome } from '../approvals/consent.js';

/**
 * Approvals and the runtime as the API answers them: the OpenAPI document describes the answers
 * with these, `svc job approve/reject` and the CLI's Go builds read them with their types, and the
 * checks below fail `npm run check` when what the core answers and these schemas part.
 */

/** `jobs/resume_urls/{job}/{resumeId}`: the signed links of one approval of a suspended step. */
export const resumeUrlsSchema = z.object({ resume: z.string(), cancel: z.string(), approvalPage: z.string() });
export type ResumeUrlsView = z.output<typeof resumeUrlsSchema>;
/** `jobs_u/resume/...`: the approvals counted so far and how many the step needs. */
export const resumeOutcomeSchema = z.object({ approvals_received: z.number().int(), approvals_required: z.number().int() });
export type ResumeOutcomeView = z.output<typeof resumeOutcomeSchema>;
/** `jobs_u/cancel/...`. */
export const canceledStepSchema = z.object({ canceled: z.literal(true) });
export type CanceledStepView = z.output<typeof canceledStepSchema>;
/** `POST /api/v1/runs/{run_id}/consent`: the decision recorded and the run's status once it takes effect. */
export const consentOutcomeSchema = z.object({
  run_id: z.string(),
  status: z.enum(['running', 'failed']),
  decision: z.object({ decision: z.enum(['approved', 'rejected']), approver: z.string().nullable(), reason: z.string(), at: z.string() }),
});
export type ConsentOutcomeView = z.output<typeof consentOutcomeSchema>;

/** `GET /api/runtime`: how this shell confines jobs (a description for people) and, on AWS, the platform Go binaries are built for. */
export const runtimeSchema = z.object({
  confinement: z.unknown(),
  go_target: z.object({ goos: z.literal('linux'), goarch: z.enum(['amd64', 'arm64']) }).nullable(),
});
export type RuntimeView = z.output<typeof runtimeSchema>;

const agree: [
  Same<ResumeUrlsView, ResumeUrls>,
  Same<ResumeOutcomeView, ResumeOutcome>,
  Same<ConsentOutcomeView, ConsentOutcome>,
  Same<NonNullable<RuntimeView['go_target']>, GoTarget>,
] = [true, true, true, true];
void agree;
