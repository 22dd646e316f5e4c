import { recordOf } from './build.js';
import type { PyToken } from './python-lexer.js';

/*
 * The few Python expressions a signature needs: literals (for defaults) and names, subscripts
 * and `|` unions (for annotations). Anything else - calls, arithmetic, lambdas - parses as
 * `other`: it has no JSON value and no type we could name.
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

const OTHER: PyExpr = { kind: 'other' };
const CONSTANTS: Record<string, boolean | null> = { True: true, False: false, None: null };
const KEYWORDS = new Set(['lambda', 'not', 'await', 'yield', 'if', 'else', 'for', 'in', 'is', 'and', 'or']);

class Unsupported extends Error {}

export function parseExpr(tokens: readonly PyToken[]): PyExpr {
  const parser = new Parser(tokens);
  try {
    const expr = parser.union();
    return parser.atEnd() ? expr : OTHER;
  } catch (err) {
    if (err instanceof Unsupported) return OTHER;
    throw err;
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: readonly PyToken[]) {}

  atEnd = () => this.pos === this.tokens.length;
  private peek = (text: string) => this.tokens[this.pos]?.kind !== 'string' && this.tokens[this.pos]?.text === text;
  private take(): PyToken {
    const token = this.tokens[this.pos++];
    if (!token) throw new Unsupported();
    return token;
  }
  private expect(text: string): void {
    if (!this.peek(text)) throw new Unsupported();
    this.pos++;
  }

  union(): PyExpr {
    const members = [this.unary()];
    while (this.peek('|')) {
      this.pos++;
      members.push(this.unary());
    }
    return members.length === 1 ? members[0] : { kind: 'union', members };
  }

  private unary(): PyExpr {
    if (this.peek('-') || this.peek('+')) {
      const sign = this.take().text === '-' ? -1 : 1;
      const operand = this.unary();
      return operand.kind === 'int' || operand.kind === 'float' ? { ...operand, value: sign * operand.value } : OTHER;
    }
    return this.postfix();
  }

  private postfix(): PyExpr {
    let expr = this.primary();
    for (;;) {
      if (this.peek('.')) {
        this.pos++;
        const attr = this.take();
        if (attr.kind !== 'name') throw new Unsupported();
        expr = expr.kind === 'name' ? { kind: 'name', name: `${expr.name}.${attr.text}` } : OTHER;
      } else if (this.peek('[')) {
        this.pos++;
        expr = { kind: 'subscript', target: expr, args: this.sequence(']').items };
      } else if (this.peek('(')) {
        this.skipCall();
        expr = OTHER;
      } else {
        return expr;
      }
    }
  }

  private primary(): PyExpr {
    const token = this.take();
    switch (token.kind) {
      case 'name':
        if (Object.hasOwn(CONSTANTS, token.text)) return { kind: 'const', value: CONSTANTS[token.text] };
        if (KEYWORDS.has(token.text)) throw new Unsupported();
        return { kind: 'name', name: token.text };
      case 'number':
        return parseNumber(token.text);
      case 'string':
        return this.strings(token);
    }
    switch (token.text) {
      case '...':
        return { kind: 'ellipsis' };
      case '[':
        return { kind: 'list', items: this.sequence(']').items };
      case '(': {
        const { items, trailingComma } = this.sequence(')');
        return items.length === 1 && !trailingComma ? items[0] : { kind: 'tuple', items };
      }
      case '{':
        return this.braces();
    }
    throw new Unsupported();
  }

  /** Adjacent literals concatenate: `"a" "b"` is `"ab"`. */
  private strings(first: PyToken): PyExpr {
    let value = first.value;
    while (this.tokens[this.pos]?.kind === 'string') {
      const next = this.take().value;
      value = value === undefined || next === undefined ? undefined : value + next;
    }
    return { kind: 'str', value };
  }

  private sequence(close: string): { items: PyExpr[]; trailingComma: boolean } {
    const items: PyExpr[] = [];
    let trailingComma = false;
    while (!this.peek(close)) {
      items.push(this.union());
      trailingComma = this.peek(',');
      if (!trailingComma) break;
      this.pos++;
    }
    this.expect(close);
    return { items, trailingComma };
  }

  private braces(): PyExpr {
    if (this.peek('}')) {
      this.pos++;
      return { kind: 'dict', entries: [] };
    }
    const first = this.union();
    if (!this.peek(':')) {
      if (!this.peek(',')) {
        this.expect('}');
        return { kind: 'set', items: [first] };
      }
      this.pos++;
      return { kind: 'set', items: [first, ...this.sequence('}').items] };
    }
    const entries: [PyExpr, PyExpr][] = [];
    let key = first;
    for (;;) {
      this.expect(':');
      entries.push([key, this.union()]);
      if (!this.peek(',')) break;
      this.pos++;
      if (this.peek('}')) break;
      key = this.union();
    }
    this.expect('}');
    return { kind: 'dict', entries };
  }

  private skipCall(): void {
    let depth = 0;
    do {
      const token = this.take();
      if (token.kind === 'op' && '([{'.includes(token.text)) depth++;
      if (token.kind === 'op' && ')]}'.includes(token.text)) depth--;
    } while (depth > 0);
  }
}

function parseNumber(text: string): PyExpr {
  if (/[jJ]$/.test(text)) return OTHER; // complex numbers have no JSON form
  const digits = text.replace(/_/g, '');
  const radix = { x: 16, o: 8, b: 2 }[digits[1]?.toLowerCase() as 'x' | 'o' | 'b'];
  if (digits[0] === '0' && radix) return { kind: 'int', value: parseInt(digits.slice(2), radix) };
  if (/[.eE]/.test(digits)) return { kind: 'float', value: Number(digits) };
  return { kind: 'int', value: Number(digits) };
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
