import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { JobResourceLimits } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import { makeJobDir, randomName, removeDir, resolveExecutable, sandboxEnv, setReferenced, spawnSandboxed, type SandboxProcess } from './sandbox-process.js';
import type { PooledProcess } from './warm-pool.js';

/**
 * What a Bash spare runs while it waits (`$0` is the job's script, not written yet): it reads the
 * job from its fd 3 to the end of the stream — shell code that exports the job's environment and
 * sets its positional arguments, every value single-quoted (bashSpareJob) — closes fd 3, runs that
 * code and sources the script. Secrets (resolved `$var:` arguments, the job token) never appear in
 * argv, where `ps` would show them. `read -N` reads in blocks; a `read -d` per field read one byte
 * per system call (fd 3 is a socket), ~2,700 calls for a job's environment.
 */
const SPARE_LAUNCH = [
  'IFS= read -r -d "" -N 1073741824 __svc_job <&3',
  'exec 3<&-',
  '[ -n "$__svc_job" ] || exit 70',
  'eval "$__svc_job"',
  'unset __svc_job',
  // As Windmill runs Bash (docs/windmill.md): a non-empty ./result.json left in the job's folder
  // by a script that succeeded is the result, printed as the last line (JSON holds no raw line
  // break but between tokens, so the document is joined onto one line).
  '__svc_dir=$PWD',
  // The output the runner reads, kept aside (fd 10 or above): a script that silences or redirects
  // its own (`exec >/dev/null 2>&1`, `exec > log.txt`) still has its result.json taken.
  'exec {__svc_out}>&1',
  '__svc_result_json() {',
  '  local status=$? text',
  '  if [ "$status" -eq 0 ] && [ -f "$__svc_dir/result.json" ] && [ ! -L "$__svc_dir/result.json" ] && [ -s "$__svc_dir/result.json" ]; then',
  '    text=$(<"$__svc_dir/result.json")',
  "    text=${text//$'\\n'/}",
  '    printf \'\\n%s\\n\' "${text//$\'\\r\'/}" >&"$__svc_out"',
  '  fi',
  '  return $status',
  '}',
  'trap __svc_result_json EXIT',
  '. "$0"',
].join('\n');

/** Only such names are sent: anything else could not be exported (and svc sets no other). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The code a spare runs before the script: `export NAME='value'` per variable (one bash will not
 * export, a read-only one, is dropped as bash would ignore it in an environment it starts with),
 * then `set -- 'arg' ...`. Inside single quotes nothing is expanded; a quote ends the string, is
 * escaped and reopens it. A NUL cannot be in a bash string (nor in an exec's argument): refused.
 */
export function bashSpareJob(env: Record<string, string>, args: string[]): string {
  const refused = [...Object.values(env), ...args].some((value) => value.includes('\0'));
  if (refused) throw new BashInputError('a Bash argument or variable cannot hold a NUL character (\\u0000)');
  const exports = Object.entries(env)
    .filter(([name]) => ENV_NAME.test(name))
    .map(([name, value]) => `export ${name}=${singleQuoted(value)} 2>/dev/null\n`);
  return `${exports.join('')}set --${args.map((arg) => ` ${singleQuoted(arg)}`).join('')}\n`;
}

export class BashInputError extends Error {
  override name = 'BashInputError';
}

function singleQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * A Bash job's process started before its job (README: Job confinement, warm processes): its own
 * jail (uid, cgroup, network namespace, disk quota) and job directory, and bash already running in
 * them, blocked on its fd 3 until `begin` hands it a job. Bash still runs one process per job: a
 * spare serves exactly one job and is then released like any one-shot job's jail.
 */
export class BashSpare implements PooledProcess {
  private exitedAlready = false;
  private begun = false;
  private disposed: Promise<void> | undefined;

  private constructor(
    readonly proc: SandboxProcess,
    readonly jail: Jail,
    readonly jobDir: string,
  ) {
    void proc.exited.then(() => {
      this.exitedAlready = true;
      // A spare that died waiting gives its jail back itself; a job's spare is released by the job.
      if (!this.begun) void this.dispose();
    });
  }

  /** Where the job's script goes before `begin`; bash sources it from there. */
  get scriptPath(): string {
    return join(this.jobDir, 'main.sh');
  }

  get pid(): number | undefined {
    return this.proc.child.pid;
  }

  get alive(): boolean {
    return !this.exitedAlready && !this.begun;
  }

  static async start(limits: JobResourceLimits | undefined, jails: JailSource): Promise<BashSpare> {
    const jail = await jails.open(limits);
    const jobDir = join(jail.workDir, randomName('sh'));
    try {
      await makeJobDir(jobDir, jail.uid);
      const proc = spawnSandboxed({
        jail,
        visibleDirs: [jobDir],
        command: resolveExecutable('bash'),
        args: ['-c', SPARE_LAUNCH, join(jobDir, 'main.sh')],
        cwd: jobDir,
        env: sandboxEnv({}, jobDir, jail),
        // stdin is /dev/null, as a job's stdin always is; fd 3 carries the job in.
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
      const control = proc.child.stdio[3] as Writable;
      control.on('error', () => undefined); // a spare that died; its exit is the job's error
      return new BashSpare(proc, jail, jobDir);
    } catch (error) {
      await removeDir(jobDir);
      await jail.release();
      throw error;
    }
  }

  /** Hands the spare its job (bashSpareJob): `env` as its whole environment, `args` as $1, $2, ... Once only. */
  begin(job: string): void {
    if (this.begun) throw new Error('a Bash spare serves one job only');
    this.begun = true;
    (this.proc.child.stdio[3] as Writable).end(job);
  }

  onExit(listener: () => void): void {
    void this.proc.exited.then(listener);
  }

  setIdle(idle: boolean): void {
    setReferenced([this.proc.child, ...this.proc.child.stdio], !idle);
  }

  /** Ends an unused spare: its process, its jail and its directory; safe to call more than once. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.proc.kill();
      await this.proc.exited;
      await this.jail.release().catch(() => undefined);
      await removeDir(this.jobDir);
    })();
    return this.disposed;
  }
}

/** The job environment as the spare receives it, the same a freshly started process would get. */
export function bashSpareEnv(spare: BashSpare, jobEnv: Record<string, string>): Record<string, string> {
  return sandboxEnv(jobEnv, spare.jobDir, spare.jail);
}
