import { z } from 'zod';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { assertItemPath } from '../common/paths.js';
import { flowValue } from './definition.js';
import { flowBody, storeVersion } from './flows.js';
import { pushFlowJob } from './run-flow.js';
import { defaultPreviewPath } from '../scripts/script-preview.js';
import { newJobId } from '../common/crypto.js';
import type { JobOrigin } from '../jobs/jobs.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import type { Job } from '../../ports.js';

/**
 * Test runs of a flow that is not saved (Windmill's `jobs/run/preview_flow`): the flow editor runs
 * the flow as it is in the editor. The flow is checked as a save would check it and kept as a
 * version marked `preview`, which the path's history does not list and no `fv/` URL runs; the run
 * is an ordinary flow run of that version (its steps, approvals and run page as for any run).
 *
 * Who may: whoever may both write a flow at the path and run what is there — a test run does
 * nothing a save followed by a run could not.
 */
export const previewFlowBody = z.strictObject({
  path: z.string().optional(),
  value: flowValue,
  schema: flowBody.shape.schema,
  args: z.record(z.string(), z.unknown()).default({}),
});

/** Starts a test run of an unsaved flow (as job `id`). Without a path, at `u/<caller>/preview_flow`. */
export async function startFlowPreview(deps: CoreDeps, rights: Rights, body: unknown, origin: JobOrigin = {}, id: string = newJobId()): Promise<Job> {
  // Windmill's own fields as a save takes them (its editor sends its preview so).
  const input = parseBody(previewFlowBody, withoutWindmillDefaults('flow_preview', body));
  const path = input.path ?? defaultPreviewPath(rights, 'preview_flow');
  assertItemPath(path);
  rights.check('flows', 'write', path);
  rights.check('jobs', 'run', path);
  const version = await storeVersion(deps, rights, { path, summary: '', description: '', value: input.value, schema: input.schema, deployment_message: null }, true);
  return pushFlowJob(deps, rights.principal, version, rights.workspaceId, input.args, id, origin);
}
