import { execFileSync } from 'node:child_process';
import { effectiveOptions, loadConfig, selectWorkspace, specificItemsOf, validateBranch, workspaceEntries, CONFIG_FILE } from './config.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { configDir, Profiles, type Profile } from './profiles.js';
import { Remote } from './remote.js';
import { missingConnection } from './connection.js';
import { SyncState, targetKey } from './state.js';
import { changeJson, changeLine, colourize, conflictDiff, summaryText } from './report.js';
import { applyPull, applyPush, lintProblems, missingLocks, plan, readLocalSide, readRemote, type Sides } from './sync.js';
import type { Direction } from './plan.js';
import type { SyncContext } from './items.js';
import type { SyncOptions } from './config-schema.js';
import { paint, type Io } from './io.js';

/** `svc sync pull|push`: resolve the workspace, read both sides, show the plan, confirm, apply. */

export interface SyncFlags {
  dryRun: boolean;
  yes: boolean;
  jsonOutput: boolean;
  force: boolean;
  workspace?: string;
  token?: string;
  baseUrl?: string;
  workspaceId?: string;
  message?: string;
  promotion?: string;
  showDiffs: boolean;
  /** svc.yaml options set by flags; they win over the file. */
  overrides?: Partial<SyncOptions>;
}

export type { Io };

