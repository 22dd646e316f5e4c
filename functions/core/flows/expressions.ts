import { newJobId, sha256Hex } from '../common/crypto.js';
import type { Transform } from './definition.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';
import { readPlainPath } from './plain-path.js';
import { withinDepthLimit } from '../common/json-limits.js';

/**
 * JavaScript expressions of a flow (input transforms, branch conditions, loop iterators) run in the
 * sandbox like user code, never in the API or worker process: they are user code. They run as the
 * flow's run-as user, like its steps: the sandbox (a warm process locally, a Lambda tenant on AWS)
 * that evaluates one user's expressions over that user's flow data never evaluates another's.
 * Nor does it evaluate another flow version's: the expressions are the code of whoever wrote the
 * flow, and one that changed the process (a patched `Object.keys`, a global) would read and rewrite
 * the values of every later flow its run-as user ran, as a script version never shares its process.
 */

/** Whose expressions they are: the flow job's workspace, the user it runs as and its flow version. */
export type ExpressionOwner = Pick<Job, 'workspace_id' | 'created_by' | 'flow_version'>;

export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExpressionError';
  }
}

// One fixed evaluator, so each run-as identity keeps one warm evaluator for each flow version's expressions.
const EVALUATOR = `export function main(exprs: string[], scope: Record<string, unknown>) {
  const names = Object.keys(scope);
  const values = names.map((n) => scope[n]);
  return exprs.map((expr, i) => {
    try {
      return { ok: true, value: new Function(...names, '"use strict"; return (' + expr + '\\n);')(...values) };
    } catch (e) {
      return { ok: false, index: i, message: e instanceof Error ? e.message : String(e) };
    }
  });
}
`;
const EVALUATOR_HASH = `expr-${sha256Hex(EVALUATOR).slice(0, 16)}`;
const SCHEMA = { type: 'object' as const, properties: { exprs: {}, scope: {} }, required: ['exprs', 'scope'] };

/** Evaluates the expressions against the scope; throws ExpressionError naming the first failing one. */
export async function evaluate(deps: WorkerDeps, owner: ExpressionOwner, exprs: string[], scope: Record<string, unknown>): Promise<unknown[]> {
  const plain = exprs.map((expr) => readPlainPath(expr, scope));
  const rest = exprs.filter((_, i) => !plain[i]);
  const computed = await evaluateInSandbox(deps, owner, rest, scope);
  let next = 0;
  return plain.map((read) => (read ? read.value : computed[next++]));
}

async function evaluateInSandbox(deps: WorkerDeps, owner: ExpressionOwner, exprs: string[], scope: Record<string, unknown>): Promise<unknown[]> {
  if (exprs.length === 0) return [];
  const run = deps.runner.run(
    {
      jobId: newJobId(),
      workspaceId: owner.workspace_id,
      language: 'nativets',
      // The flow version keys the warm process (see above): one flow's expressions never run beside another's.
      scriptHash: `${EVALUATOR_HASH}-fv${owner.flow_version ?? 'none'}`,
      content: EVALUATOR,
      args: { exprs, scope },
      schema: SCHEMA,
      // Expressions get no token: they compute values, they do not call the API. The run-as user
      // picks the sandbox (runners key warm processes and Lambda tenants by OV_USERNAME).
      env: { OV_USERNAME: owner.created_by },
      timeoutMs: Math.min(deps.config.jobTimeoutMs, 30_000),
      maxOutputBytes: deps.config.maxOutputBytes,
    },
    { onStream: () => {}, onLog: () => {} },
    new AbortController().signal,
  );
  // Their values become the next step's arguments: as deep as a job's result may be, no deeper.
  const outcome = withinDepthLimit(await run);
  if (!outcome.ok) throw new ExpressionError(`expressions could not be evaluated: ${outcome.error.message}`);
  const results = outcome.result as ({ ok: true; value: unknown } | { ok: false; index: number; message: string })[];
  return results.map((r, i) => {
    if (!r.ok) throw new ExpressionError(`expression ${JSON.stringify(exprs[i])} failed: ${r.message}`);
    return r.value;
  });
}

/** Input transforms to argument values: static ones as they are, javascript ones in one sandbox call. */
export async function applyTransforms(deps: WorkerDeps, owner: ExpressionOwner, transforms: Record<string, Transform>, scope: Record<string, unknown>): Promise<Record<string, unknown>> {
  const entries = Object.entries(transforms);
  const dynamic = entries.filter(([, t]) => t.type === 'javascript') as [string, { type: 'javascript'; expr: string }][];
  const values = await evaluate(deps, owner, dynamic.map(([, t]) => t.expr), scope);
  const computed = new Map(dynamic.map(([name], i) => [name, values[i]]));
  return Object.fromEntries(entries.map(([name, t]) => [name, t.type === 'static' ? t.value : computed.get(name)]));
}
