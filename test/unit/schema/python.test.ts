import { describe, expect, it } from 'vitest';
import { inferSchema, SchemaInferenceError } from '../../../functions/core/schema/index.js';

const py = (content: string) => inferSchema('python3', content);

describe('inferSchema for Python', () => {
  it('reads a simple main', () => {
    expect(py('import os\n\ndef main(name: str, count: int = 3):\n    return name * count\n')).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { name: { type: 'string' }, count: { type: 'integer', default: 3 } },
      required: ['name'],
      order: ['name', 'count'],
    });
  });

  it('reads a multi-line async signature with comments, markers, *args and a return annotation', () => {
    const schema = py(`from typing import Dict, List, Optional

async def main(
    user_id: int,  # the user (not the admin), see docs
    ratio: float = 0.5,
    /,
    verbose: bool = False,
    *args,
    dry_run: bool = True,
    **kwargs,
) -> Dict[str, List[int]]:
    ...
`);
    expect(schema.order).toEqual(['user_id', 'ratio', 'verbose', 'dry_run']);
    expect(schema.required).toEqual(['user_id']);
    expect(schema.properties.dry_run).toEqual({ type: 'boolean', default: true });
  });

  it('keeps commas, brackets and quotes inside strings and nested defaults', () => {
    const schema = py(`def main(
    greeting: str = "hello, (world)",
    other: str = 'it\\'s ) here',
    matrix: List[Dict[str, int]] = [{"a": 1, "b": 2}, {"c": 3}],
    config: dict = {"a": [1, 2], 'b': (3, 4), 5: None},
    doc: str = """multi
line, with ) parens""",
    joined: str = "a" 'b',
):
    pass`);
    expect(schema.order).toEqual(['greeting', 'other', 'matrix', 'config', 'doc', 'joined']);
    expect(schema.properties).toEqual({
      greeting: { type: 'string', default: 'hello, (world)' },
      other: { type: 'string', default: "it's ) here" },
      matrix: { type: 'array', items: { type: 'object' }, default: [{ a: 1, b: 2 }, { c: 3 }] },
      config: { type: 'object', default: { a: [1, 2], b: [3, 4], '5': null } },
      doc: { type: 'string', default: 'multi\nline, with ) parens' },
      joined: { type: 'string', default: 'ab' },
    });
  });

  it('maps annotations to JSON Schema types', () => {
    const schema = py(`import datetime
def main(
    a: str, b: int, c: float, d: bool, e: list, f: List[str], g: list[int], h: dict, i: Dict[str, Any],
    j: bytes, k: datetime, l: datetime.datetime, m: Literal['fast', "slow"], n: typing.List[float],
    o: Tuple[int, ...], p: Any, q: Annotated[str, "a description"], r: Literal[1, 2], s: set[str],
):
    pass`);
    expect(schema.properties).toEqual({
      a: { type: 'string' },
      b: { type: 'integer' },
      c: { type: 'number' },
      d: { type: 'boolean' },
      e: { type: 'array' },
      f: { type: 'array', items: { type: 'string' } },
      g: { type: 'array', items: { type: 'integer' } },
      h: { type: 'object' },
      i: { type: 'object' },
      j: { type: 'string', contentEncoding: 'base64' },
      k: { type: 'string', format: 'date-time' },
      l: { type: 'string', format: 'date-time' },
      m: { type: 'string', enum: ['fast', 'slow'] },
      n: { type: 'array', items: { type: 'number' } },
      o: { type: 'array', items: { type: 'integer' } },
      p: {},
      q: { type: 'string' },
      r: { type: 'integer', enum: [1, 2] },
      s: { type: 'array', items: { type: 'string' } },
    });
    expect(schema.required).toHaveLength(19);
  });

  it('treats Optional[X], Union[X, None] and X | None as X, not required', () => {
    const schema = py(`def main(a: Optional[int], b: str | None, c: Union[List[str], None] = None, d: None | float, e: Union[int, str]):
    pass`);
    expect(schema.properties).toEqual({
      a: { type: 'integer' },
      b: { type: 'string' },
      c: { type: 'array', items: { type: 'string' }, default: null },
      d: { type: 'number' },
      e: {},
    });
    expect(schema.required).toEqual(['e']);
  });

  it('turns any class it does not know into a resource, as Windmill does, including quoted forward references', () => {
    const schema = py(`class Postgresql(TypedDict):
    host: str

def main(db: Postgresql, slack: "Slack", s3: Optional[S3Bucket] = None, helper: some_type, odd: "it's"):
    pass`);
    expect(schema.properties).toEqual({
      db: { type: 'object', format: 'resource-postgresql' },
      slack: { type: 'object', format: 'resource-slack' },
      s3: { type: 'object', format: 'resource-s3_bucket', default: null },
      helper: { type: 'object', format: 'resource-some_type' },
      odd: {},
    });
  });

  it('reads the Windmill convention: a lower-case TypedDict named after the resource type', () => {
    const schema = py(`from typing import TypedDict

class postgresql(TypedDict):
    host: str
    port: int

class c_my_api(TypedDict):
    token: str

def main(db: postgresql, api: c_my_api | None = None, plain: str = "x"):
    pass`);
    expect(schema.properties).toEqual({
      db: { type: 'object', format: 'resource-postgresql' },
      api: { type: 'object', format: 'resource-c_my_api', default: null },
      plain: { type: 'string', default: 'x' },
    });
    expect(schema.required).toEqual(['db']);
  });

  it('names resource types in snake_case, and leaves builtin and typing names alone', () => {
    const schema = py(`def main(a: PostgresqlConn, b: typing.Callable, c: Decimal, d: complex, e: "HTTPRequest", f: List[gcp_service_account]):
    pass`);
    expect(schema.properties).toEqual({
      a: { type: 'object', format: 'resource-postgresql_conn' },
      b: {},
      c: {},
      d: {},
      e: { type: 'object', format: 'resource-http_request' },
      f: { type: 'array', items: { type: 'object', format: 'resource-gcp_service_account' } },
    });
  });

  it('converts Python literal defaults to JSON', () => {
    const schema = py(`def main(
    t=True, f=False, n=None, i=-42, big=1_000_000, h=0xFF, o=0o17, b=0b101, fl=1.5e3, neg=-.5,
    s='single', d="double", esc="tab\\tnew\\nquote\\"\\u00e9\\x41\\101", raw=r"C:\\path\\n",
    lst=[1, 2, 3], tup=(1, "a"), single=(5), one=(5,), empty=(), st={"x", "y"}, nested={"k": [True, None, {"z": 1.0}]},
):
    pass`);
    const defaults = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, v.default]));
    expect(defaults).toEqual({
      t: true, f: false, n: null, i: -42, big: 1000000, h: 255, o: 15, b: 5, fl: 1500, neg: -0.5,
      s: 'single', d: 'double', esc: 'tab\tnew\nquote"éAA', raw: 'C:\\path\\n',
      lst: [1, 2, 3], tup: [1, 'a'], single: 5, one: [5], empty: [], st: ['x', 'y'], nested: { k: [true, null, { z: 1 }] },
    });
    expect(schema.required).toEqual([]);
  });

  it('infers the type from the default when there is no annotation', () => {
    expect(py('def main(a=1, b=1.0, c="x", d=True, e=[1, 2], f=["a", 1], g={}, h=None, i=(1.5, 2.5)): pass').properties).toEqual({
      a: { type: 'integer', default: 1 },
      b: { type: 'number', default: 1 },
      c: { type: 'string', default: 'x' },
      d: { type: 'boolean', default: true },
      e: { type: 'array', items: { type: 'integer' }, default: [1, 2] },
      f: { type: 'array', default: ['a', 1] },
      g: { type: 'object', default: {} },
      h: { default: null },
      i: { type: 'array', items: { type: 'number' }, default: [1.5, 2.5] },
    });
  });

  it('gives a computed default no JSON default, but still makes the input optional', () => {
    const schema = py(`def main(when: datetime = datetime.now(), n: int = 2 ** 10, fn=lambda a, b: a + b, key=os.environ["KEY"], x=f"{1}", y=b"raw", z: str):
    pass`);
    expect(schema.order).toEqual(['when', 'n', 'fn', 'key', 'x', 'y', 'z']);
    expect(schema.properties).toEqual({
      when: { type: 'string', format: 'date-time' },
      n: { type: 'integer' },
      fn: {},
      key: {},
      x: {},
      y: {},
      z: { type: 'string' },
    });
    expect(schema.required).toEqual(['z']);
  });

  it('finds the top-level main, not one in a comment, a string or a class', () => {
    const schema = py(`"""
def main(in_docstring): pass
"""
# def main(in_comment): pass
TEMPLATE = f"{'def main(in_fstring)'}"
class Job:
    def main(self, in_class):
        pass

def helper(x):
    return x

def main(real: str):
    return helper(real)
`);
    expect(schema.order).toEqual(['real']);
  });

  it('reads main after decorators and with line continuations and CRLF line breaks', () => {
    const schema = py('@decorator(arg=1)\r\ndef \\\r\n  main(a: int,\r\n  b: str = "x"):\r\n    pass\r\n');
    expect(schema.order).toEqual(['a', 'b']);
  });

  it('accepts a main without parameters', () => {
    expect(py('def main():\n    return 1\n')).toMatchObject({ properties: {}, required: [], order: [] });
  });

  it('reads keyword-only parameters, nested functions and decorators whose strings hold parens', () => {
    const schema = py(`import functools

def outer():
    def main(not_this: int):
        pass

@functools.wraps(print, assigned=(")", "(("))
def main(a: int, *, b: Literal["x", 'y'] = "x", c: Optional[Dict[str, int]] = None, **kw):
    def main(inner: str):  # nested: not the entry point
        return inner
    return main
`);
    expect(schema.order).toEqual(['a', 'b', 'c']);
    expect(schema.properties.b).toEqual({ type: 'string', enum: ['x', 'y'], default: 'x' });
    expect(schema.properties.c).toEqual({ type: 'object', default: null });
    expect(schema.required).toEqual(['a']);
  });

  it('reads main before a long stretch of broken code, and reads past an error-free long script', () => {
    const garbage = 'x = = =\n'.repeat(5_000);
    expect(py(`def main(a: int, b="x"):\n    pass\n${garbage}`).order).toEqual(['a', 'b']);
    const helpers = 'def helper(x: int = 3) -> dict:\n    return {"a": [1, (2, 3)], "b": f"{x}"}\n\n'.repeat(2_000);
    expect(py(`${helpers}def main(z: float): pass\n`).properties).toEqual({ z: { type: 'number' } });
  });

  it('finds main far after a construct the grammar does not know', () => {
    const filler = 'def helper(x):\n    return x\n\n'.repeat(500);
    // Parenthesized context managers (Python 3.10) are not in the grammar.
    expect(py(`with (open("a") as f, open("b") as g):\n    pass\n${filler}def main(a: int): pass\n`).order).toEqual(['a']);
  });

  it('does not choke on code after main that it cannot tokenize', () => {
    expect(py('def main(a: int):\n    pass\nbroken = "unterminated\n').order).toEqual(['a']);
  });
});

