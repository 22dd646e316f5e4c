import { SchemaInferenceError } from './errors.js';

/*
 * Just enough of Python's tokenizer to read a function signature without running Python (the
 * core also runs inside a Node Lambda). Comments, whitespace and line breaks are dropped;
 * strings are single tokens, so commas and brackets inside them never split a parameter.
 */

export interface PyToken {
  kind: 'name' | 'number' | 'string' | 'op';
  /** The source text; for a string its decoded value is in `value`. */
  text: string;
  /** Decoded string value; undefined for bytes and for f-strings with replacement fields. */
  value?: string;
  /** Column of the first character, 0 at the start of a line. */
  col: number;
  line: number;
}

const NAME = /[\p{ID_Start}_][\p{ID_Continue}]*/uy;
const NUMBER = /0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?/y;
const OPERATORS = ['**=', '//=', '>>=', '<<=', '...', '->', '**', '//', ':=', '==', '!=', '<=', '>=', '<<', '>>'];
const STRING_PREFIXES = new Set(['r', 'u', 'b', 'f', 'br', 'rb', 'fr', 'rf']);

/** Yields tokens lazily, so that code after `main` we cannot lex does not matter. */
export function* tokenize(source: string): Generator<PyToken> {
  let pos = 0;
  let line = 1;
  let lineStart = 0;
  const at = (kind: PyToken['kind'], text: string, start: number, value?: string): PyToken => ({
    kind, text, value, col: start - lineStart, line,
  });
  while (pos < source.length) {
    const ch = source[pos];
    if (ch === '\n') {
      pos++;
      line++;
      lineStart = pos;
    } else if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f' || (ch === '\\' && /^\\\r?\n/.test(source.slice(pos, pos + 3)))) {
      pos++; // a backslash before a line break joins lines: the break is counted when reached
    } else if (ch === '#') {
      while (pos < source.length && source[pos] !== '\n') pos++;
    } else if (ch === '"' || ch === "'") {
      const start = pos;
      const str = readString(source, pos, '');
      const token = at('string', source.slice(start, str.end), start, str.value);
      ({ line, lineStart } = advanceLines(source, start, str.end, line, lineStart));
      pos = str.end;
      yield token;
    } else if (/\d/.test(ch) || (ch === '.' && /\d/.test(source[pos + 1] ?? ''))) {
      NUMBER.lastIndex = pos;
      const text = NUMBER.exec(source)![0];
      yield at('number', text, pos);
      pos += text.length;
    } else if (matchesAt(NAME, source, pos)) {
      const start = pos;
      const text = source.slice(pos, NAME.lastIndex);
      pos = NAME.lastIndex;
      const quote = source[pos];
      if ((quote === '"' || quote === "'") && STRING_PREFIXES.has(text.toLowerCase())) {
        const str = readString(source, pos, text.toLowerCase());
        const token = at('string', source.slice(start, str.end), start, str.value);
        ({ line, lineStart } = advanceLines(source, start, str.end, line, lineStart));
        pos = str.end;
        yield token;
      } else {
        yield at('name', text, start);
      }
    } else {
      const op = OPERATORS.find((o) => source.startsWith(o, pos)) ?? ch;
      yield at('op', op, pos);
      pos += op.length;
    }
  }
}

function matchesAt(re: RegExp, source: string, pos: number): boolean {
  re.lastIndex = pos;
  return re.test(source);
}

function advanceLines(source: string, from: number, to: number, line: number, lineStart: number) {
  for (let i = from; i < to; i++) {
    if (source[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, lineStart };
}

/** Reads the string literal whose opening quote is at `pos`; returns where it ends. */
function readString(source: string, pos: number, prefix: string): { end: number; value?: string } {
  const quote = source.startsWith(source[pos].repeat(3), pos) ? source[pos].repeat(3) : source[pos];
  const raw = prefix.includes('r');
  const isF = prefix.includes('f');
  let i = pos + quote.length;
  let body = '';
  let hasFields = false;
  for (;;) {
    if (i >= source.length || (quote.length === 1 && source[i] === '\n')) {
      const line = source.slice(0, pos).split('\n').length;
      throw new SchemaInferenceError(`cannot read the Python script: unterminated string on line ${line}`);
    }
    if (source.startsWith(quote, i)) break;
    const ch = source[i];
    if (ch === '\\') {
      const width = source.startsWith('\r\n', i + 1) ? 3 : 2; // an escaped Windows line break
      body += source.slice(i, i + width);
      i += width;
    } else if (isF && ch === '{' && source[i + 1] !== '{') {
      hasFields = true;
      i = skipReplacementField(source, i);
    } else {
      const literalBrace = isF && (ch === '{' || ch === '}') && source[i + 1] === ch;
      body += ch;
      i += literalBrace ? 2 : 1;
    }
  }
  const end = i + quote.length;
  if (prefix.includes('b') || hasFields) return { end };
  return { end, value: raw ? body : decodeEscapes(body) };
}

/** Skips `{expr!r:fmt}` of an f-string, including strings and nested braces inside it. */
function skipReplacementField(source: string, pos: number): number {
  let depth = 0;
  let i = pos;
  while (i < source.length) {
    const ch = source[i];
    if (ch === '"' || ch === "'") {
      i = readString(source, i, '').end;
      continue;
    }
    if (ch === '{') depth++;
    if (ch === '}' && --depth === 0) return i + 1;
    i++;
  }
  return i;
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
