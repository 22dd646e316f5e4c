import { z } from 'zod';
import { ApiError } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { assertItemPath } from '../common/paths.js';
import { moduleFields } from './definition.js';
import { checkChatChannels, checkDefinition, flowBody } from './flows.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';

/**
 * A flow checked by the rules a create or update applies, without storing anything (the flow
 * editor's live check). The answer names the step an error is about — its id and the field that
 * holds it (`value.modules.1`) — so an editor can point at it. Inline Go steps are built only by
 * a save: a build error shows then.
 */

export interface FlowProblem {
  message: string;
  /** The field the error is about, as the create's 400 names it (`value.modules.0.value.content`). */
  field: string;
  /** The step that holds it, when it is inside one. */
  step: { id: string | null; field: string } | null;
}

/** Like a create's body; the path may be left out (a new flow not named yet). */
export const validateFlowBody = flowBody.extend({ path: z.string().optional() });

export async function validateFlow(deps: Pick<CoreDeps, 'store' | 'topics'>, rights: Rights, body: unknown): Promise<{ errors: FlowProblem[] }> {
  // Only those who may write some flow need it; it reads nothing but the workspace's chat connections.
  rights.check('flows', 'write');
  let parsed: z.infer<typeof validateFlowBody> | undefined;
  try {
    // Windmill's own fields as a create takes them: none at their defaults, the one set named.
    const input = (parsed = parseBody(validateFlowBody, withoutWindmillDefaults('flow', body)));
    if (input.path !== undefined && input.path !== '') assertItemPath(input.path);
    checkDefinition(input.value, !!deps.topics);
    await checkChatChannels(deps, rights, input.value);
    return { errors: [] };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    const field = typeof error.details?.field === 'string' ? error.details.field : 'body';
    return { errors: [{ message: error.message, field, step: stepOf(body, parsed, field, error.details?.step) }] };
  }
}

/**
 * The step a field is in: the deepest module the field passes through in the body as sent (which
 * need not be valid), or the module the error names by id.
 */
function stepOf(body: unknown, parsed: z.infer<typeof validateFlowBody> | undefined, field: string, stepId: unknown): FlowProblem['step'] {
  if (typeof stepId === 'string') {
    const found = parsed ? moduleFields(parsed.value).find((m) => m.module.id === stepId) : undefined;
    return found ? { id: stepId, field: found.field } : null;
  }
  let step: FlowProblem['step'] = null;
  let node: unknown = body;
  const walked: string[] = [];
  const segments = field.split('.');
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i];
    const inList = walked.length > 0 && ['modules', 'default'].includes(walked[walked.length - 1]) && Array.isArray(node);
    // `value.modules.<id>.path`: a step named by its id rather than its place.
    if (inList && !/^\d+$/.test(segment)) {
      const at = (node as unknown[]).findIndex((m) => (m as { id?: unknown } | null)?.id === segment);
      if (at < 0) break;
      segment = String(at);
    }
    if (node === null || typeof node !== 'object' || !(segment in node)) break;
    node = (node as Record<string, unknown>)[segment];
    walked.push(segment);
    if (inList || segment === 'failure_module') {
      const id = (node as { id?: unknown } | null)?.id;
      step = { id: typeof id === 'string' ? id : null, field: walked.join('.') };
    }
  }
  return step;
}
