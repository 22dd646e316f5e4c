import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { CliError } from './errors.js';
import { findInPackage } from './package-root.js';
import { EXIT, type ExitCode } from './errors.js';
import { initProject } from './init.js';
import { addSyncOptionFlags, syncOptionsFromFlags } from './sync-flags.js';
import { tokenCreate, tokenDelete, tokenList, whoami, workspaceAdd, workspaceList, workspaceRemove, workspaceSwitch } from './account-commands.js';
import { jobCancel, jobGet, jobLogs, runCommand } from './run-commands.js';
import { completionScript } from './completion.js';
import { goBinaryCommand } from './go-binary-command.js';
import { uploadCommand } from './upload-command.js';
import { listCommand, type ListKind } from './list-commands.js';
import { jobDecide } from './approve-commands.js';
import { migrateCommand } from './wmill-migrate.js';
import { generateMetadata } from './metadata-command.js';
import type { Io } from './io.js';

/**
 * Every svc command and option, defined once: commander parses with it and prints each command's
 * help from it, and the shell completion (completion.ts) and docs/cli.md (cli-docs.ts) are made
 * from the same objects, so none of them can drift from what the parser accepts.
 */

/** The version in svc's package.json. */
export const VERSION = (() => {
  const file = findInPackage(import.meta.dirname, 'package.json');
  return file ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : 'unknown';
})();

/** Examples shown at the end of a command's help and in docs/cli.md. */
export const EXAMPLES = new WeakMap<Command, string[]>();

