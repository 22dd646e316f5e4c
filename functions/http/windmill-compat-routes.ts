import { Hono } from 'hono';
import { z } from 'zod';
import { getVariable } from '../core/workspace/variables.js';
import { updateResource } from '../core/workspace/resources.js';
import { completedJob, flowExists, getFlowUserState, getJobProgress, jobLogs, jobResultMaybe, memberEmail, namesOf, resourceExists, rootJobId, scriptDeploymentStatus, scriptExists, setFlowUserState, setJobProgress, variableExists, windmillJobList, workspaceMember, workspaceWhoami } from '../core/runs/windmill-compat.js';
import { listScripts } from '../core/scripts/scripts.js';
import { listFlows } from '../core/flows/flows.js';
import { listFolders } from '../core/identity/folders.js';
import { listGroups } from '../core/identity/groups.js';
import { listMembers } from '../core/identity/members.js';
import { listResourceTypes } from '../core/workspace/resource-types.js';
import { jobView } from '../core/jobs/jobs.js';
import { getFlowRun, withFlowStatus } from '../core/flows/run-state.js';
import { parseBody } from '../core/common/validation.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf } from './list-query.js';

/**
 * The paths Windmill's client libraries call that svc's own API names differently or answers in
 * another shape (docs/windmill.md). Each is a thin route onto the same core call and permission
 * check as svc's own; the paths both share (variables/get, resources/get_value_interpolated,
 * jobs/run/p, jobs/resume_urls, ...) are svc's own routes.
 */
export function windmillCompatRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  // getVariable / get_variable: the value alone, as a JSON string.
  r.get('/variables/get_value/:path{.+}', async (c) => c.json((await getVariable(deps, c.get('rights'), c.req.param('path'))).value));
  // setVariable asks first whether to create or update.
  r.get('/variables/exists/:path{.+}', async (c) => c.json(await variableExists(deps, c.get('rights'), c.req.param('path'))));

  r.get('/resources/exists/:path{.+}', async (c) => c.json(await resourceExists(deps, c.get('rights'), c.req.param('path'))));
  // setResource / setState / set_resource: a new value for an existing resource, its type kept.
  r.post('/resources/update_value/:path{.+}', async (c) => {
    const { value } = parseBody(updateValueBody, await readJsonBody(c));
    const path = c.req.param('path');
    await updateResource(deps, c.get('rights'), path, { value });
    return c.text(`value of resource ${path} updated`);
  });

  // waitJob / wait_job poll this until `completed`.
  r.get('/jobs_u/completed/get_result_maybe/:id', async (c) => c.json(await jobResultMaybe(deps, c.get('rights'), c.req.param('id'))));
  r.get('/jobs_u/get_root_job_id/:id', async (c) => c.json(await rootJobId(deps, c.get('rights'), c.req.param('id'))));

  // setFlowUserState / getFlowUserState: values the steps of one flow run share by key (the body is the value).
  r.post('/jobs/flow/user_states/:id/:key{.+}', async (c) => {
    await setFlowUserState(deps, c.get('rights'), c.req.param('id'), c.req.param('key'), await readJsonBody(c));
    return c.text('flow user state set');
  });
  r.get('/jobs/flow/user_states/:id/:key{.+}', async (c) => c.json(await getFlowUserState(deps, c.get('rights'), c.req.param('id'), c.req.param('key'))));

  // setProgress / getProgress: a job's progress in percent (the clients send whole numbers; `flow_job_id` is not used).
  r.post('/job_metrics/set_progress/:id', async (c) => {
    const { percent } = parseBody(progressBody, await readJsonBody(c));
    await setJobProgress(deps, c.get('rights'), c.req.param('id'), percent);
    return c.text('progress set');
  });
  r.get('/job_metrics/get_progress/:id', async (c) => c.json(await getJobProgress(deps, c.get('rights'), c.req.param('id'))));

  // Existence checks and name lists (ScriptService, FlowService, FolderService, ... of windmill-client).
  r.get('/scripts/exists/p/:path{.+}', async (c) => c.json(await scriptExists(deps, c.get('rights'), c.req.param('path'))));
  r.get('/flows/exists/:path{.+}', async (c) => c.json(await flowExists(deps, c.get('rights'), c.req.param('path'))));
  r.get('/scripts/list_paths', async (c) => c.json(await namesOf(listScripts(deps.store, c.get('rights')), (s) => s.path)));
  r.get('/flows/list_paths', async (c) => c.json(await namesOf(listFlows(deps, c.get('rights')), (f) => f.path)));
  r.get('/folders/listnames', async (c) => c.json(await namesOf(listFolders(deps, c.get('rights')), (f) => f.name)));
  r.get('/groups/listnames', async (c) => c.json(await namesOf(listGroups(deps, c.get('rights')), (g) => g.name)));
  r.get('/resources/type/listnames', async (c) => c.json(await namesOf(listResourceTypes(deps, c.get('rights')), (t) => t.name)));
  r.get('/users/list_usernames', async (c) => c.json(await namesOf(listMembers(deps, c.get('rights')), (m) => m.username)));
  // UserService.whoami with a workspace: the caller as a member of it (svc's /api/users/whoami is instance-wide).
  r.get('/users/whoami', async (c) => c.json(await workspaceWhoami(deps, c.get('rights'))));
  // usernameToEmail: the email as text. whois / getUser: another member, in whoami's shape.
  r.get('/users/username_to_email/:username', async (c) => c.text(await memberEmail(deps, c.get('rights'), c.req.param('username'))));
  r.get('/users/whois/:username', async (c) => c.json(await workspaceMember(deps, c.get('rights'), c.req.param('username'))));
  r.get('/users/get/:username', async (c) => c.json(await workspaceMember(deps, c.get('rights'), c.req.param('username'))));
  // Windmill's CLI waits on this after a push; svc locks at create, so a stored version is ready.
  r.get('/scripts/deployment_status/h/:hash', async (c) => c.json(await scriptDeploymentStatus(deps, c.get('rights'), c.req.param('hash'))));

  // getCompletedJob / getJobLogs: a finished job as jobs_u/get shows it, and a job's logs as text.
  r.get('/jobs_u/completed/get/:id', async (c) => {
    const job = await completedJob(deps, c.get('rights'), c.req.param('id'));
    const run = job.kind === 'flow' ? await getFlowRun(deps, job.workspace_id, job.id) : null;
    return c.json(withFlowStatus(jobView(job), run));
  });
  // listQueue / listCompletedJobs: svc's job list, by Windmill's split of queued and finished jobs.
  r.get('/jobs/queue/list', async (c) => c.json((await windmillJobList(deps, c.get('rights'), 'queue', listQueryOf(c, z.record(z.string(), z.string())))).map(jobView)));
  r.get('/jobs/completed/list', async (c) => c.json((await windmillJobList(deps, c.get('rights'), 'completed', listQueryOf(c, z.record(z.string(), z.string())))).map(jobView)));
  r.get('/jobs_u/get_logs/:id', async (c) => c.text(await jobLogs(deps, c.get('rights'), c.req.param('id'))));

  return r;
}

export const progressBody = z.strictObject({ percent: z.number().int().min(0).max(100), flow_job_id: z.string().nullish() });

// `value` must be present (null is a value); the resource's type decides what it may be.
export const updateValueBody = z.strictObject({ value: z.unknown() }).refine((b) => 'value' in b, { message: 'value: required', path: ['value'] });
