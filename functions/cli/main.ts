import { parseArgs } from 'node:util';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { initProject } from './init.js';
import { Profiles } from './profiles.js';
import { Remote } from './remote.js';
import { configDirOf, runSync, type Io } from './sync-command.js';

/** The svc subcommands but `serve`: init, workspace add|list|switch|remove, sync pull|push. */

export const USAGE = `usage:
  svc serve                                   run the local service
  svc init [--force]                          write a commented svc.yaml
  svc workspace add <name> <workspace_id> <base_url> [--token T]
  svc workspace list | switch <name> | remove <name>
  svc sync pull|push [--dry-run] [--yes] [--json-output] [--force] [--no-diffs]
                     [--workspace NAME] [--base-url URL] [--workspace-id ID] [--token T]
                     [--message TEXT] [--promotion BRANCH]
exit codes: 0 ok, 1 failures, 2 usage or svc.yaml, 3 not confirmed, 4 conflicts,
            5 lint or locks, 6 unreachable, 7 token refused`;

export async function main(argv: string[], io: Io): Promise<ExitCode> {
  try {
    const [command, sub, ...rest] = argv;
    if (command === 'init') return init([sub, ...rest].filter((a) => a !== undefined), io);
    if (command === 'workspace') return await workspace(sub, rest, io);
    if (command === 'sync' && (sub === 'pull' || sub === 'push')) return await sync(sub, rest, io);
    io.err(`svc: unknown command ${[command, sub].filter(Boolean).join(' ')}\n${USAGE}`);
    return EXIT.usage;
  } catch (e) {
    if (e instanceof CliError) {
      io.err(`svc: ${e.message}`);
      return e.exitCode;
    }
    if (e instanceof TypeError && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`svc: ${e.message}\n${USAGE}`);
      return EXIT.usage;
    }
    io.err(`svc: ${e instanceof Error ? e.message : String(e)}`);
    return EXIT.failed;
  }
}

function init(args: string[], io: Io): ExitCode {
  const { values } = parseArgs({ args, options: { force: { type: 'boolean', default: false } } });
  for (const line of initProject(io.cwd, values.force)) io.out(line);
  return EXIT.ok;
}

async function workspace(sub: string | undefined, args: string[], io: Io): Promise<ExitCode> {
  const profiles = new Profiles(configDirOf(io.env));
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { token: { type: 'string' }, 'no-check': { type: 'boolean', default: false } } });
  switch (sub) {
    case 'add': {
      const [name, workspaceId, baseUrl] = positionals;
      const token = values.token ?? io.env.SVC_TOKEN ?? (await io.ask('token: '))?.trim();
      if (!name || !workspaceId || !baseUrl || !token) throw new CliError(EXIT.usage, 'svc workspace add <name> <workspace_id> <base_url> --token <token>');
      // Refuse a profile that cannot work, with the reason (unreachable, token refused, no such workspace).
      if (!values['no-check']) await new Remote({ baseUrl, workspaceId, token }).check();
      profiles.add({ name, workspaceId, baseUrl: baseUrl.replace(/\/+$/, ''), token });
      io.out(`added workspace ${name} (${workspaceId} at ${baseUrl}); it is now the active one`);
      return EXIT.ok;
    }
    case 'list': {
      const { profiles: list, active } = profiles.list();
      if (list.length === 0) io.out('no workspaces (svc workspace add <name> <workspace_id> <base_url> --token <token>)');
      for (const p of list) io.out(`${p.name === active ? '*' : ' '} ${p.name}\t${p.workspaceId}\t${p.baseUrl}`);
      return EXIT.ok;
    }
    case 'switch':
      if (!positionals[0]) throw new CliError(EXIT.usage, 'svc workspace switch <name>');
      profiles.switch(positionals[0]);
      io.out(`active workspace: ${positionals[0]}`);
      return EXIT.ok;
    case 'remove':
      if (!positionals[0]) throw new CliError(EXIT.usage, 'svc workspace remove <name>');
      profiles.remove(positionals[0]);
      io.out(`removed workspace ${positionals[0]}`);
      return EXIT.ok;
    default:
      throw new CliError(EXIT.usage, `unknown workspace command ${sub ?? ''}\n${USAGE}`);
  }
}

async function sync(direction: 'pull' | 'push', args: string[], io: Io): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      'dry-run': { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      'json-output': { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      'no-diffs': { type: 'boolean', default: false },
      workspace: { type: 'string' },
      'base-url': { type: 'string' },
      'workspace-id': { type: 'string' },
      token: { type: 'string' },
      message: { type: 'string' },
      promotion: { type: 'string' },
    },
  });
  return runSync(
    direction,
    {
      dryRun: values['dry-run'],
      yes: values.yes,
      jsonOutput: values['json-output'],
      force: values.force,
      showDiffs: !values['no-diffs'],
      workspace: values.workspace,
      baseUrl: values['base-url'],
      workspaceId: values['workspace-id'],
      token: values.token,
      message: values.message,
      promotion: values.promotion,
    },
    io,
  );
}
