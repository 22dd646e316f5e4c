import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { loadConfig } from './config.js';
import { connect, type ConnectionFlags } from './connection.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import type { Io } from './io.js';
import { isItemPath, languageOfFile } from './layout.js';
import type { JsonFlag } from './account-commands.js';
import type { ScriptMetadataView } from '../core/views/item-views.js';

/**
 * `svc script generate-metadata <file...>`: asks the server for the lock a push of each script
 * would store (its imports resolved against the instance's registry) and writes it beside the
 * script as `<path>.script.lock`, so the push installs exactly that lock and `locksRequired` is
 * met. The inferred input schema is printed with --json-output (svc keeps no schema on disk: the
 * server infers it on every push).
 */
export async function generateMetadata(files: string[], flags: ConnectionFlags & JsonFlag, io: Io): Promise<ExitCode> {
  const defaultTs = loadConfig(io.cwd).config.defaultTs ?? 'bun';
  const remote = connect(flags, io);
  const report: { path: string; lock_file: string | null; schema: unknown }[] = [];
  for (const file of files) {
    const rel = relative(io.cwd, resolve(io.cwd, file)).split(sep).join('/');
    const found = languageOfFile(rel, defaultTs);
    if (!found || !isItemPath(found.base)) throw new CliError(EXIT.usage, `${file}: not a script file of this project (u/... or f/..., ending .ts, .py, .sh, .go, ...)`);
    if (!existsSync(resolve(io.cwd, rel))) throw new CliError(EXIT.usage, `${file}: no such file`);
    const lockFile = `${found.base}.script.lock`;
    const existing = existsSync(resolve(io.cwd, lockFile)) ? readFileSync(resolve(io.cwd, lockFile), 'utf8') : null;
    const content = readFileSync(resolve(io.cwd, rel), 'utf8');
    // A fresh lock: the current one is not sent, so the imports are resolved again.
    const { lock, schema } = await remote.post<ScriptMetadataView>('/scripts/generate_metadata', { path: found.base, language: found.language, content });
    if (lock !== null && lock !== existing) writeFileSync(resolve(io.cwd, lockFile), lock);
    report.push({ path: found.base, lock_file: lock === null ? null : lockFile, schema });
    if (!flags.jsonOutput) io.err(lock === null ? `${found.base}: imports nothing to install, no lock` : `${found.base}: ${lock === existing ? 'lock unchanged' : 'wrote'} ${lockFile}`);
  }
  if (flags.jsonOutput) io.out(JSON.stringify(report, null, 2));
  return EXIT.ok;
}
