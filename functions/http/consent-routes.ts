import { Hono } from 'hono';
import { decideConsent } from '../core/approvals/consent.js';
import { ApiError } from '../core/common/errors.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

/** The ConsentGate endpoint (docs/spec.md 4.7): a decision for the gate a run waits at. */
export function consentRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/runs/:run_id/consent', async (c) => {
    const principal = c.get('principal');
    if (!principal) throw new ApiError(401, 'unauthorized', 'a Bearer token is required');
    return c.json(await decideConsent(deps, principal, c.req.param('run_id'), await readJsonBody(c)));
  });
  return r;
}
