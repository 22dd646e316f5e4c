/**
 * The commonest flow expressions only read a value: `results.a`, `flow_input.user.name`,
 * `results.rows[0]`. Such a path over the run's JSON data has one possible meaning, so the core
 * reads it itself rather than paying a sandbox call per step. Anything else — a call, an
 * operator, a property the data does not own (`.length` of a string, `.constructor`) — is left to
 * the sandbox evaluator, which gives it full JavaScript meaning.
 */

const IDENTIFIER = /^[A-Za-z_$][\w$]*/;
const ACCESS = /^(?:\s*\.\s*([A-Za-z_$][\w$]*)|\s*\[\s*(\d{1,9})\s*\]|\s*\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\s*\[\s*'((?:[^'\\]|\\.)*)'\s*\])/;

/** The path's names, the scope variable first; null when `expr` is more than a plain path. */
export function parsePlainPath(expr: string): string[] | null {
  let rest = expr.trim();
  const head = IDENTIFIER.exec(rest);
  if (!head) return null;
  const names = [head[0]];
  rest = rest.slice(head[0].length);
  while (rest.trim() !== '') {
    const access = ACCESS.exec(rest);
    if (!access) return null;
    const quoted = access[3] ?? access[4];
    // Escapes in a quoted name need JavaScript's string rules: the evaluator's business.
    if (quoted !== undefined && quoted.includes('\\')) return null;
    names.push(access[1] ?? access[2] ?? quoted!);
    rest = rest.slice(access[0].length);
  }
  return names;
}

/**
 * The value at a plain path, read without running code; `undefined` when the expression is not a
 * plain path or leaves the scope's own data (the caller then asks the sandbox).
 */
export function readPlainPath(expr: string, scope: Record<string, unknown>): { value: unknown } | undefined {
  const names = parsePlainPath(expr);
  if (!names) return undefined;
  let value: unknown = scope;
  for (const name of names) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  // A copy, as the sandbox's answer would be: the step's arguments never alias the run's state.
  return { value: value === undefined ? undefined : structuredClone(value) };
}
