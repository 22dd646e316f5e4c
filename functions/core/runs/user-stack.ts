/**
 * The stack of a job's error as its author should read it: the frames of their own code, with
 * paths relative to the script, and none of svc's. The language shims that load a script and call
 * `main` sit at the bottom of every stack, in a job directory whose name is the runtime's business
 * (a temp path locally, another in the sandbox function): both would only show a user svc's
 * internals and differ between the shells.
 */

/** The files svc puts beside a job's code to run it (functions/runtime/shims). */
const SHIMS = ['node-shim.mjs', 'deno-shim.mjs', 'python_shim.py', 'shared-folder.mjs'];

/** What ends the path of a file in a stack line. */
const PATH_END = /[\s"'()]/;
/** A real stack names one job directory (two at most, when a frame names it otherwise); a stack a script made up may name any number. */
const MAX_JOB_DIRS = 4;

/**
 * The job directories of the shims a stack names: the `/.../` before a shim's name (after
 * `file://`). Found in one pass from the left: the regular expression this replaces,
 * /(?:file:\/\/)?(\/[^\s"'()]*\/)node-shim\.mjs/g, tried every `/` of a path as a start and read
 * the path from each, quadratic in it (a script's error whose stack was 200,000 slashes held the
 * service 28 s).
 */
function jobDirs(stack: string): Set<string> {
  const found = SHIMS.flatMap((shim) => {
    const at: number[] = [];
    for (let i = stack.indexOf(shim); i !== -1; i = stack.indexOf(shim, i + 1)) if (stack[i - 1] === '/') at.push(i);
    return at;
  }).sort((a, b) => a - b);
  const dirs = new Set<string>();
  let pathStart = 0;
  let scanned = 0;
  for (const i of found) {
    for (; scanned < i; scanned++) if (PATH_END.test(stack[scanned])) pathStart = scanned + 1;
    const slash = stack.indexOf('/', pathStart);
    const afterScheme = slash - 5 >= pathStart && stack.startsWith('file:///', slash - 5) ? slash + 2 : slash;
    dirs.add(stack.slice(afterScheme, i));
    if (dirs.size >= MAX_JOB_DIRS) break;
  }
  return dirs;
}

export function userStack(stack: string): string {
  const dirsOfJob = jobDirs(stack);
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
  for (const dir of dirsOfJob) text = text.split(`file://${dir}`).join('').split(dir).join('');
  return text;
}
