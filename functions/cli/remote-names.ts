import { lstatSync } from 'node:fs';
import { join, posix, resolve, sep } from 'node:path';
import { CliError, EXIT } from './errors.js';
import { STATE_DIR } from './state.js';

/**
 * Every file a pull writes is named by the server (a script, flow or app path, a flow module id, a
 * resource type name, ...). The server is not trusted with the project's disk: a name is taken
 * only if it stays a plain relative path inside the sync folder, outside the CLI's own state
 * directory. Checked for the whole remote side before anything is written, so a refused name
 * leaves the folder (and everything around it) as it was.
 */

// Control characters (NUL included) and the Windows separator and drive colon never belong in a synced file name.
const FORBIDDEN_CHARACTERS = /[\u0000-\u001f\u007f\\:]/;

/** Why `file` may not be written under the sync folder, or null when it may. */
export function unsafeFileName(file: string): string | null {
  if (file === '') return 'it is empty';
  if (FORBIDDEN_CHARACTERS.test(file)) return 'it has a control character, a backslash or a colon';
  if (posix.isAbsolute(file)) return 'it is an absolute path';
  const segments = file.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return 'it has an empty, "." or ".." segment';
  if (segments[0] === STATE_DIR || segments[0] === '.git') return `it is inside ${segments[0]}/`;
  return null;
}

/** An item path or name for a request URL; one the server made up that is not a plain relative path is refused before it is requested or written. */
export function itemUrlPath(path: string): string {
  const why = unsafeFileName(path);
  if (why) throw new CliError(EXIT.failed, `the server named an item outside the sync folder: ${JSON.stringify(path)} (${why}); nothing was written`);
  return encodeURI(path);
}

/** Throws, naming the item and the file, when the server named a file that would leave `root`. */
export function assertInsideFolder(root: string, item: string, files: Iterable<string>): void {
  const base = resolve(root);
  for (const file of files) {
    const why = unsafeFileName(file) ?? (resolve(base, file).startsWith(base + sep) ? null : 'it resolves outside the folder');
    if (why) {
      throw new CliError(EXIT.failed, `the server named a file outside the sync folder for ${item}: ${JSON.stringify(file)} (${why}); nothing was written`);
    }
  }
}

/**
 * Throws when writing `file` under `root` would go through a symbolic link already in the folder
 * (the file itself, or a directory on its way): a link a cloned repository brought along
 * (`f/ops/hello.ts -> ~/.bashrc`, `f -> ~/.config/autostart`) would otherwise have a pull write
 * the server's content wherever it points. Checked with the names, before anything is written.
 */
export function assertNoLinks(root: string, item: string, files: Iterable<string>): void {
  for (const file of files) {
    const segments = file.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const at = segments.slice(0, i).join('/');
      let link = false;
      try {
        link = lstatSync(join(root, at)).isSymbolicLink();
      } catch {
        break; // Not there yet: nothing below it is either.
      }
      if (link) throw new CliError(EXIT.failed, `${at} is a symbolic link: a pull writes no file through one (${item}: ${JSON.stringify(file)}); nothing was written`);
    }
  }
}
