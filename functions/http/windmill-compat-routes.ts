import { Hono } from 'hono';
import { z } from 'zod';
import { getVariable } from '../core/workspace/variables.js';
import { updateResource } from '../core/workspace/resources.js';
import { getFlowUserState, getJobProgress, jobResultMaybe, resourceExists, rootJobId, setFlowUserState, setJobProgress, variableExists } from '../core/runs/windmill-compat.js';
import { parseBody } from '../core/common/validation.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

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

  return r;
}

export const progressBody = z.strictObject({ percent: z.number().int().min(0).max(100), flow_job_id: z.string().nullish() });

// `value` must be present (null is a value); the resource's type decides what it may be.
export const updateValueBody = z.strictObject({ value: z.unknown() }).refine((b) => 'value' in b, { message: 'value: required', path: ['value'] });
