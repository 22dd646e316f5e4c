import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import picomatch from 'picomatch';
import type { Codebase } from './config-schema.js';
import { ItemFileError, type SyncContext } from './items.js';

/**
 * `codebases` (spec 2.9): a script whose file lies in a codebase directory is pushed as one bundle
 * of it and everything it imports, made by esbuild with the codebase's options (or by its
 * customBundler). The server stores the bundle as the script's content; a pull cannot turn a bundle
 * back into sources, so it leaves codebase scripts' files alone.
 */

const run = promisify(execFile);

const normalizeDir = (dir: string) => dir.replace(/^\.\//, '').replace(/\/+$/, '');

/** The codebase a file belongs to: inside its directory, matching its includes and not its excludes. */
export function codebaseOf(ctx: Pick<SyncContext, 'codebases'>, file: string): Codebase | undefined {
  return ctx.codebases.find((cb) => {
    const dir = normalizeDir(cb.relative_path);
    const inside = dir === '' || dir === '.' ? file : file.startsWith(dir + '/') ? file.slice(dir.length + 1) : null;
    if (inside === null) return false;
    if (cb.includes?.length && !picomatch.isMatch(inside, cb.includes, { dot: true })) return false;
    return !(cb.excludes?.length && picomatch.isMatch(inside, cb.excludes, { dot: true }));
  });
}

type Loader = 'js' | 'jsx' | 'ts' | 'tsx' | 'json' | 'text' | 'base64' | 'dataurl' | 'binary' | 'empty' | 'copy' | 'css' | 'file';

/** Bundles `file` (relative to the project root); the bundle is the script's content. */
export async function bundleScript(ctx: SyncContext, cb: Codebase, file: string): Promise<string> {
  const cwd = resolve(ctx.root, cb.relative_path);
  const entry = resolve(ctx.root, file);
  let bundle: string;
  if (cb.customBundler) {
    const bundler = resolve(ctx.root, cb.customBundler);
    if (!existsSync(bundler)) throw new ItemFileError(file, `customBundler ${cb.customBundler}: no such file (svc.yaml codebases paths are relative to svc.yaml)`);
    // The custom bundler gets the entry file and writes the bundle to its standard output.
    try {
      const { stdout } = await run(process.execPath, [bundler, entry], { cwd, maxBuffer: 64 * 1024 * 1024 });
      bundle = stdout;
    } catch (e) {
      // Its own error message, not Node's stack trace of it.
      const stderr = (e as { stderr?: string }).stderr?.trim() ?? '';
      const message = stderr.split('\n').find((l) => /error/i.test(l)) ?? stderr.split('\n')[0] ?? '';
      throw new ItemFileError(file, `customBundler ${cb.customBundler} failed (exit ${(e as { code?: number }).code ?? '?'}): ${message || (e as Error).message.split('\n')[0]}`);
    }
  } else {
    const { build } = await import('esbuild');
    try {
      const result = await build({
        entryPoints: [entry],
        absWorkingDir: cwd,
        bundle: true,
        write: false,
        platform: 'node',
        format: cb.format ?? 'esm',
        external: cb.external,
        inject: cb.inject?.map((f) => resolve(cwd, f)),
        define: cb.define,
        banner: cb.banner,
        loader: cb.loader as Record<string, Loader> | undefined,
        logLevel: 'silent',
      });
      bundle = result.outputFiles[0].text;
    } catch (e) {
      throw new ItemFileError(file, `bundling failed: ${(e as Error).message.split('\n').slice(0, 4).join(' ')}`);
    }
    if (cb.format === 'cjs') bundle = asEsModule(bundle);
  }
  if (cb.assets?.length) copyAssets(ctx, cb, file, bundle);
  return bundle;
}

/**
 * Scripts run as ES modules, so a CommonJS bundle runs inside a function given the `module`,
 * `exports` and `require` it expects, and its `main` is exported from there.
 */
export function asEsModule(cjs: string): string {
  return `import { createRequire as __svcCreateRequire } from 'node:module';
import { fileURLToPath as __svcFileUrlToPath } from 'node:url';
const __svcModule = { exports: {} };
(function (module, exports, require, __filename, __dirname) {
${cjs}
})(__svcModule, __svcModule.exports, __svcCreateRequire(import.meta.url), __svcFileUrlToPath(import.meta.url), __svcFileUrlToPath(new URL('.', import.meta.url)));
export async function main(...args) {
  return __svcModule.exports.main(...args);
}
`;
}

/**
 * A script on this server is one file, so assets cannot travel with it: they are copied beside the
 * bundle under `.svc-sync/bundles/<script>/`, for inspection and for deploying them yourself.
 */
function copyAssets(ctx: SyncContext, cb: Codebase, file: string, bundle: string): void {
  const out = join(ctx.root, '.svc-sync', 'bundles', file);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'bundle.js'), bundle);
  for (const asset of cb.assets ?? []) {
    cpSync(resolve(ctx.root, cb.relative_path, asset.from), join(out, asset.to), { recursive: true });
  }
  ctx.warn(`${file}: assets copied to ${join('.svc-sync', 'bundles', file)}; this server stores a script as one file, so they are not uploaded`);
}
