import { z } from 'zod';
import type { Same } from './same.js';
import { JOB_KINDS, JOB_TRIGGERS, type JobKind, type JobTrigger } from '../../ports.js';
import type { BulkCancelOutcome, RunPage } from '../console/runs.js';
import type { JobLogUpdate } from '../jobs/job-log-update.js';
import type { CreatedUpload, StoredObject } from '../uploads/upload-sessions.js';

/**
 * The console's runs and large uploads as the API answers them: the OpenAPI document describes the
 * answers with these, the CLI reads them with their types, and the checks below fail
 * `npm run check` when what the core answers and these schemas part.
 */

/** `jobs/runs`: a page of runs and the cursor of the next one. */
export const runPageSchema = z.object({
  runs: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      path: z.string(),
      kind: z.enum(JOB_KINDS as [JobKind, ...JobKind[]]),
      trigger: z.enum(JOB_TRIGGERS as [JobTrigger, ...JobTrigger[]]).nullable(),
      parent_job: z.string().nullable(),
      created_by: z.string(),
      created_at: z.string(),
      started_at: z.string().nullable(),
      completed_at: z.string().nullable(),
      /** From start to end (or to now while it runs); null before it started. */
      duration_ms: z.number().nullable(),
      /** Answered from its `cache_ttl` cache: nothing ran (no start, no duration). */
      cache_hit: z.boolean(),
      success: z.boolean().nullable(),
      attempts: z.number().int(),
      args: z.record(z.string(), z.unknown()).nullable(),
      script_hash: z.string().nullable(),
      flow_version: z.number().int().nullable(),
      /** Whether the caller may cancel it now. */
      can_cancel: z.boolean(),
    }),
  ),
  next_cursor: z.string().nullable(),
});
export type RunPageView = z.output<typeof runPageSchema>;

/** `jobs_u/getupdate/{id}`: whether the job runs or ended, and its logs from `log_offset`. */
export const jobLogUpdateSchema = z.object({ running: z.boolean(), completed: z.boolean(), new_logs: z.string(), log_offset: z.number().int() });

/** `jobs/queue/cancel_selection`. */
export const bulkCancelSchema = z.object({
  canceled: z.array(z.string()),
  not_canceled: z.array(z.object({ id: z.string(), status: z.number().int(), message: z.string() })),
});
export type BulkCancelView = z.output<typeof bulkCancelSchema>;

/** `job_helpers/uploads/create`: where to PUT each part. */
export const createdUploadSchema = z.object({
  upload: z.string(),
  key: z.string(),
  part_size: z.number().int(),
  parts: z.array(z.object({ part_number: z.number().int(), url: z.string() })),
  expires_at: z.string(),
});
export type CreatedUploadView = z.output<typeof createdUploadSchema>;
/** `job_helpers/uploads/part`. */
export const uploadedPartSchema = z.object({ part_number: z.number().int(), etag: z.string() });
/** `job_helpers/uploads/complete`: the object to name in a payload, as a multipart webhook gives a job. */
export const storedObjectSchema = z.object({ s3: z.string(), filename: z.string(), content_type: z.string(), size: z.number().int() });
export type StoredObjectView = z.output<typeof storedObjectSchema>;
/** `job_helpers/uploads/abort`. */
export const abortedUploadSchema = z.object({ aborted: z.literal(true) });

const agree: [
  Same<z.output<typeof runPageSchema>, RunPage>,
  Same<z.output<typeof bulkCancelSchema>, BulkCancelOutcome>,
  Same<CreatedUploadView, CreatedUpload>,
  Same<StoredObjectView, StoredObject>,
  Same<z.output<typeof jobLogUpdateSchema>, JobLogUpdate>,
] = [true, true, true, true, true];
void agree;
