/**
 * The stack of a job's error as its author should read it: the frames of their own code, with
 * paths relative to the script, and none of svc's. The language shims that load a script and call
 * `main` sit at the bottom of every stack, in a job directory whose name is the runtime's business
 * (a temp path locally, another in the sandbox function): both would only show a user svc's
 * internals and differ between the shells.
 */

/** The files svc puts beside a job's code to run it (functions/runtime/shims). */
const SHIMS = ['node-shim.mjs', 'deno-shim.mjs', 'python_shim.py', 'shared-folder.mjs'];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SHIM_PATH = new RegExp(`(?:file://)?(/[^\\s"'()]*/)(?:${SHIMS.map(escape).join('|')})`, 'g');

export function userStack(stack: string): string {
  const jobDirs = new Set([...stack.matchAll(SHIM_PATH)].map((m) => m[1]));
  const mentionsShim = (line: string) => SHIMS.some((shim) => line.includes(shim));
  const kept: string[] = [];
  let droppingPythonFrame = false;
  for (const line of stack.split('\n')) {
    // A Python frame is its `File ...` line and the more indented source and caret lines under it.
    if (/^ {2}File "/.test(line)) droppingPythonFrame = mentionsShim(line);
    else if (droppingPythonFrame && /^ {4}/.test(line)) continue;
    else droppingPythonFrame = false;
    if (droppingPythonFrame) continue;
    // A JavaScript frame is one `at` line.
    if (/^\s+at /.test(line) && mentionsShim(line)) continue;
    kept.push(line);
  }
  let text = kept.join('\n');
  for (const dir of jobDirs) text = text.split(`file://${dir}`).join('').split(dir).join('');
  return text;
}
