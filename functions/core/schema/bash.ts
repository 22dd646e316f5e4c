import type { ParamInfo } from './build.js';

/*
 * Windmill's convention: a bash script declares its inputs by copying positional arguments into
 * named variables, e.g. `name="$1"` or `count="${2:-10}"`. Only unindented lines count: an
 * indented assignment usually sits in a function body, where `$1` is the function's argument.
 */
const REF = String.raw`\$(?:(\d)|\{(\d+)\}|\{(\d+):?-(DEFAULT)\})`;
// Written so that no two parts can match the same blanks: a long line must not backtrack.
const TAIL = String.raw`[ \t]*(?:;[ \t]*)?(?:#.*)?$`;
const QUOTED = new RegExp(String.raw`^([A-Za-z_]\w*)="${REF.replace('DEFAULT', '.*')}"${TAIL}`);
const BARE = new RegExp(String.raw`^([A-Za-z_]\w*)=${REF.replace('DEFAULT', '[^}]*')}${TAIL}`);

export function bashParams(content: string): ParamInfo[] {
  const byPosition = new Map<number, ParamInfo>();
  const names = new Set<string>();
  for (const line of content.split(/\r?\n/)) {
    const m = QUOTED.exec(line) ?? BARE.exec(line);
    if (!m) continue;
    const [, name, digit, braced, withDefault, rawDefault] = m;
    const position = Number(digit ?? braced ?? withDefault);
    // $0 is the script's own name; a later line cannot redeclare an input or a name.
    if (position === 0 || byPosition.has(position) || names.has(name)) continue;
    names.add(name);
    const schema: Record<string, unknown> = { type: 'string' };
    if (rawDefault !== undefined) schema.default = unquote(rawDefault);
    byPosition.set(position, { name, schema, required: rawDefault === undefined });
  }
  // Runners pass inputs as $1, $2, … in schema order, so the inputs stop at the first missing
  // position (as in Windmill): after a gap, a named input would arrive in the wrong position.
  const params: ParamInfo[] = [];
  for (let position = 1; byPosition.has(position); position++) params.push(byPosition.get(position)!);
  return params;
}

/** `${2:-"hello world"}` expands to `hello world`. */
function unquote(value: string): string {
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(value);
  return quoted ? (quoted[1] ?? quoted[2]) : value;
}