export function currentGitBranch(dir: string): string | null {
  for (const args of [['rev-parse', '--abbrev-ref', 'HEAD'], ['symbolic-ref', '--short', 'HEAD']]) {
    try {
      const branch = execFileSync('git', args, { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' }).trim();
      if (branch && branch !== 'HEAD') return branch;
    } catch {
      // not a repository, or no commit yet: try the next way
    }
  }
  return null;
}

/** Builds everything a sync needs from svc.yaml, the flags, the profiles and git. */
export function syncContext(flags: SyncFlags, io: Io): { ctx: SyncContext; warnings: string[]; skipped: Skipped[]; target: string } {
  const loaded = loadConfig(io.cwd);
  const warnings = [...loaded.warnings];
  const skipped: Skipped[] = [];
  if (!loaded.found) warnings.push(`no ${CONFIG_FILE} here: using the defaults (svc init writes one)`);
  const gitBranch = currentGitBranch(io.cwd);
  const selected = selectWorkspace(loaded.config, { name: flags.workspace, gitBranch });
  const profiles = new Profiles(configDirOf(io.env));
  if (flags.workspace && !selected && !profiles.get(flags.workspace)) {
    // A typo must not fall back to the active profile and sync somewhere else.
    const entries = workspaceEntries(loaded.config).map((e) => e.name);
    const names = profiles.list().profiles.map((p) => p.name);
    throw new CliError(
      EXIT.usage,
      `--workspace ${flags.workspace}: no such workspace; ${CONFIG_FILE} names ${entries.length ? entries.join(', ') : 'none'}, the profiles are ${names.length ? names.join(', ') : 'none'}`,
    );
  }
  const options = { ...effectiveOptions(loaded.config, selected, flags.promotion), ...flags.overrides };
  validateBranch(loaded.config, options, gitBranch);

  const profile: Profile | undefined =
    (flags.workspace ? profiles.get(flags.workspace) : undefined) ??
    (selected ? profiles.get(selected.name) : undefined) ??
    (selected ? profiles.list().profiles.find((p) => p.workspaceId === selected.workspaceId && (!selected.baseUrl || p.baseUrl === selected.baseUrl)) : undefined) ??
    profiles.active();
  const baseUrl = flags.baseUrl ?? selected?.baseUrl ?? profile?.baseUrl;
  const workspaceId = flags.workspaceId ?? (selected ? selected.workspaceId : profile?.workspaceId);
  const token = flags.token ?? io.env.SVC_TOKEN ?? profile?.token;
  if (!baseUrl || !workspaceId || !token) throw missingConnection({ baseUrl: !baseUrl, workspaceId: !workspaceId, token: !token }, ' to sync with');
  const remote = new Remote({ baseUrl, workspaceId, token });
  const ctx: SyncContext = {
    remote,
    options,
    root: io.cwd,
    codebases: loaded.config.codebases ?? [],
    message: flags.message ?? options.message,
    layout: {
      nonDottedPaths: options.nonDottedPaths ?? false,
      defaultTs: options.defaultTs ?? 'bun',
      workspaceName: selected?.name ?? null,
      workspaceNames: workspaceEntries(loaded.config).map((e) => e.name),
      specific: specificItemsOf(loaded.config, selected),
    },
    warn: (m) => warnings.push(m),
    skip: (path, reason) => skipped.push({ path, reason }),
  };
  return { ctx, warnings, skipped, target: targetKey(remote.baseUrl, workspaceId) };
}

/** Something of the local files svc cannot represent, left out of the sync (docs/windmill.md). */
export interface Skipped {
  path: string;
  reason: string;
}

export const configDirOf = (env: NodeJS.ProcessEnv): string => configDir(env);

export async function runSync(direction: Direction, flags: SyncFlags, io: Io): Promise<ExitCode> {
  const { ctx, warnings, skipped, target } = syncContext(flags, io);
  const say = (text: string) => (flags.jsonOutput ? io.err(text) : io.out(text));
  say(`${direction === 'pull' ? 'pulling from' : 'pushing to'} workspace ${ctx.remote.conn.workspaceId} at ${ctx.remote.baseUrl}`);

  const local = await readLocalSide(ctx);
  const sides: Sides = { ...local, remote: await readRemote(ctx), warnings: [...warnings, ...local.warnings] };
  const state = new SyncState(io.cwd, target);
  const thePlan = plan(direction, sides, state.base(), flags.force);

  const report = {
    command: `sync ${direction}`,
    workspace: ctx.remote.conn.workspaceId,
    dryRun: flags.dryRun,
    changes: thePlan.changes.map(changeJson),
    conflicts: thePlan.conflicts.map((c) => ({ ...changeJson(c), diff: conflictDiff(c) })),
    fileErrors: sides.fileErrors.map((e) => e.message),
    warnings: sides.warnings,
    skipped,
    applied: [] as ReturnType<typeof changeJson>[],
    failed: [] as { path: string; kind: string; error: string }[],
  };
  const finish = (code: ExitCode): ExitCode => {
    if (flags.jsonOutput) io.out(JSON.stringify({ ...report, exitCode: code }, null, 2));
    return code;
  };
  for (const w of sides.warnings) io.err(`warning: ${w}`);
  // Listed before anything is applied, dry run or not: nothing is dropped without a word.
  if (skipped.length && !flags.jsonOutput) {
    io.out(`skipped (svc cannot represent these; they are left out):\n${skipped.map((s) => `  ${s.path}: ${s.reason}`).join('\n')}`);
  }

  if (direction === 'push') {
    if (ctx.options.lint) {
      const problems = lintProblems(sides, ctx);
      if (problems.length) {
        io.err(`lint failed; nothing was pushed:\n${problems.map((p) => `  ${p}`).join('\n')}`);
        return finish(EXIT.invalid);
      }
    }
    if (ctx.options.locksRequired) {
      const missing = missingLocks(sides);
      if (missing.length) {
        io.err(`locksRequired: these scripts have no lock file (<path>.script.lock); nothing was pushed:\n${missing.map((m) => `  ${m}`).join('\n')}`);
        return finish(EXIT.invalid);
      }
    }
  }
  for (const e of sides.fileErrors) io.err(`error: ${e.message}`);

  if (!flags.jsonOutput) {
    const text = summaryText(thePlan, flags.showDiffs);
    if (text) io.out(colourize(text, paint(io)));
    if (thePlan.pending.length) {
      io.out(`(${thePlan.pending.length} item(s) changed ${direction === 'push' ? 'remotely: svc sync pull brings them' : 'locally: svc sync push sends them'})`);
    }
  }
  if (thePlan.conflicts.length) {
    io.err(`${thePlan.conflicts.length} conflict(s): nothing was changed`);
    return finish(EXIT.conflicts);
  }
  if (thePlan.changes.length === 0) {
    state.save(thePlan.inSync);
    say('no changes');
    return finish(sides.fileErrors.length ? EXIT.failed : EXIT.ok);
  }
  if (flags.dryRun) {
    say(`dry run: ${thePlan.changes.length} change(s) not applied`);
    return finish(EXIT.ok);
  }
  if (!flags.yes) {
    const deletions = thePlan.changes.filter((c) => c.op === '-').length;
    const question = `apply ${thePlan.changes.length} change(s)${deletions ? `, including ${deletions} deletion(s)${direction === 'push' ? ' in the workspace' : ' of local files'}` : ''}? [y/N] `;
    const answer = await io.ask(question);
    if (!answer || !/^y(es)?$/i.test(answer.trim())) {
      io.err(answer === null ? 'not confirmed (no input; pass --yes to apply without asking): nothing was changed' : 'not confirmed: nothing was changed');
      return finish(EXIT.aborted);
    }
  }

  const progress = (done: number, total: number, change: Parameters<typeof changeLine>[0]) => {
    if (total > 1) io.err(`[${done}/${total}] ${changeLine(change)}`);
  };
  const result = direction === 'push' ? await applyPush(thePlan.changes, ctx, progress) : applyPull(thePlan.changes, ctx, progress);
  state.save(new Map([...thePlan.inSync, ...result.state]));
  report.applied = result.applied.map(changeJson);
  report.failed = result.failed.map((f) => ({ path: f.change.id, kind: f.change.kind, error: f.error }));
  for (const f of result.failed) io.err(`failed: ${changeLine(f.change)}: ${f.error}`);
  say(`${direction === 'pull' ? 'pulled' : 'pushed'} ${result.applied.length} change(s)${result.failed.length ? `, ${result.failed.length} failed` : ''}`);
  return finish(result.failed.length || sides.fileErrors.length ? EXIT.failed : EXIT.ok);
}
