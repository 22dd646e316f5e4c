import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { LANGUAGES, type DependencyInstaller, type Ecosystem, type InputSchema, type Language } from '../../ports.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import { assertItemPath } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { SchemaInferenceError } from '../schema/index.js';
import { denoNpmImports, npmImports, npmRequirements, NpmImportError } from './npm-imports.js';
import { npmLockProblem, npmLockSourceProblem, readNpmLock } from './npm-lock.js';
import { joinLock, MAX_LOCK_CHARS, splitLock } from './lock-header.js';
import { resolveWorkspaceImports } from './workspace-resolution.js';
import { inferScriptSchema } from './workspace-imports.js';
import { normalizeName, pythonRequirements, PythonRequirementError, readPythonLock } from './python-imports.js';

/** Languages whose npm imports svc installs: bare ones for bun and nativets, `npm:` ones for deno. */
const NPM_LANGUAGES: readonly Language[] = ['bun', 'nativets', 'deno'];

/** The ecosystem a language's lock belongs to, or null when svc installs nothing for it. */
export function lockEcosystem(language: Language): Ecosystem | null {
  if (language === 'python3') return 'pypi';
  return NPM_LANGUAGES.includes(language) ? 'npm' : null;
}

/**
 * The lock a new script version is stored with (README: Dependencies). A script that imports no
 * package keeps whatever lock it was given. Otherwise a lock given in svc's format is checked and
 * installed exactly; without one (or with another tool's lock, such as one pulled from Windmill)
 * the imports are resolved now against the instance's registry, so an unknown package or version
 * is refused with its name before anything is stored.
 */
export async function lockDependencies(
  installer: DependencyInstaller | null | undefined,
  language: Language,
  content: string,
  given: string | undefined,
  /** The workspace scripts it imports (docs/workspace-imports.md): their packages go in the same lock. */
  imported: readonly string[] = [],
): Promise<string | undefined> {
  const ecosystem = lockEcosystem(language);
  if (ecosystem === 'pypi') return lockPython(installer, [content, ...imported], given);
  if (ecosystem !== 'npm') return given;
  let requirements: Record<string, string>;
  try {
    const importsOf = language === 'deno' ? denoNpmImports : npmImports;
    requirements = npmRequirements([content, ...imported].flatMap((c) => importsOf(c)));
  } catch (error) {
    if (error instanceof NpmImportError) throw badRequest('invalid_script', `content: ${error.message}`, { field: 'content' });
    throw error;
  }
  const names = Object.keys(requirements);
  if (names.length === 0) {
    // Kept as given, but an npm lock is still installed for the version's runs: its sources are checked.
    const kept = given ? readNpmLock(given) : null;
    const problem = kept && installer?.ecosystems.includes('npm') ? npmLockSourceProblem(kept, installer.registry('npm')) : null;
    if (problem) throw badRequest('invalid_script', `lock: ${problem}`, { field: 'lock' });
    return given;
  }
  if (!installer?.ecosystems.includes('npm')) {
    throw badRequest('language_unavailable', `content imports ${names.join(', ')}: this server installs no npm packages (README: Dependencies)`, { field: 'content' });
  }
  const givenLock = given ? readNpmLock(given) : null;
  if (given && givenLock) {
    const problem = npmLockProblem(givenLock, names, installer.registry('npm'));
    if (problem) throw badRequest('invalid_script', `lock: ${problem}`, { field: 'lock' });
    return given;
  }
  const resolved = await installer.resolve('npm', requirements);
  if (!resolved.ok) throw badRequest('invalid_script', `content: the imports could not be resolved from ${installer.registry('npm')}: ${resolved.message}`, { field: 'content' });
  // A package of the registry may itself depend on a URL, a path or a git repository.
  const resolvedLock = readNpmLock(resolved.lock);
  const problem = resolvedLock ? npmLockSourceProblem(resolvedLock, installer.registry('npm')) : 'npm wrote no lock';
  if (problem) throw badRequest('invalid_script', `content: the imports resolve to packages svc does not install: ${problem}`, { field: 'content' });
  return resolved.lock;
}

/**
 * The whole lock of a new version: the workspace scripts it imports, each pinned to the version
 * it resolves to now (checked as the creator), then the packages of the script and of those
 * scripts (docs/workspace-imports.md).
 */
export async function lockScript(
  deps: Pick<CoreDeps, 'store' | 'dependencies'>,
  rights: Rights,
  script: { path: string; language: Language; content: string },
  given: string | undefined,
): Promise<string | undefined> {
  const imported = await resolveWorkspaceImports(deps.store, rights, script, given);
  const packages = await lockDependencies(deps.dependencies, script.language, script.content, splitLock(given).packages, imported.map((i) => i.content));
  return joinLock(imported.map((i) => ({ path: i.path, hash: i.hash })), packages);
}

/** The same for a Python script: its imports' distributions and its `# requirements:` block. */
async function lockPython(installer: DependencyInstaller | null | undefined, contents: string[], given: string | undefined): Promise<string | undefined> {
  let requirements: Record<string, string> = {};
  try {
    // The importer's own `# requirements:` pins win over its imports'.
    for (const content of [...contents].reverse()) requirements = { ...requirements, ...pythonRequirements(content) };
  } catch (error) {
    if (error instanceof PythonRequirementError) throw badRequest('invalid_script', `content: ${error.message}`, { field: 'content' });
    throw error;
  }
  const names = Object.keys(requirements);
  if (names.length === 0) return given;
  if (!installer?.ecosystems.includes('pypi')) {
    throw badRequest('language_unavailable', `content needs ${Object.values(requirements).join(', ')}: this server installs no Python distributions (README: Dependencies)`, { field: 'content' });
  }
  const givenLock = given ? readPythonLock(given) : null;
  if (given && givenLock) {
    const locked = new Set(givenLock.map((d) => normalizeName(d.name)));
    const missing = names.filter((n) => !locked.has(n));
    if (missing.length > 0) throw badRequest('invalid_script', `lock: the lock does not cover ${missing.map((n) => requirements[n]).join(', ')}, which the script needs: resolve the lock again`, { field: 'lock' });
    return given;
  }
  const resolved = await installer.resolve('pypi', requirements);
  if (!resolved.ok) throw badRequest('invalid_script', `content: the imports could not be resolved from ${installer.registry('pypi')}: ${resolved.message}`, { field: 'content' });
  return resolved.lock;
}

export const metadataBody = z.strictObject({
  path: z.string(),
  language: z.enum(LANGUAGES),
  content: z.string().max(1_000_000),
  lock: z.string().max(MAX_LOCK_CHARS).nullish(),
});

/**
 * What a create of this script would store beside its content, without creating it: the lock
 * (resolved now, or the given one checked) and the inferred input schema. `svc script
 * generate-metadata` writes the lock beside the script, so that a push installs exactly it.
 */
export async function scriptMetadata(deps: Pick<CoreDeps, 'store' | 'dependencies'>, rights: Rights, body: unknown): Promise<{ lock: string | null; schema: InputSchema }> {
  const input = parseBody(metadataBody, body);
  assertItemPath(input.path);
  rights.check('scripts', 'write', input.path);
  let schema: InputSchema;
  try {
    schema = inferScriptSchema(input.language, input.content);
  } catch (e) {
    if (e instanceof SchemaInferenceError) throw badRequest('invalid_script', `content: ${e.message}`, { field: 'content' });
    throw e;
  }
  const lock = await lockScript(deps, rights, input, input.lock ?? undefined);
  return { lock: lock ?? null, schema };
}
