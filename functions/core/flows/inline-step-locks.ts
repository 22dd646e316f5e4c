import { ApiError, badRequest } from '../common/errors.js';
import { lockEcosystem, lockScript } from '../dependencies/lock-script.js';
import { splitLock } from '../dependencies/lock-header.js';
import { denoNpmImports, npmImports, NpmImportError, npmRequirements } from '../dependencies/npm-imports.js';
import { pythonRequirements, PythonRequirementError } from '../dependencies/python-imports.js';
import { workspaceImports } from '../dependencies/workspace-imports.js';
import { flowModules, type FlowValue } from './definition.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Language } from '../../ports.js';

/**
 * The packages of a flow's inline steps (docs/scripts.md, Dependencies): a step whose code imports
 * packages gets a lock as a script does, resolved when the flow version is created (or the lock it
 * was given, checked), installed off the request path, and its runs import from that tree. The
 * locks are kept beside the definition (the version's `step_locks`, by step id), not in it: the
 * definition stays what its author wrote, and `svc sync` compares it as written.
 *
 * `windmill-client` (and `svc-client`) alone need no lock: an inline step gets the version svc
 * ships, with no registry to ask (docs/windmill.md). A step that imports other packages as well
 * has them all resolved, the client included, as a script's are.
 */

const SHIPPED = new Set(['windmill-client', 'svc-client']);

/** Whether the code of an inline step imports packages svc installs, past the clients it ships. */
function importsPackages(language: Language, content: string): boolean {
  try {
    if (language === 'python3') return Object.keys(pythonRequirements(content)).length > 0;
    if (language === 'deno') return denoNpmImports(content).some((i) => !SHIPPED.has(i.name));
    if (lockEcosystem(language) === 'npm') return npmImports(content).some((i) => !SHIPPED.has(i.name));
  } catch (e) {
    // A malformed import is the lock's to refuse, with its message.
    if (e instanceof NpmImportError || e instanceof PythonRequirementError) return true;
    throw e;
  }
  return false;
}

/**
 * The most package sets one flow version resolves: each is a confined npm or pip run of its own
 * (seconds), all within the create request. Steps that import the same packages share one.
 */
const MAX_INLINE_RESOLUTIONS = 20;

/** The lock of each inline step that imports packages, by step id; a step that cannot be locked is refused, named. */
export async function lockInlineSteps(deps: Pick<CoreDeps, 'store' | 'dependencies'>, rights: Rights, flowPath: string, value: FlowValue): Promise<Record<string, string>> {
  const locks: Record<string, string> = {};
  const resolved = new Map<string, string | undefined>();
  for (const m of flowModules(value)) {
    if (m.value.type !== 'rawscript' || !importsPackages(m.value.language, m.value.content)) continue;
    const path = `${flowPath}/${m.id}`;
    const given = m.value.lock || undefined;
    const key = packageSetKey(m.value.language, path, m.value.content, given);
    try {
      if (key === null || !resolved.has(key)) {
        if (resolved.size >= MAX_INLINE_RESOLUTIONS) {
          throw badRequest('invalid_flow', `value.modules: module ${m.id}: the flow's inline steps import more than ${MAX_INLINE_RESOLUTIONS} different sets of packages; put shared code in a script and call it with a script step`, { field: 'value.modules', step: m.id });
        }
        const lock = await lockScript(deps, rights, { path, language: m.value.language, content: m.value.content }, given);
        resolved.set(key ?? `step ${m.id}`, lock);
      }
      const lock = resolved.get(key ?? `step ${m.id}`);
      if (lock) locks[m.id] = lock;
    } catch (e) {
      if (e instanceof ApiError && e.status === 400 && e.code !== 'invalid_flow') throw badRequest('invalid_flow', `value.modules: module ${m.id}: ${e.message}`, { field: 'value.modules', step: m.id });
      throw e;
    }
  }
  return locks;
}

/**
 * What a step's lock depends on, for steps that import the same packages to share one: null when
 * it imports workspace scripts too (their pins are its own).
 */
function packageSetKey(language: Language, path: string, content: string, given: string | undefined): string | null {
  try {
    if (workspaceImports(language, path, content).length > 0) return null;
    const packages = language === 'python3' ? pythonRequirements(content) : npmRequirements(language === 'deno' ? denoNpmImports(content) : npmImports(content));
    return JSON.stringify([language, Object.entries(packages).sort(), given ?? null]);
  } catch {
    return null;
  }
}

/** Starts installing the steps' packages off the request path: a run of a step waits for its own. */
export function prepareInlineSteps(deps: Pick<CoreDeps, 'dependencies'>, value: FlowValue, locks: Record<string, string>): void {
  for (const m of flowModules(value)) {
    const lock = locks[m.id];
    if (!lock || m.value.type !== 'rawscript') continue;
    const ecosystem = lockEcosystem(m.value.language);
    const packages = splitLock(lock).packages;
    if (packages && ecosystem && deps.dependencies?.ecosystems.includes(ecosystem)) deps.dependencies.prepare(ecosystem, packages);
  }
}
