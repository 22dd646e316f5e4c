import { ApiError, badRequest } from '../common/errors.js';
import { lockEcosystem, lockScript } from '../dependencies/lock-script.js';
import { splitLock } from '../dependencies/lock-header.js';
import { denoNpmImports, npmImports, NpmImportError } from '../dependencies/npm-imports.js';
import { pythonRequirements, PythonRequirementError } from '../dependencies/python-imports.js';
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
export function importsPackages(language: Language, content: string): boolean {
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

/** The lock of each inline step that imports packages, by step id; a step that cannot be locked is refused, named. */
export async function lockInlineSteps(deps: Pick<CoreDeps, 'store' | 'dependencies'>, rights: Rights, flowPath: string, value: FlowValue): Promise<Record<string, string>> {
  const locks: Record<string, string> = {};
  for (const m of flowModules(value)) {
    if (m.value.type !== 'rawscript' || !importsPackages(m.value.language, m.value.content)) continue;
    try {
      const lock = await lockScript(deps, rights, { path: `${flowPath}/${m.id}`, language: m.value.language, content: m.value.content }, m.value.lock || undefined);
      if (lock) locks[m.id] = lock;
    } catch (e) {
      if (e instanceof ApiError && e.status === 400) throw badRequest('invalid_flow', `value.modules: module ${m.id}: ${e.message}`, { field: 'value.modules', step: m.id });
      throw e;
    }
  }
  return locks;
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
