/**
 * The code-running port: the languages, what a run is given and what it gives back, and the
 * compiler for languages built ahead of their runs. Re-exported by ../ports.ts, the one place the
 * core and the shells import ports from.
 */

export type Language = 'bun' | 'deno' | 'nativets' | 'python3' | 'bash' | 'go';
export const LANGUAGES = ['bun', 'deno', 'nativets', 'python3', 'bash', 'go'] as const satisfies readonly Language[];

/**
 * Builds a script version of a compiled language (Go) ahead of its runs: when the version is
 * created, never on the run path. A shell without a toolchain has none, and the core then refuses
 * such scripts.
 */
export interface ScriptCompiler {
  /** The languages this compiler builds. */
  readonly languages: readonly Language[];
  /**
   * Set when this shell builds nothing itself (AWS): a create must bring a binary built elsewhere
   * for this target (README: Go scripts on AWS), which `compile` checks and keeps.
   */
  readonly prebuiltTarget?: GoTarget;
  /** Builds `content` (or checks and keeps `prebuilt`) for the runner; the failure says why, for a 400. */
  compile(language: Language, content: string, prebuilt?: PrebuiltBinary): Promise<{ ok: true } | { ok: false; message: string }>;
}

/** The package ecosystems a script's imports come from (README: Dependencies). */
export type Ecosystem = 'npm' | 'pypi';

/**
 * Resolves a script's third-party imports to a lock and installs locked trees (README:
 * Dependencies). The shells that install packages set it; the core decides when.
 */
export interface DependencyInstaller {
  readonly ecosystems: readonly Ecosystem[];
  /** Where packages come from; a lock given with a script may name no other source. */
  registry(ecosystem: Ecosystem): string;
  /** Resolves `requirements` (npm: name to range; pypi: normalized name to a requirement line) to a lock, or says why not (the installer's last lines) for a 400. */
  resolve(ecosystem: Ecosystem, requirements: Record<string, string>): Promise<{ ok: true; lock: string } | { ok: false; message: string }>;
  /** Starts installing the lock's tree, off the request path; a run of the version waits for it. */
  prepare(ecosystem: Ecosystem, lock: string): void;
}

/** The platform a Go binary is built for: the sandbox's (GOOS=linux, GOARCH per the stack). */
export interface GoTarget {
  goos: 'linux';
  goarch: 'amd64' | 'arm64';
}

/** A script's binary built off the server (the CLI, or `go build` by hand), as a create carries it. */
export interface PrebuiltBinary {
  workspaceId: string;
  /** The binary gzipped, then base64: Lambda takes at most 6 MB per request. */
  gzipBase64: string;
  /** sha256 of the (uncompressed) binary, hex. */
  sha256: string;
}

/** JSON Schema object describing a script's inputs; `properties` keys are in parameter order. */
export interface InputSchema {
  $schema?: string;
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  order?: string[];
}

/** Why a run failed, as the job stores it. */
export interface JobError {
  name: string;
  message: string;
  stack?: string;
  /** A TypeScript error's own properties besides these (Windmill's `extra`). */
  extra?: Record<string, unknown>;
}

/**
 * The files of a flow's `./shared` folder (flows with `same_worker`), by path relative to it with
 * `/` separators, base64-encoded. Only regular files travel.
 */
export type SharedFiles = Record<string, string>;
/** The folder's name in a step's working directory, as Windmill names it. */
export const SHARED_FOLDER = 'shared';
/** What a shared folder may hold: it rides along in a sandbox invocation (6 MB on Lambda, base64 inside). */
export const SHARED_FOLDER_MAX_BYTES = 3 * 1024 * 1024;

/** Runs user code in a sandbox. */
export interface RunRequest {
  jobId: string;
  workspaceId: string;
  language: Language;
  /** Identifies the code version: warm processes are reused only for the same workspace and hash. */
  scriptHash: string;
  content: string;
  /** Arguments by parameter name; the runner passes those named in `schema` to `main`. */
  args: Record<string, unknown>;
  schema: InputSchema;
  /** The only environment the user code sees: OV_TOKEN, OV_WORKSPACE, BASE_INTERNAL_URL, OV_JOB_ID, OV_JOB_PATH, OV_USERNAME (spec 2.3), OV_JOB_ATTEMPT, and their WM_* twins for Windmill's clients (core/runs/windmill-env.ts). */
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Set for a step of a `same_worker` flow: the `./shared` folder it starts with. */
  shared?: SharedFiles;
  /** The workspace's own job limits, where it set any: the runner applies the lower of these and its own. */
  limits?: JobResourceLimits;
  /** AWS: a short-lived URL the sandbox fetches a Go script's binary from (it holds no credentials). */
  goBinaryUrl?: string;
  /** The version's dependency lock (README: Dependencies): the runner imports from its installed tree. */
  lock?: string;
  /** AWS: where the sandbox fetches the lock's installed tree (a presigned URL of its archive) and the tree's key. */
  dependencies?: { key: string; url: string };
  /**
   * The workspace scripts it imports (docs/workspace-imports.md), at their pinned versions: file
   * path below the code folder (`f/common/helper.py`, `f/common/helper.mjs`) to source (TypeScript
   * for `.mjs`, transpiled by the runner). Written beside the script, read-only to the job; the
   * script's `content` already points its imports at them.
   */
  modules?: Record<string, string>;
  /**
   * AWS: set instead of the request's own content when the request would pass Lambda's 6 MB
   * invocation payload: a short-lived URL of the whole request in the bucket, which the sandbox
   * fetches (docs/aws.md, Large payloads). The fields beside it only name the job and its tenant.
   */
  requestUrl?: string;
  /** AWS: where the sandbox PUTs an answer past 6 MB (a presigned URL of one object of this job), answering `stored` instead. */
  resultUrl?: string;
}

/** Per-process limits of a job (README: Job confinement); bytes, counts and seconds. */
export interface JobResourceLimits {
  memoryBytes?: number;
  processes?: number;
  cpuSeconds?: number;
  fileBytes?: number;
  openFiles?: number;
  diskBytes?: number;
}

export interface RunHooks {
  /** A chunk yielded by a generator `main`, in order. */
  onStream(chunk: string): void;
  /** Output the user code wrote (stdout/stderr), in order. */
  onLog(text: string): void;
}

/** `shared`: the `./shared` folder as the job left it, when the request carried one. */
export type RunOutcome =
  | { ok: true; result: unknown; streamed: boolean; shared?: SharedFiles }
  | { ok: false; error: JobError; shared?: SharedFiles };

export interface CodeRunner {
  run(req: RunRequest, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome>;
  close(): Promise<void>;
}
