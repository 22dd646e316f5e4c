import { recordOf } from './build.js';

/*
 * The few Python expressions a signature needs: literals (for defaults) and names, subscripts
 * and `|` unions (for annotations). Anything else - calls, arithmetic, lambdas - is `other`: it
 * has no JSON value and no type we could name. python-syntax.ts builds these from the tree.
 */
export type PyExpr =
  | { kind: 'name'; name: string } // dotted: `typing.List`
  | { kind: 'str'; value: string | undefined } // undefined: bytes or an f-string with fields
  | { kind: 'int' | 'float'; value: number }
  | { kind: 'const'; value: boolean | null } // True, False, None
  | { kind: 'list' | 'tuple' | 'set'; items: PyExpr[] }
  | { kind: 'dict'; entries: [PyExpr, PyExpr][] }
  | { kind: 'subscript'; target: PyExpr; args: PyExpr[] }
  | { kind: 'union'; members: PyExpr[] }
  | { kind: 'ellipsis' }
  | { kind: 'other' };

export const OTHER: PyExpr = { kind: 'other' };

export function parseNumber(text: string): PyExpr {
  if (/[jJ]$/.test(text)) return OTHER; // complex numbers have no JSON form
  const digits = text.replace(/_/g, '');
  const radix = { x: 16, o: 8, b: 2 }[digits[1]?.toLowerCase() as 'x' | 'o' | 'b'];
  if (digits[0] === '0' && radix) return { kind: 'int', value: parseInt(digits.slice(2), radix) };
  if (/[.eE]/.test(digits)) return { kind: 'float', value: Number(digits) };
  return { kind: 'int', value: Number(digits) };
}

/**
 * The parts of one string literal's source text (`rb'…'`, `"""…"""`); null when it is not
 * closed (the grammar recovers from that, Python does not).
 */
export function stringParts(text: string): { prefix: string; body: string } | null {
  const open = text.search(/["']/);
  if (open < 0) return null;
  const prefix = text.slice(0, open).toLowerCase();
  const quote = text.startsWith(text[open].repeat(3), open) ? text[open].repeat(3) : text[open];
  const body = text.slice(open + quote.length, text.length - quote.length);
  const closed = text.length >= open + 2 * quote.length && text.endsWith(quote) && !endsEscaped(text.slice(0, text.length - quote.length), prefix);
  return closed ? { prefix, body } : null;
}

/** `"a\"` is not closed: its last quote is escaped (an even run of backslashes escapes nothing). */
function endsEscaped(beforeQuote: string, prefix: string): boolean {
  // Counted from the end: the regular expression /\\*$/ tried every backslash of a long run as a
  // start, quadratic in the run (200,000 backslashes in a default held the service 30 s).
  let run = 0;
  while (run < beforeQuote.length && beforeQuote[beforeQuote.length - 1 - run] === '\\') run++;
  return !prefix.includes('r') && run % 2 === 1;
}

/** The value of a string literal without replacement fields; undefined for bytes. */
export function stringValue(prefix: string, body: string): string | undefined {
  if (prefix.includes('b')) return undefined;
  const text = prefix.includes('f') ? body.replace(/\{\{/g, '{').replace(/\}\}/g, '}') : body;
  return prefix.includes('r') ? text : decodeEscapes(text);
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v',
};

/** Python's escape sequences; an unknown escape keeps its backslash, as Python does. */
function decodeEscapes(body: string): string | undefined {
  let out = '';
  const re = /\\(\r?\n|[\\'"abfnrtv]|[0-7]{1,3}|x[\da-fA-F]{2}|u[\da-fA-F]{4}|U[\da-fA-F]{8}|N\{[^}]*\})|\\/g;
  let last = 0;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    out += body.slice(last, m.index);
    last = re.lastIndex;
    const esc = m[1];
    if (esc === undefined) out += '\\';
    else if (esc.endsWith('\n')) continue; // line continuation inside the string
    else if (esc in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[esc];
    else if (/^[0-7]/.test(esc)) out += String.fromCodePoint(parseInt(esc, 8));
    else if (esc[0] === 'N') return undefined; // a character by its Unicode name: no table here
    else {
      const code = parseInt(esc.slice(1), 16);
      if (code > 0x10ffff) return undefined; // Python rejects it too
      out += String.fromCodePoint(code);
    }
  }
  return out + body.slice(last);
}

export const NOT_LITERAL = Symbol('not a literal');

/** The JSON value of a Python literal (tuples and sets become arrays), or NOT_LITERAL. */
export function literalValue(expr: PyExpr): unknown {
  switch (expr.kind) {
    case 'str':
      return expr.value ?? NOT_LITERAL;
    case 'int':
    case 'float':
      return Number.isFinite(expr.value) ? expr.value : NOT_LITERAL;
    case 'const':
      return expr.value;
    case 'list':
    case 'tuple':
    case 'set': {
      const items = expr.items.map(literalValue);
      return items.includes(NOT_LITERAL) ? NOT_LITERAL : items;
    }
    case 'dict': {
      const entries: [string, unknown][] = [];
      for (const [k, v] of expr.entries) {
        // json.dumps turns int keys into strings; other keys have no JSON form.
        const key = k.kind === 'str' || k.kind === 'int' ? literalValue(k) : NOT_LITERAL;
        const value = literalValue(v);
        if (key === NOT_LITERAL || value === NOT_LITERAL) return NOT_LITERAL;
        entries.push([String(key), value]);
      }
      return recordOf(entries);
    }
    default:
      return NOT_LITERAL;
  }
}
