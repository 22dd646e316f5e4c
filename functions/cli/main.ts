import { CommanderError, type Command } from 'commander';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { buildProgram, type ProgramHooks } from './program.js';
import type { Io } from './io.js';

/**
 * Runs one svc command line: parses it with the command tree of program.ts and turns every outcome
 * into an exit code. An error is one line on stderr (no stack trace) and, with --json-output, also
 * a JSON document on stdout, so a script reading stdout always gets JSON.
 */
export async function main(argv: string[], io: Io, hooks: ProgramHooks = {}): Promise<ExitCode> {
  let code: ExitCode = EXIT.ok;
  const wantsJson = argv.includes('--json-output');
  const program = buildProgram(io, (c) => (code = c), hooks);
  const report = (message: string, exitCode: ExitCode) => {
    io.err(`svc: ${message}`);
    if (wantsJson) io.out(JSON.stringify({ error: { message, exitCode } }, null, 2));
    return exitCode;
  };
  // The command whose arguments were wrong, for its usage line.
  let failedCommand: Command = program;
  const configure = (cmd: Command) => {
    cmd
      .configureOutput({
        writeOut: (t: string) => io.out(t.replace(/\n$/, '')),
        writeErr: (t: string) => io.err(t.replace(/\n$/, '')),
        // Parse errors are reported once, below, with the JSON form when asked for.
        outputError: () => (failedCommand = cmd),
      })
      .exitOverride();
    cmd.commands.forEach(configure);
  };
  configure(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help, --version and `help` end the parse through here with code 0.
      if (e.exitCode === 0) return EXIT.ok;
      const help = e.code === 'commander.help' || e.code === 'commander.helpDisplayed';
      if (help) return EXIT.usage;
      const message = e.message.replace(/^error: /, '');
      const path = commandPath(failedCommand);
      return report(`${message[0].toUpperCase()}${message.slice(1)}\nusage: ${path} ${failedCommand.usage()}\n(${path} --help shows every option and an example)`, EXIT.usage);
    }
    if (e instanceof CliError) return report(e.message, e.exitCode);
    return report(e instanceof Error ? e.message : String(e), EXIT.failed);
  }
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
