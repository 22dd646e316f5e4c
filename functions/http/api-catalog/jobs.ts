import { z } from 'zod';
import { previewFlowBody } from '../../core/flows/flow-preview.js';
import type { ApiOperation, ApiResponse } from '../../core/openapi/api-document.js';
import { createBody as createUploadBody, completeBody, abortBody } from '../../core/uploads/upload-sessions.js';
import { consentBody } from '../../core/approvals/consent.js';
import { runFilterSchema } from '../../core/console/run-filter.js';
import { requestBody as slackApprovalBody } from '../../core/chat/chat-approval-request.js';
import { requestBody as teamsApprovalBody } from '../../core/chat/teams-request.js';
import { body as teamsMessageBody } from '../../core/chat/teams-basic.js';
import { cancelBody, listQuery } from '../job-routes.js';
import { cancelSelection } from '../console-api-routes.js';
import { cancelStepBody } from '../flow-routes.js';
import { progressBody } from '../windmill-compat-routes.js';
import { jobListSchema, jobWithFlowStatusSchema } from '../../core/views/job-view.js';
import { previewBody } from '../../core/scripts/script-preview.js';
import { canceledStepSchema, consentOutcomeSchema, resumeOutcomeSchema, resumeUrlsSchema } from '../../core/views/approval-views.js';
import { abortedUploadSchema, bulkCancelSchema, jobLogUpdateSchema, createdUploadSchema, runPageSchema, storedObjectSchema, uploadedPartSchema } from '../../core/views/run-views.js';
import { completedListQuery, queueListQuery } from '../../core/runs/windmill-compat.js';
import { created, createdText, json, sse, text, ws } from './helpers.js';

const RUN_TARGETS = [
  { segment: 'p/:path{.+}', what: 'the latest version of the script at a path' },
  { segment: 'h/:hash', what: 'a script version by its hash' },
  { segment: 'f/:path{.+}', what: 'the latest version of the flow at a path' },
  { segment: 'fv/:version', what: 'a flow version by its id' },
];

const SYNC: ApiResponse = json('The run\'s result (a failed run answers 200 with {"error": ...}); a result with svc_status_code, svc_content_type or svc_headers sets the status, type and headers');
const STREAM = sse('The job\'s updates as server-sent events until it completes, then its result');

/** The webhooks of every script and flow: async, sync (POST, or GET with `payload`), and streamed. */
const runOperations: ApiOperation[] = RUN_TARGETS.flatMap(({ segment, what }): ApiOperation[] => [
  { method: 'post', path: ws(`/jobs/run/${segment}`), tag: 'webhooks', summary: `Queue a run of ${what}`, body: 'arguments', response: createdText('The job id (poll GET jobs_u/get/{id})') },
  { method: 'post', path: ws(`/jobs/run_wait_result/${segment}`), tag: 'webhooks', summary: `Run ${what} and wait for its result`, body: 'arguments', response: SYNC },
  { method: 'get', path: ws(`/jobs/run_wait_result/${segment}`), tag: 'webhooks', summary: `Run ${what} with the arguments in \`payload\` (JSON, then URL-safe base64) and wait`, response: SYNC },
  { method: 'post', path: ws(`/jobs/run_and_stream/${segment}`), tag: 'webhooks', summary: `Run ${what} and stream its updates`, body: 'arguments', response: STREAM },
  { method: 'get', path: ws(`/jobs/run_and_stream/${segment}`), tag: 'webhooks', summary: `Run ${what} (arguments in \`payload\`) and stream its updates`, response: STREAM },
]);

