import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { GoTarget, Language, ScriptCompiler } from '../ports.js';
import { GO_SCRIPT_FILE, goSignature } from '../core/schema/go.js';
import { SchemaInferenceError } from '../core/schema/errors.js';
import { goClientDir } from './client-libraries.js';
import { externalImports, goBuildFiles } from './go-source.js';
import { forgetServesWarm, servesWarm } from './go-warm.js';
import { resolveExecutable } from './sandbox-process.js';

/** A build that takes longer than this is stopped and the script refused. */
const BUILD_TIMEOUT_MS = 180_000;

export interface GoBuildOptions {
  /** Where binaries are kept, by the hash of the script's content (never inside a job's view). */
  cacheDir: string;
  /** An instance Go module proxy (GOPROXY); without one a script may import the standard library and `svc` only. */
  moduleProxy?: string;
}

/** Where the binary of a Go script with this content is (or will be) kept. */
export function goBinaryPath(cacheDir: string, content: string): string {
  const key = createHash('sha256').update(content).digest('hex').slice(0, 32);
  return join(cacheDir, 'bin', key, 'main');
}

/** The `go` command, or undefined when this machine has no Go toolchain. */
export function goToolchain(): string | undefined {
  try {
    return resolveExecutable('go');
  } catch {
    return undefined;
  }
}

/** One line for the start banner: where Go scripts are built, or that they cannot be. */
export function describeGo(): string {
  const go = goToolchain();
  return go ? `go scripts are built with ${go}` : 'go scripts CANNOT be created: no Go toolchain on PATH (apt-get install golang-go)';
}

/**
 * Builds Go scripts with the machine's Go toolchain (Debian's golang-go) when a version is
 * created, into a cache keyed by the content's hash: the same content is built once, and the
 * runner only ever copies a binary into the job. The build runs as the service user, outside any
 * job; it never runs the script's code (cgo is off, so no C toolchain is involved).
 */
export class GoCompiler implements ScriptCompiler {
  readonly languages: readonly Language[];
  private readonly go: string | undefined;
  /** Builds run one at a time: `go build` uses every core already, and creates must not pile up builds. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: GoBuildOptions) {
    this.go = goToolchain();
    this.languages = this.go ? ['go'] : [];
  }

  async compile(language: Language, content: string): Promise<{ ok: true } | { ok: false; message: string }> {
    if (language !== 'go' || !this.go) return { ok: false, message: `this server does not build ${language} scripts` };
    let signature;
    try {
      signature = goSignature(content);
    } catch (error) {
      if (error instanceof SchemaInferenceError) return { ok: false, message: error.message };
      throw error;
    }
    const external = externalImports(signature);
    if (external.length > 0 && !this.options.moduleProxy) {
      return {
        ok: false,
        message: `${GO_SCRIPT_FILE} imports ${external.join(', ')}: this server builds Go scripts with the standard library and the svc client only; an instance Go module proxy (SVC_GO_PROXY) lets scripts import other modules`,
      };
    }
    const binary = goBinaryPath(this.options.cacheDir, content);
    // A binary an older svc built has no serve loop (it would run one process per job): built again.
    const turn = this.queue.then(async () => (existsSync(binary) && (await servesWarm(binary)) ? ({ ok: true } as const) : this.build(content, binary)));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async build(content: string, binary: string): Promise<{ ok: true } | { ok: false; message: string }> {
    const failure = await buildGoBinary(content, binary, { workDir: join(this.options.cacheDir, 'tmp'), gopath: join(this.options.cacheDir, 'gopath'), moduleProxy: this.options.moduleProxy });
    return failure === null ? { ok: true } : { ok: false, message: failure };
  }
}

export interface GoBinaryBuild {
  /** Where the build directory is made (and removed). */
  workDir: string;
  /** Where modules fetched through the proxy are kept. */
  gopath: string;
  moduleProxy?: string;
  /** Cross-compiles for the AWS sandbox; the machine's own platform when absent. */
  target?: GoTarget;
}

/**
 * Builds the program of a Go script (go-source.ts: the same files wherever it is built) into
 * `binary`; null on success, else the compiler's message as the script's author reads it. The
 * local compiler and the CLI (building for the AWS sandbox) both build through here.
 */
export async function buildGoBinary(content: string, binary: string, build: GoBinaryBuild): Promise<string | null> {
  const go = goToolchain();
  if (!go) return 'no Go toolchain on PATH (apt-get install golang-go)';
  await mkdir(build.workDir, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(join(build.workDir, 'build-'));
  try {
    const { files, scriptFile } = goBuildFiles(content, goClientDir());
    for (const [name, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    const failure = await runGoBuild(go, dir, build);
    if (failure !== null) return compilerMessage(failure, dir, scriptFile);
    await mkdir(dirname(binary), { recursive: true, mode: 0o755 });
    await chmod(join(dir, 'main'), 0o755);
    // A rename is atomic: a concurrent create of the same content finds a whole binary or none.
    await rename(join(dir, 'main'), binary);
    forgetServesWarm(binary);
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** null on success, else what the go command printed. */
function runGoBuild(go: string, dir: string, build: GoBinaryBuild): Promise<string | null> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    // Go's own build cache (content-addressed, safe to share): the standard library is compiled
    // once per machine, not once per data directory (a cold cache costs a minute).
    GOCACHE: process.env.GOCACHE || join(homedir(), '.cache', 'go-build'),
    GOPATH: build.gopath,
    // -modcacherw: modules downloaded through the proxy stay deletable with the data dir.
    GOFLAGS: '-mod=mod -modcacherw',
    GOTOOLCHAIN: 'local',
    GOTELEMETRY: 'off',
    CGO_ENABLED: '0',
    // Without a proxy nothing is downloaded; with one, modules come from it alone.
    GOPROXY: build.moduleProxy ?? 'off',
    GOSUMDB: 'off',
    ...(build.target ? { GOOS: build.target.goos, GOARCH: build.target.goarch } : {}),
  };
  // A binary that travels (to S3 and a sandbox) leaves out its symbol tables: a third smaller.
  const args = ['build', '-trimpath', ...(build.target ? ['-ldflags=-s -w'] : []), '-o', 'main', '.'];
  return new Promise((resolve) => {
    execFile(go, args, { cwd: dir, env, timeout: BUILD_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) resolve(null);
      else if (error.killed) resolve(`the build took longer than ${BUILD_TIMEOUT_MS / 1000}s`);
      else resolve(`${stdout}${stderr}`.trim() || error.message);
    });
  });
}

/**
 * The compiler's errors as the script's author reads them: positions in `main.go`, no build
 * directory, no lines of the generated files (an error there means main's signature does not fit).
 */
function compilerMessage(output: string, dir: string, scriptFile: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.replaceAll(`${dir}/`, '').replace(/^\.\//, ''))
    .filter((line) => line && !line.startsWith('# '));
  const own = lines.filter((line) => line.startsWith(`${scriptFile}:`)).map((line) => GO_SCRIPT_FILE + line.slice(scriptFile.length));
  if (own.length > 0) return own.slice(0, 10).join('\n');
  if (lines.some((line) => line.startsWith('inner/svc_generated_entry.go:'))) {
    return `main's parameters or results cannot be called with JSON arguments: ${lines.slice(0, 3).join('; ')}`;
  }
  return lines.slice(0, 10).join('\n');
}