describe('inferSchema for Python: errors', () => {
  const error = (source: string) => {
    try {
      py(source);
    } catch (err) {
      expect(err).toBeInstanceOf(SchemaInferenceError);
      return (err as Error).message;
    }
    throw new Error('expected a SchemaInferenceError');
  };

  it('reports a missing main', () => {
    expect(error('def handler(a):\n    pass\n')).toMatch(/no main function found/);
    expect(error('print("def main(a): pass")\n')).toMatch(/no main function found/);
    expect(error('class A:\n    def main(self):\n        pass\n')).toMatch(/no main function found/);
  });

  it('reports a signature it cannot read, naming the parameter', () => {
    expect(error('def main(a: int, 3):\n    pass')).toMatch(/cannot parse parameter 2 of main/);
    expect(error('def main(a: int, b:, c):\n    pass')).toMatch(/cannot parse parameter 2 of main: "b" has an empty annotation/);
    expect(error('def main(a b):\n    pass')).toMatch(/cannot parse parameter 1 of main: unexpected "b"/);
    expect(error('def main(a: int, b=):\n    pass')).toMatch(/parameter 2 of main: "b" has an empty default/);
  });

  it('reports an unterminated signature or string', () => {
    expect(error('def main(a: int,\n')).toMatch(/missing "\)"/);
    expect(error('x = "oops\ndef main(a): pass')).toMatch(/unterminated string on line 1/);
  });

  it('reports duplicate parameters', () => {
    expect(error('def main(a, a):\n    pass')).toMatch(/duplicate parameter "a"/);
  });
});