/** Jobs and runs, the console's API, uploads, approvals and chat callbacks. */
export const jobOperations: ApiOperation[] = [
  ...runOperations,
  { method: 'post', path: ws('/jobs/run/preview'), tag: 'webhooks', summary: 'Test-run code that is not saved (the script editor): needs the rights to write a script at `path` and to run it', body: previewBody, response: createdText('The job id (poll GET jobs_u/get/{id})') },
  { method: 'post', path: ws('/jobs/run/preview_flow'), tag: 'webhooks', summary: 'Test-run a flow that is not saved (the flow editor): checked as a save is; needs the rights to write a flow at `path` and to run it', body: previewFlowBody, response: createdText('The flow job id (poll GET jobs_u/get/{id})') },
  { method: 'post', path: ws('/jobs/run_wait_result/preview'), tag: 'webhooks', summary: 'Test-run code that is not saved and wait for its result (Windmill clients\' runScriptPreviewAndWaitResult)', body: previewBody, response: SYNC },
  { method: 'post', path: ws('/jobs/run_wait_result/preview_flow'), tag: 'webhooks', summary: 'Test-run a flow that is not saved and wait for its result (Windmill clients\' runFlowPreviewAndWaitResult)', body: previewFlowBody, response: SYNC },
  { method: 'get', path: ws('/jobs_u/get/:id'), tag: 'jobs', summary: 'A job: its state, arguments, result and logs (a flow: its steps)', response: json('The job', jobWithFlowStatusSchema) },
  { method: 'get', path: ws('/jobs_u/getupdate/:id'), tag: 'jobs', summary: 'What a running job wrote since a log offset', response: json('Whether it runs or ended, and its logs from `log_offset`', jobLogUpdateSchema) },
  { method: 'get', path: ws('/jobs_u/getupdate_sse/:id'), tag: 'jobs', summary: 'A job\'s updates as server-sent events', response: sse('Updates until the job completes') },
  { method: 'get', path: ws('/job_u/getupdate_sse/:id'), tag: 'jobs', summary: 'A job\'s updates as server-sent events (Windmill\'s spelling)', response: sse('Updates until the job completes') },
  { method: 'get', path: ws('/jobs_u/completed/get_result/:id'), tag: 'jobs', summary: 'A completed job\'s result', response: json('The result') },
  { method: 'get', path: ws('/jobs_u/completed/get_result_maybe/:id'), tag: 'jobs', summary: 'A job\'s result if it has completed (Windmill clients)', response: json('`{completed, result}`') },
  { method: 'post', path: ws('/jobs/flow/user_states/:id/:key{.+}'), tag: 'jobs', summary: 'Set a value the steps of a flow run share by key (Windmill clients\' setFlowUserState); the body is the value', body: z.unknown().describe('The value: any JSON'), response: text('Set') },
  { method: 'get', path: ws('/jobs/flow/user_states/:id/:key{.+}'), tag: 'jobs', summary: 'The value a flow run\'s steps set under a key, null when none (Windmill clients\' getFlowUserState)', response: json('The value') },
  { method: 'post', path: ws('/job_metrics/set_progress/:id'), tag: 'jobs', summary: 'Set a job\'s progress in percent (Windmill clients\' setProgress): for a caller who may cancel the job', body: progressBody, response: text('Set') },
  { method: 'get', path: ws('/job_metrics/get_progress/:id'), tag: 'jobs', summary: 'A job\'s progress in percent as it last set it, null when it set none (Windmill clients\' getProgress)', response: json('The percent, or null') },
  { method: 'get', path: ws('/jobs_u/completed/get/:id'), tag: 'jobs', summary: 'A job that has ended, as jobs_u/get shows it; 404 not_completed while it runs (Windmill clients\' getCompletedJob)', response: json('The job', jobWithFlowStatusSchema) },
  { method: 'get', path: ws('/jobs/queue/list'), tag: 'jobs', summary: 'Jobs queued or running, newest first (Windmill clients\' listQueue)', query: queueListQuery, response: json('Jobs', jobListSchema) },
  { method: 'get', path: ws('/jobs/completed/list'), tag: 'jobs', summary: 'Jobs that ended, newest first (Windmill clients\' listCompletedJobs)', query: completedListQuery, response: json('Jobs', jobListSchema) },
  { method: 'get', path: ws('/jobs_u/get_logs/:id'), tag: 'jobs', summary: 'A job\'s logs as text (Windmill clients\' getJobLogs)', response: text('The logs') },
  { method: 'get', path: ws('/jobs_u/get_root_job_id/:id'), tag: 'jobs', summary: 'The id of the flow a job belongs to, or its own (Windmill clients)', response: json('The root job id') },
  { method: 'post', path: ws('/jobs_u/queue/cancel/:id'), tag: 'jobs', summary: 'Cancel a queued or running job', body: cancelBody, bodyOptional: true, response: text('Canceled') },
  { method: 'get', path: ws('/jobs/list'), tag: 'jobs', summary: 'Recent jobs, newest first', query: listQuery, response: json('Jobs', jobListSchema) },

  { method: 'get', path: ws('/jobs/runs'), tag: 'console', summary: 'Runs, filtered and paged by cursor (the console\'s runs page)', query: runFilterSchema, response: json('A page of runs and the next page\'s cursor', runPageSchema) },
  { method: 'get', path: ws('/jobs/runs_sse'), tag: 'console', summary: 'The filtered runs as server-sent events, sent again when they change', query: runFilterSchema, response: sse('Pages of runs') },
  { method: 'post', path: ws('/jobs/queue/cancel_selection'), tag: 'console', summary: 'Cancel several jobs (a list of ids, or {ids, reason})', body: cancelSelection, response: json('The ids canceled and those that were not', bulkCancelSchema) },

  { method: 'post', path: ws('/job_helpers/uploads/create'), tag: 'uploads', summary: 'Start a large upload: the URLs to PUT its parts to', body: createUploadBody, response: created('The upload and its part URLs', createdUploadSchema) },
  { method: 'put', path: ws('/job_helpers/uploads/part'), tag: 'uploads', summary: 'Upload one part to the signed URL create gave (local shell; on AWS the part URLs are S3\'s, which answer the ETag header only)', auth: 'signed', body: 'binary', response: json('The part\'s number and ETag', uploadedPartSchema) },
  { method: 'post', path: ws('/job_helpers/uploads/complete'), tag: 'uploads', summary: 'Finish an upload: the file key to name in a payload', body: completeBody, response: json('The stored file', storedObjectSchema) },
  { method: 'post', path: ws('/job_helpers/uploads/abort'), tag: 'uploads', summary: 'Abandon an upload', body: abortBody, response: json('Abandoned', abortedUploadSchema) },
  { method: 'get', path: ws('/job_helpers/download_s3_file'), tag: 'uploads', summary: 'Download a file a job was given (`file_key`); on AWS a redirect to S3', response: { type: 'binary', description: 'The file' } },

  { method: 'get', path: ws('/jobs/resume_urls/:job/:resumeId'), tag: 'approvals', summary: 'The signed resume, cancel and approval-page URLs of a suspended step', response: json('The resume, cancel and approval-page URLs', resumeUrlsSchema) },
  { method: 'get', path: ws('/jobs_u/resume/:job/:resumeId/:signature'), tag: 'approvals', summary: 'Approve a suspended step by its signed URL (values in the query)', auth: 'signed', response: json('The approvals counted and how many the step needs', resumeOutcomeSchema) },
  { method: 'post', path: ws('/jobs_u/resume/:job/:resumeId/:signature'), tag: 'approvals', summary: 'Approve a suspended step by its signed URL (form values in the body)', auth: 'signed', body: 'arguments', response: json('The approvals counted and how many the step needs', resumeOutcomeSchema) },
  { method: 'get', path: ws('/jobs_u/cancel/:job/:resumeId/:signature'), tag: 'approvals', summary: 'Reject a suspended step by its signed URL', auth: 'signed', response: json('Rejected', canceledStepSchema) },
  { method: 'post', path: ws('/jobs_u/cancel/:job/:resumeId/:signature'), tag: 'approvals', summary: 'Reject a suspended step by its signed URL, with a reason', auth: 'signed', body: cancelStepBody, bodyOptional: true, response: json('Rejected', canceledStepSchema) },
  { method: 'post', path: '/api/v1/runs/:run_id/consent', tag: 'approvals', summary: 'Decide a ConsentGate', body: consentBody, response: json('The decision recorded and the run\'s status', consentOutcomeSchema) },

  { method: 'post', path: ws('/chat/slack/request_approval/:job'), tag: 'chat approvals', summary: 'Post a suspended step\'s approval request to Slack', body: slackApprovalBody, response: json('Where it was posted') },
  { method: 'post', path: ws('/chat/slack/interactions'), tag: 'chat approvals', summary: 'Slack\'s button callbacks (signed by Slack)', auth: 'chat', response: json('Slack\'s answer') },
  { method: 'post', path: ws('/chat/teams/request_approval/:job'), tag: 'chat approvals', summary: 'Post a suspended step\'s approval request to Microsoft Teams', body: teamsApprovalBody, response: json('Where it was posted') },
  { method: 'post', path: ws('/chat/teams/send_message/:job'), tag: 'chat approvals', summary: 'Send a message to a Teams conversation', body: teamsMessageBody, response: json('Where it was posted') },
  { method: 'post', path: ws('/chat/teams/messages'), tag: 'chat approvals', summary: 'The Teams bot\'s messaging endpoint (Bot Framework JWT)', auth: 'chat', response: json('The bot\'s answer') },
];