function examples(cmd: Command, lines: string[]): Command {
  EXAMPLES.set(cmd, lines);
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

/** `--workspace`, `--base-url`, `--workspace-id`, `--token` and `--json-output`: how a command finds its server. */
function withConnection(cmd: Command): Command {
  return cmd
    .option('--workspace <name>', 'a workspace profile (svc workspace list; for sync also an svc.yaml workspaces entry); default: the active profile')
    .option('--base-url <url>', 'server URL, instead of the profile\'s (e.g. http://127.0.0.1:8000)')
    .option('--workspace-id <id>', 'workspace id, instead of the profile\'s')
    .option('--token <token>', 'API token, instead of the profile\'s; svc warns: arguments are visible to other users of the machine (use SVC_TOKEN or a profile)')
    .option('--json-output', 'print one JSON document on stdout (messages go to stderr)', false);
}

export const EXIT_CODES_HELP = `Exit codes:
  0  done (or nothing to do)
  1  some operations failed (the others were applied), a job failed, or an unexpected error
  2  bad usage: unknown command or flag, invalid svc.yaml, unknown workspace or profile
  3  aborted: the changes were not confirmed
  4  conflicts: an item changed locally and remotely since the last sync (nothing changed)
  5  lint or locksRequired refused the push (nothing pushed)
  6  the server could not be reached
  7  the server refused the token (401) or the operation (403)`;

/** The first steps, in order, for someone who has only this help (the README's CLI section has the rest). */
export const START_HERE = `Start here (a local server: npm start prints the admin token on its first start):
  export SVC_TOKEN=<token>                             # not --token: arguments are visible in ps
  svc workspace add local main http://127.0.0.1:8000   # a profile; checks the token
  mkdir my-workspace && cd my-workspace && git init && svc init
  svc sync pull                                        # the workspace's items as files
  svc sync push                                        # your edits back (a conflict shows a diff)
  svc script run f/ops/hello -d '{"name": "Ada"}'      # logs as they come, the result on stdout`;

export interface ProgramHooks {
  /** `svc serve`: wired by bin/svc.ts, since the local service is not the CLI's to import. */
  serve?: () => Promise<void>;
}

/** The command tree; `exit` receives each action's exit code. */
export function buildProgram(io: Io, exit: (code: ExitCode) => void, hooks: ProgramHooks = {}): Command {
  const program = new Command('svc')
    .description('svc: run the local service, keep a workspace in sync with files, run scripts and flows, manage tokens')
    .version(VERSION, '-V, --version', 'print the svc version')
    .helpOption('-h, --help', 'show help for the command')
    .showSuggestionAfterError(true)
    // `svc help sync push` reaches nested commands, which commander's own help command does not.
    .helpCommand(false)
    .addHelpText('after', `\n${START_HERE}\n\nsvc help <command> (or svc <command> --help) shows a command's options and examples.\n\n${EXIT_CODES_HELP}\n`);
  const done = (code: ExitCode) => exit(code);
  const listCommandOf = (group: Command, kind: ListKind) =>
    examples(withConnection(group.command('list').description(`the workspace's ${kind}s the token may see, as a table (or --json-output)`)).action(async (opts) => done(await listCommand(kind, opts, io))), [`svc ${kind} list`, `svc ${kind} list --json-output`]);

  examples(
    program.command('serve').description('run the local service (HTTP API, workers, flows) on SQLite; what `npm start` runs').action(async () => {
      if (!hooks.serve) throw new Error('svc serve is not available in this build');
      await hooks.serve();
      done(EXIT.ok);
    }),
    ['svc serve', 'PORT=9000 SVC_DATA_DIR=/var/lib/svc svc serve'],
  );

  examples(
    program
      .command('init')
      .description('write a commented svc.yaml with every sync option at its default, and keep .svc-sync/ out of git')
      .option('--force', 'overwrite an existing svc.yaml', false)
      .action((opts: { force: boolean }) => {
        for (const line of initProject(io.cwd, opts.force)) io.out(line);
        done(EXIT.ok);
      }),
    ['mkdir my-workspace && cd my-workspace && git init && svc init'],
  );

  const sync = program.command('sync').description('pull a workspace into files, or push files to a workspace (see svc.yaml)');
  for (const direction of ['pull', 'push'] as const) {
    const cmd = withConnection(
      sync
        .command(direction)
        .description(
          direction === 'pull'
            ? 'write the workspace\'s items as files: shows + / - / ~ per item (with diffs), asks, then writes'
            : 'send local changes to the workspace: shows + / - / ~ per item (with diffs), asks, then pushes',
        ),
    )
      .option('--dry-run', 'show what would change, change nothing', false)
      .option('-y, --yes', 'apply without asking', false)
      .option('--force', `overwrite conflicting changes (${direction === 'pull' ? 'the local files' : 'the workspace\'s items'})`, false)
      .option('--no-diffs', 'list the changes without their diffs')
      .option('--message <text>', 'deployment message recorded on the versions a push creates (svc.yaml message)')
      .option('--promotion <branch>', 'apply that branch\'s promotionOverrides (svc.yaml promotion)');
    addSyncOptionFlags(cmd).action(async (opts: Record<string, unknown>) => {
      done(
        // Loaded for sync alone: it brings the TypeScript and Python parsers (lint, schemas), which
        // would otherwise slow the start of every other command.
        await (await import('./sync-command.js')).runSync(
          direction,
          {
            dryRun: opts.dryRun as boolean,
            yes: opts.yes as boolean,
            jsonOutput: opts.jsonOutput as boolean,
            force: opts.force as boolean,
            showDiffs: opts.diffs as boolean,
            workspace: opts.workspace as string | undefined,
            baseUrl: opts.baseUrl as string | undefined,
            workspaceId: opts.workspaceId as string | undefined,
            token: opts.token as string | undefined,
            message: opts.message as string | undefined,
            promotion: opts.promotion as string | undefined,
            overrides: syncOptionsFromFlags(opts),
          },
          io,
        ),
      );
    });
    examples(
      cmd,
      direction === 'pull'
        ? ['svc sync pull', 'svc sync pull --dry-run --json-output', 'svc sync pull --include-secrets --skip-flows', 'SVC_TOKEN=... svc sync pull --base-url http://127.0.0.1:8000 --workspace-id main --yes']
        : ['svc sync push --dry-run', 'svc sync push --yes --message "release 42"', 'svc sync push --force   # after reading the conflict diff: your files win'],
    );
  }

  const workspace = program.command('workspace').description('workspace profiles on this machine: server URL, workspace id and token');
  examples(
    workspace
      .command('add')
      .description('add (or replace) a profile and make it the active one; the token is checked against the server first')
      .argument('<name>', 'profile name')
      .argument('<workspace_id>', 'workspace id on the server')
      .argument('<base_url>', 'server URL')
      .option('--token <token>', 'API token (default: SVC_TOKEN, else asked on the terminal); svc warns: arguments are visible to other users of the machine')
      .option('--no-check', 'save without asking the server')
      .option('--json-output', 'print the profile as JSON', false)
      .action(async (name: string, workspaceId: string, baseUrl: string, opts: { token?: string; check: boolean; jsonOutput: boolean }) => done(await workspaceAdd(name, workspaceId, baseUrl, opts, io))),
    ['SVC_TOKEN=... svc workspace add local main http://127.0.0.1:8000'],
  );
  examples(
    workspace.command('list').description('list the profiles; * marks the active one').option('--json-output', 'print JSON', false).action((opts: { jsonOutput: boolean }) => done(workspaceList(opts, io))),
    ['svc workspace list'],
  );
  examples(
    workspace.command('switch').description('make a profile the active one').argument('<name>', 'profile name').option('--json-output', 'print JSON', false).action((name: string, opts: { jsonOutput: boolean }) => done(workspaceSwitch(name, opts, io))),
    ['svc workspace switch staging'],
  );
  examples(
    workspace.command('remove').description('remove a profile').argument('<name>', 'profile name').option('--json-output', 'print JSON', false).action((name: string, opts: { jsonOutput: boolean }) => done(workspaceRemove(name, opts, io))),
    ['svc workspace remove old'],
  );

  examples(
    withConnection(program.command('whoami').description('the user the token acts as, and the workspace and server in use')).action(async (opts) => done(await whoami(opts, io))),
    ['svc whoami', 'svc whoami --workspace staging --json-output'],
  );

  for (const kind of ['script', 'flow'] as const) {
    const group = program.command(kind).description(kind === 'script' ? 'run a script of the workspace, or write the lock of a script file' : 'run a flow of the workspace');
    examples(
      withConnection(
        group
          .command('run')
          .description(`run the ${kind} at <path>: prints what it streams and ${kind === 'flow' ? 'each step\'s logs as the steps finish' : 'its logs'} on stderr, the result on stdout`)
          .argument('<path>', `${kind} path, e.g. f/ops/hello`)
          .option('-d, --data <json>', 'arguments: a JSON object, or @file.json to read it from a file', '{}')
          .option('--no-wait', 'print the job id and return at once'),
      ).action(async (path: string, opts) => done(await runCommand(kind, path, opts, io))),
      kind === 'script' ? [`svc script run f/ops/hello -d '{"name": "Ada"}'`, 'svc script run f/ops/report -d @args.json --json-output'] : [`svc flow run f/ops/refund -d '{"order": 42}'`, 'svc flow run f/ops/refund --no-wait'],
    );
    listCommandOf(group, kind);
    if (kind === 'script') {
      examples(
        withConnection(
          group
            .command('generate-metadata')
            .description("resolve each script's imports on the server and write its lock beside it (<path>.script.lock); --json-output also prints the inferred schema")
            .argument('<file...>', 'script files of this project, e.g. f/ops/hello.ts'),
        ).action(async (files: string[], opts) => done(await generateMetadata(files, opts, io))),
        ['svc script generate-metadata f/ops/report.ts', 'svc script generate-metadata f/etl/*.py --json-output'],
      );
    }
  }
  for (const kind of ['schedule', 'resource', 'variable'] as const) listCommandOf(program.command(kind).description(`the workspace's ${kind}s`), kind);

  const job = program.command('job').description('list, look at, cancel, approve and reject jobs');
  examples(
    withConnection(
      job
        .command('list')
        .description('the latest runs the token may see, newest first (a flow\'s steps and sub-flows only with --all)')
        .option('--status <status>', 'only runs with this status: queued, running, suspended, awaiting_approval, success, failed, canceled')
        .option('--path <path>', 'only runs of this script or flow')
        .option('--limit <n>', 'at most this many', '50')
        .option('--all', 'the steps and sub-flows of flows too', false),
    ).action(async (opts) => done(await listCommand('job', opts, io))),
    ['svc job list', 'svc job list --status suspended', 'svc job list --path f/ops/refund --json-output'],
  );
  examples(withConnection(job.command('get').description('status, result and (for a flow waiting for approval) where it waits').argument('<id>', 'job id')).action(async (id: string, opts) => done(await jobGet(id, opts, io))), ['svc job get 0190f7b4-...']);
  examples(
    withConnection(job.command('logs').description('the job\'s logs (a flow: each step\'s)').argument('<id>', 'job id').option('-f, --follow', 'wait for the job to finish, printing as it goes', false)).action(
      async (id: string, opts) => done(await jobLogs(id, opts, io)),
    ),
    ['svc job logs 0190f7b4-...', 'svc job logs --follow 0190f7b4-...'],
  );
  examples(
    withConnection(job.command('cancel').description('cancel a queued or running job').argument('<id>', 'job id').option('--reason <text>', 'why (kept on the job)')).action(async (id: string, opts) => done(await jobCancel(id, opts, io))),
    ['svc job cancel 0190f7b4-... --reason "wrong input"'],
  );
  examples(
    withConnection(
      job
        .command('approve')
        .description('approve the approval step or ConsentGate the flow run <id> waits at, as the person the token belongs to')
        .argument('<id>', 'the flow run\'s job id')
        .option('-d, --data <json>', 'the approval form\'s values: a JSON object, or @file.json')
        .option('--reason <text>', 'why (kept with a ConsentGate decision)'),
    ).action(async (id: string, opts) => done(await jobDecide('approve', id, opts, io))),
    ['svc job approve 0190f7b4-...', 'svc job approve 0190f7b4-... -d \'{"amount": 12}\''],
  );
  examples(
    withConnection(
      job
        .command('reject')
        .description('reject (cancel) the approval step or ConsentGate the flow run <id> waits at: the run ends canceled at an approval step, failed at a ConsentGate')
        .argument('<id>', 'the flow run\'s job id')
        .option('--reason <text>', 'why (a ConsentGate requires one)'),
    ).action(async (id: string, opts) => done(await jobDecide('reject', id, opts, io))),
    ['svc job reject 0190f7b4-... --reason "not this quarter"'],
  );

  const token = program.command('token').description('API tokens of the user the current token acts as');
  examples(
    withConnection(
      token
        .command('create')
        .description('create a token; it is printed once, alone on stdout')
        .requiredOption('--label <label>', 'what the token is for')
        .option('--expiration <iso-date>', 'when it stops working, e.g. 2027-01-01T00:00:00Z (default: never)')
        .option('--scope <scope...>', 'limit it to these scopes, e.g. jobs:run:scripts:f/ops/hello (default: all the user\'s rights)')
        .option('--only-workspace', 'valid in the current workspace only', false),
    ).action(async (opts) => done(await tokenCreate(opts, io))),
    ['svc token create --label ci --expiration 2027-01-01T00:00:00Z', 'export SVC_TOKEN=$(svc token create --label deploy --only-workspace)'],
  );
  examples(withConnection(token.command('list').description('list the tokens: prefix, label, expiry, workspace, scopes (never the token)')).action(async (opts) => done(await tokenList(opts, io))), ['svc token list']);
  examples(withConnection(token.command('delete').description('delete a token by the prefix token list shows').argument('<prefix>', 'token prefix')).action(async (prefix: string, opts) => done(await tokenDelete(prefix, opts, io))), ['svc token delete a1b2c3d4']);

  examples(
    withConnection(
      program
        .command('upload')
        .description('upload a file of any size for a script or flow (in parts, straight to storage); prints the object to name in its payload')
        .argument('<path>', 'the script or flow that will receive the file')
        .argument('<file>', 'the file to upload')
        .option('--filename <name>', 'the name the job sees (default: the file\'s)')
        .option('--content-type <type>', 'its media type', 'application/octet-stream'),
    ).action(async (path: string, file: string, opts) => done(await uploadCommand(path, file, opts, io))),
    ['svc script run f/etl/load -d "{\"files\": [$(svc upload f/etl/load big.csv --content-type text/csv)]}"'],
  );

  examples(
    program
      .command('migrate')
      .description('read a workspace folder (one Windmill\'s CLI wrote, or svc\'s own) and show, per kind, what a push moves, which scripts need a dependency lock, and what is skipped and why; no server needed')
      .argument('<folder>', 'the folder (its wmill.yaml or svc.yaml gives the options)')
      .option('--json-output', 'print one JSON document on stdout (messages go to stderr)', false)
      .action(async (folder: string, opts: { jsonOutput: boolean }) => done(await migrateCommand(folder, opts, io))),
    ['svc migrate ../windmill-workspace', 'svc migrate . --json-output | jq \'.kinds[] | select(.needsLock != [])\''],
  );
  examples(
    program
      .command('go-binary')
      .description("build a Go script for a server that builds none (AWS): prints scripts/create's go_binary (svc sync push does this itself)")
      .argument('<file>', 'the Go script')
      .addOption(new Option('--goarch <arch>', "the sandbox's GOARCH, as GET /api/runtime names it (go_target)").choices(['arm64', 'amd64']).makeOptionMandatory())
      .action(async (file: string, opts: { goarch: 'arm64' | 'amd64' }) => done(await goBinaryCommand(file, opts, io))),
    ['svc go-binary f/ops/greet.go --goarch arm64 > greet.binary.json'],
  );

  examples(
    program
      .command('completion')
      .description('print a shell completion script')
      .addArgument(new Command().createArgument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
      .action((shell: 'bash' | 'zsh') => {
        io.out(completionScript(program, shell));
        done(EXIT.ok);
      }),
    ['source <(svc completion bash)      # in ~/.bashrc', 'svc completion zsh > "${fpath[1]}/_svc"   # then restart zsh'],
  );

  program
    .command('help')
    .description('show help for a command, e.g. svc help sync push')
    .argument('[command...]', 'the command')
    .action((words: string[]) => {
      let cmd: Command = program;
      for (const word of words) {
        const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
        if (!sub) throw new CliError(EXIT.usage, `no command ${[...words.slice(0, words.indexOf(word)), word].join(' ')} (svc --help lists the commands)`);
        cmd = sub;
      }
      cmd.outputHelp();
      done(EXIT.ok);
    });

  // Kept for CI habits, but a token in argv is readable by every user of the machine (ps, /proc).
  program.hook('preAction', (_root, action) => {
    if (action.getOptionValueSource('token') === 'cli') io.err(TOKEN_IN_ARGV_WARNING);
  });

  return program;
}

export const TOKEN_IN_ARGV_WARNING =
  'svc: warning: --token puts the token on the command line, where other users of this machine can read it (ps); ' +
  'set SVC_TOKEN instead, or keep it in a profile (svc workspace add; the file is readable by you alone)';

