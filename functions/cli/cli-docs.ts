import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command, Option } from 'commander';
import { buildProgram, EXAMPLES, EXIT_CODES_HELP } from './program.js';
import type { Io } from './io.js';

/**
 * docs/cli.md, the reference of every svc command, made from the command tree that parses them
 * (program.ts). `npm run docs:cli` rewrites it; a test fails when the committed file differs.
 */

export const DOCS_FILE = resolve(import.meta.dirname, '../../docs/cli.md');

const NO_IO: Io = { out: () => undefined, err: () => undefined, stream: () => undefined, ask: async () => null, env: {}, cwd: '.' };

function usageOf(cmd: Command, path: string): string {
  const args = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ');
  return `svc ${path}${cmd.options.length ? ' [options]' : ''}${args ? ` ${args}` : ''}`;
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function optionRow(o: Option): string {
  const extra = [
    o.defaultValue !== undefined && o.defaultValue !== false ? `default: \`${JSON.stringify(o.defaultValue)}\`` : '',
    o.argChoices ? `one of ${o.argChoices.map((c) => `\`${c}\``).join(', ')}` : '',
  ].filter(Boolean);
  return `| \`${o.flags}\` | ${escapeCell(o.description)}${extra.length ? ` (${extra.join('; ')})` : ''} |`;
}

function section(cmd: Command, path: string): string[] {
  const lines = [`## svc ${path}`, '', cmd.description(), ''];
  if (cmd.commands.length === 0 || cmd.options.length > 0) {
    lines.push('```', usageOf(cmd, path), '```', '');
  }
  if (cmd.registeredArguments.length) {
    lines.push('| argument | |', '|---|---|', ...cmd.registeredArguments.map((a) => `| \`${a.name()}\` | ${escapeCell(a.description)}${a.argChoices ? ` (one of ${a.argChoices.join(', ')})` : ''} |`), '');
  }
  if (cmd.options.length) lines.push('| option | |', '|---|---|', ...cmd.options.map(optionRow), '');
  const examples = EXAMPLES.get(cmd);
  if (examples) lines.push('Examples:', '', '```sh', ...examples, '```', '');
  return lines;
}

export function cliDocs(): string {
  const program = buildProgram(NO_IO, () => undefined);
  const lines = [
    '# svc command reference',
    '',
    '<!-- Generated from functions/cli/program.ts by `npm run docs:cli`; do not edit by hand. -->',
    '',
    // The examples are synopses (placeholder ids, paths of your own); docs/cli-guide.md's run as written.
    '<!-- doctest: skip page (command synopses with placeholders; the CLI guide runs its walkthrough) -->',
    '',
    program.description(),
    '',
    '`svc --help`, `svc help <command>` and `svc <command> --help` print the same, with examples.',
    '`svc --version` prints the version. Colour is used on a terminal only, never with `NO_COLOR` set.',
    'What a server sends is printed without the escape sequences a terminal obeys (title, clipboard,',
    'cursor, links; colour stays): always on stderr (messages, followed logs), on stdout when it is a',
    'terminal (piped or redirected, stdout is data and stays as the server sent it). A server that',
    'sends nothing for 10 minutes (no answer, or a stalled one) or more than 256 MiB in one answer is',
    'given up on, with an error naming the request. A base URL over plain http to another machine',
    'is warned about: the token would cross the network unencrypted.',
    '',
    '```',
    EXIT_CODES_HELP,
    '```',
    '',
  ];
  const walk = (cmd: Command, path: string) => {
    for (const sub of cmd.commands) {
      const subPath = path ? `${path} ${sub.name()}` : sub.name();
      lines.push(...section(sub, subPath));
      walk(sub, subPath);
    }
  };
  walk(program, '');
  return lines.join('\n').trimEnd() + '\n';
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(DOCS_FILE, cliDocs());
  console.log(`wrote ${DOCS_FILE}`);
}
