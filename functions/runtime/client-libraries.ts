import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyCodeFile, makeCodeDir, writeCodeFile } from './sandbox-process.js';

/**
 * The client libraries scripts import with no install step: TypeScript `svc-client` and Python
 * `svc`. Each process gets a copy inside its own code dir, because that dir is all a sandboxed
 * script may read (Node's --allow-fs-read), and there the language's ordinary module lookup finds
 * it: `node_modules/svc-client` beside main.mjs, `svc/` beside the shim (Python puts the started
 * script's dir first on sys.path). A few small files per warm start, none per job.
 */

const TS_CLIENT = 'clients/ts/svc-client';
const PY_CLIENT = 'clients/python/svc';
const GO_CLIENT = 'clients/go';
/** Windmill's TypeScript client as svc ships it (the version pinned in package.json), in a bundle; `node_modules/windmill-client` in a checkout. */
const WINDMILL_CLIENT = 'clients/ts/windmill-client';

/** Copies `svc-client` so that `import … from 'svc-client'` in `<procDir>/main.mjs` resolves. */
export async function installTypeScriptClient(procDir: string): Promise<void> {
  // Node looks for the importing module's package.json up to the filesystem root, outside the
  // dir the script may read; this one ends the search here, so no stray package.json above
  // (in a shared /tmp, say) can redirect the import.
  await writeCodeFile(join(procDir, 'package.json'), '{}\n');
  const modules = join(procDir, 'node_modules');
  await makeCodeDir(modules);
  await copyTree(clientSource(TS_CLIENT), join(modules, 'svc-client'));
}

/**
 * Whether TypeScript code imports Windmill's client by name (`import * as wmill from
 * "windmill-client"`, a named or dynamic import).
 */
export function importsWindmillClient(code: string): boolean {
  return /(?:\bfrom|\bimport\s*\(?)\s*['"]windmill-client['"]/.test(code);
}

/**
 * Makes `windmill-client` importable from `<procDir>/main.mjs` when nothing else does: code
 * without a lock naming it (an inline flow step that imports no other package) gets the version svc
 * ships, as it gets `svc-client`; a script whose lock installed the package keeps its own (the
 * tree's link is already there). Only the ES modules Node loads are copied.
 */
export async function installWindmillClient(procDir: string): Promise<void> {
  const target = join(procDir, 'node_modules', 'windmill-client');
  if (existsSync(target)) return;
  await copyTree(windmillClientSource(), target, (name) => name === 'package.json' || name.endsWith('.mjs') || !name.includes('.'));
}

/** Copies `svc-client` to `<dir>/svc-client`, where a Deno job's import map points the bare name. */
export async function installDenoClient(dir: string): Promise<string> {
  const target = join(dir, 'svc-client');
  await copyTree(clientSource(TS_CLIENT), target);
  return join(target, 'index.mjs');
}

/** Copies the `svc` package next to the Python shim, so that `import svc` finds it. */
export async function installPythonClient(procDir: string): Promise<void> {
  await copyTree(clientSource(PY_CLIENT), join(procDir, 'svc'));
}

/** The Go module `svc`, which Go script builds point their `replace` directive at (it is never copied into a job: the binary holds it). */
export function goClientDir(): string {
  return clientSource(GO_CLIENT);
}

/**
 * Where a client's files are. In a checkout this module sits in functions/runtime/; in the Node
 * sandbox bundle the runtime is the asset's index.mjs, beside which the stack copies the clients
 * under the same relative path. The bundle's place is tried first, so a bundle never falls back
 * to a checkout that happens to sit above it.
 */
function clientSource(relative: string): string {
  const candidates = [new URL(`./${relative}`, import.meta.url), new URL(`../../${relative}`, import.meta.url)].map((url) =>
    fileURLToPath(url),
  );
  const found = candidates.find((dir) => existsSync(dir));
  if (!found) throw new Error(`the client library ${relative} was not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** The shipped windmill-client: beside the bundle, or the checkout's installed package. */
function windmillClientSource(): string {
  const candidates = [new URL(`./${WINDMILL_CLIENT}`, import.meta.url), new URL('../../node_modules/windmill-client', import.meta.url)].map((url) =>
    fileURLToPath(url),
  );
  const found = candidates.find((dir) => existsSync(join(dir, 'package.json')));
  if (!found) throw new Error(`the client library windmill-client was not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** A read-only copy for the sandbox user: dirs 0755, files 0644, no bytecode caches; `keep` chooses the files copied. */
async function copyTree(from: string, to: string, keep: (name: string) => boolean = () => true): Promise<void> {
  await makeCodeDir(to);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (entry.name === '__pycache__' || entry.name.endsWith('.pyc')) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) await copyTree(source, target, keep);
    else if (entry.isFile() && keep(entry.name)) await copyCodeFile(source, target);
  }
}
