import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { archiveFlow, createFlow, deleteFlow, flowHistory, flowWarnings, getFlow, listFlows, updateFlow } from '../core/flows/flows.js';
import { validateFlow } from '../core/flows/flow-validate.js';
import { getResumeUrls, resumeStep, type ResumeRequest } from '../core/approvals/resume.js';
import { parseBody } from '../core/common/validation.js';
import { ApiError } from '../core/common/errors.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { parseJsonBody, readJsonBody } from './json-body.js';
import { bearerToken } from './bearer.js';
import { requestText } from './request-text.js';
import { flowListQuery, listQueryOf, pageOf, queryFlag } from './list-query.js';

/** Flows and their versions (docs/spec.md 4), and the resume/cancel URLs of approval steps. */
export function flowRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  // The body stays the path (Windmill's answer); what may go wrong later is said in a header.
  r.post('/flows/create', async (c) => {
    const version = await createFlow(deps, c.get('rights'), await readJsonBody(c));
    warn(c, flowWarnings(version));
    return c.text(version.path, 201);
  });
  r.post('/flows/update/:path{.+}', async (c) => {
    const version = await updateFlow(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c));
    warn(c, flowWarnings(version));
    return c.json(version);
  });
  // The editor's live check: 200 with the errors a create would answer, the step each is in.
  r.post('/flows/validate', async (c) => c.json(await validateFlow(deps, c.get('rights'), await readJsonBody(c))));
  r.get('/flows/get/:path{.+}', async (c) => c.json(await getFlow(deps, c.get('rights'), c.req.param('path'))));
  r.get('/flows/history/p/:path{.+}', async (c) => c.json(await flowHistory(deps, c.get('rights'), c.req.param('path'))));
  r.get('/flows/list', async (c) => {
    const q = listQueryOf(c, flowListQuery);
    return c.json(pageOf(await listFlows(deps, c.get('rights'), q.show_archived === 'true'), q));
  });
  r.post('/flows/archive/:path{.+}', async (c) => c.json(await archiveFlow(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))));
  r.delete('/flows/delete/:path{.+}', async (c) => {
    await deleteFlow(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted flow ${c.req.param('path')}`);
  });

  // What getResumeUrls / get_resume_urls call from inside the step.
  r.get('/jobs/resume_urls/:job/:resumeId', async (c) => {
    const key = { stepJobId: c.req.param('job'), resumeId: resumeIdOf(c.req.param('resumeId')), approver: c.req.query('approver') || null, flowLevel: queryFlag(c, 'flow_level') };
    return c.json(await getResumeUrls(deps, c.get('rights'), key));
  });

  // Spec 4.8: every request to a resume URL counts (GET from a mail link, POST with form values);
  // a GET only as nobody signed in (README: Flows and approval steps).
  r.on(['GET', 'POST'], '/jobs_u/resume/:job/:resumeId/:signature', async (c) => {
    const payload = c.req.method === 'POST' ? await optionalJson(c) : Object.fromEntries(Object.entries(c.req.query()).filter(([k]) => !['approver', 'token', 'flow_level'].includes(k)));
    return decided(c, () => resumeStep(deps, resumeRequest(c), { kind: 'approve', payload }));
  });
  r.on(['GET', 'POST'], '/jobs_u/cancel/:job/:resumeId/:signature', async (c) => {
    const body = c.req.method === 'POST' ? await optionalJson(c) : {};
    const { reason } = parseBody(cancelStepBody, body ?? {});
    return decided(c, async () => {
      await resumeStep(deps, resumeRequest(c), { kind: 'cancel', reason });
      return { canceled: true };
    });
  });

  return r;
}

/** What a cancel URL's POST may carry (other fields are ignored). */
export const cancelStepBody = z.object({ reason: z.string().max(1000).default('') }).passthrough();

export function resumeIdOf(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 0) throw new ApiError(400, 'invalid_resume_id', 'the resume id must be a non-negative integer');
  return id;
}

/**
 * A resume or cancel answer. A GET that may not decide (the step needs a login) sends a browser on
 * to the approval page (303), which decides with a POST; other clients get the 403 naming it.
 */
async function decided(c: Context<AppEnv>, decide: () => Promise<unknown>): Promise<Response> {
  try {
    return c.json(await decide());
  } catch (e) {
    const page = e instanceof ApiError && e.code === 'confirm_on_page' ? e.details?.approval_page : undefined;
    if (typeof page === 'string' && /\btext\/html\b/i.test(c.req.header('accept') ?? '')) return c.redirect(page, 303);
    throw e;
  }
}

function resumeRequest(c: Context<AppEnv>): ResumeRequest {
  // A GET decides as a person only with a token the client sent itself, never by the session
  // cookie a browser attaches to whatever another page makes it request.
  const byGet = c.req.method !== 'POST'; // HEAD is routed as a GET
  const principal = byGet && !bearerToken(c.req.header('authorization'), c.req.query('token')) ? null : (c.get('principal') ?? null);
  return {
    workspaceId: c.get('workspace').id,
    stepJobId: c.req.param('job') as string,
    resumeId: resumeIdOf(c.req.param('resumeId') as string),
    signature: c.req.param('signature') as string,
    approver: c.req.query('approver') || null,
    flowLevel: queryFlag(c, 'flow_level'),
    principal,
    byGet,
  };
}

/** The approval form's values; an empty body is an approval without a form. */
async function optionalJson(c: Context<AppEnv>): Promise<unknown> {
  const text = await requestText(c);
  if (!text.trim()) return {};
  return parseJsonBody(text);
}

/** `svc-warning`: each warning on a line of its own would break the header, so they are joined. */
function warn(c: Context<AppEnv>, warnings: string[]): void {
  if (warnings.length > 0) c.header('svc-warning', warnings.join('; '));
}
