import { describe, expect, it } from 'vitest';
import { inferSchema, SchemaInferenceError } from '../../../functions/core/schema/index.js';

const props = (content: string) => inferSchema('bun', content).properties;

describe('inferSchema for TypeScript', () => {
  it('reads an exported async function main, in parameter order', () => {
    const schema = inferSchema(
      'deno',
      `import * as wmill from 'windmill-client';

export async function main(name: string, count: number, dryRun: boolean, tags: string[], ids: Array<number>) {
  return { name, count };
}`,
    );
    expect(schema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string' },
        count: { type: 'number' },
        dryRun: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        ids: { type: 'array', items: { type: 'number' } },
      },
      required: ['name', 'count', 'dryRun', 'tags', 'ids'],
      order: ['name', 'count', 'dryRun', 'tags', 'ids'],
    });
    expect(Object.keys(schema.properties)).toEqual(schema.order);
  });

  it.each([
    ['export const main = async (a: string, b = 2) => a.repeat(b);'],
    ['export const main = (a: string, b = 2): string => a.repeat(b);'],
    ['export const main = async function (a: string, b = 2) { return a; };'],
    ['export let main = ((a: string, b = 2) => a) satisfies Function;'],
    ['export function main(a: string, b = 2) { return a; }'],
    ['async function main(a: string, b = 2) { return a; }\nexport { main };'],
    ['const run = (a: string, b = 2) => a;\nexport { run as main };'],
  ])('accepts the form %s', (source) => {
    const schema = inferSchema('nativets', source);
    expect(schema.properties).toEqual({ a: { type: 'string' }, b: { type: 'number', default: 2 } });
    expect(schema.required).toEqual(['a']);
  });

  it('takes optional parameters and defaults as not required', () => {
    const schema = inferSchema(
      'bun',
      `export async function main(
  url: string,
  method?: 'GET' | 'POST',
  retries: number = 3,
  note: string | undefined,
  parent: string | null,
) {}`,
    );
    expect(schema.required).toEqual(['url']);
    expect(schema.properties.method).toEqual({ type: 'string', enum: ['GET', 'POST'] });
    expect(schema.properties.retries).toEqual({ type: 'number', default: 3 });
    expect(schema.properties.note).toEqual({ type: 'string' });
    expect(schema.properties.parent).toEqual({ type: 'string' });
  });

  it('maps literal defaults to JSON and infers the type when there is no annotation', () => {
    expect(
      props(`export function main(
  s = 'hi', t = \`tpl\`, n = -1.5, h = 0xff, big = 1_000, yes = true, none = null,
  list = ['a', 'b'], mixed = [1, 'a'], obj = { a: 1, 'b-c': [true], nested: { x: null } },
  cast = 'x' as const,
) {}`),
    ).toEqual({
      s: { type: 'string', default: 'hi' },
      t: { type: 'string', default: 'tpl' },
      n: { type: 'number', default: -1.5 },
      h: { type: 'number', default: 255 },
      big: { type: 'number', default: 1000 },
      yes: { type: 'boolean', default: true },
      none: { default: null },
      list: { type: 'array', items: { type: 'string' }, default: ['a', 'b'] },
      mixed: { type: 'array', default: [1, 'a'] },
      obj: { type: 'object', default: { a: 1, 'b-c': [true], nested: { x: null } } },
      cast: { type: 'string', default: 'x' },
    });
  });

  it('keeps the annotation type and drops a computed default, which still makes the input optional', () => {
    const schema = inferSchema(
      'bun',
      `const LIMIT = 10;
export async function main(since: Date = new Date(), limit: number = LIMIT, raw = process.env.X, spread = [...[1]]) {}`,
    );
    expect(schema.properties).toEqual({
      since: { type: 'string', format: 'date-time' },
      limit: { type: 'number' },
      raw: {},
      spread: {},
    });
    expect(schema.required).toEqual([]);
  });

  it('describes object literal types with their own required list', () => {
    expect(props('export async function main(user: { name: string; age?: number; tags: string[]; "x-id": number }) {}')).toEqual({
      user: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          age: { type: 'number' },
          tags: { type: 'array', items: { type: 'string' } },
          'x-id': { type: 'number' },
        },
        required: ['name', 'tags', 'x-id'],
      },
    });
  });

  it('turns named types into resources, as Windmill does', () => {
    const schema = inferSchema(
      'deno',
      `type Postgresql = object;
type Slack = { token: string };
interface Github { token: string }
export async function main(db: Postgresql, slack: Slack, gh: Github, s3: RT.S3, pg: Resource<'postgresql'>) {}`,
    );
    expect(schema.properties).toEqual({
      db: { type: 'object', format: 'resource-postgresql' },
      slack: { type: 'object', format: 'resource-slack' },
      gh: { type: 'object', format: 'resource-github' },
      s3: { type: 'object', format: 'resource-s3' },
      pg: { type: 'object', format: 'resource-postgresql' },
    });
  });

  it('names the resource type of a type name in snake_case, as Windmill does', () => {
    expect(
      props(`type PostgresqlConn = { host: string };
export async function main(a: PostgresqlConn, b: S3Bucket, c: HTTPRequest, d: c_my_type, e: Oauth2Token, f: Resource<'c_custom'>) {}`),
    ).toEqual({
      a: { type: 'object', format: 'resource-postgresql_conn' },
      b: { type: 'object', format: 'resource-s3_bucket' },
      c: { type: 'object', format: 'resource-http_request' },
      d: { type: 'object', format: 'resource-c_my_type' },
      e: { type: 'object', format: 'resource-oauth2_token' },
      f: { type: 'object', format: 'resource-c_custom' },
    });
  });

  it('asks for a resource also when the type is not declared in the script, optional or in a list', () => {
    expect(props('export async function main(db: Postgresql, dbs: Postgresql[], spare?: Mysql, other: Mysql | undefined) {}')).toEqual({
      db: { type: 'object', format: 'resource-postgresql' },
      dbs: { type: 'array', items: { type: 'object', format: 'resource-postgresql' } },
      spare: { type: 'object', format: 'resource-mysql' },
      other: { type: 'object', format: 'resource-mysql' },
    });
  });

  it('expands an alias that stands for plain data instead of calling it a resource', () => {
    expect(
      props(`type Mode = 'fast' | 'slow';
type Ids = readonly number[];
type Loop = Loop[];
export async function main(mode: Mode = 'fast', ids: Ids, loop: Loop) {}`),
    ).toEqual({
      mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
      ids: { type: 'array', items: { type: 'number' } },
      loop: { type: 'array', items: { type: 'object', format: 'resource-loop' } },
    });
  });

  it('knows the built-in types', () => {
    expect(
      props(`export function main(
  a: any, b: unknown, c: object, d: Record<string, number>, e: Date, f: Map<string, string>,
  g: bigint, h: 1 | 2, i: true | false, j: string | number, k: ('a' | 'b')[], l: [string, number],
  m: Readonly<{ x: string }>, n: \`id-\${string}\`, o: Promise<string>,
) {}`),
    ).toEqual({
      a: {},
      b: {},
      c: { type: 'object' },
      d: { type: 'object' },
      e: { type: 'string', format: 'date-time' },
      f: {},
      g: { type: 'integer' },
      h: { type: 'number', enum: [1, 2] },
      i: { type: 'boolean' },
      j: {},
      k: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
      l: { type: 'array' },
      m: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
      n: { type: 'string' },
      o: {},
    });
  });

  it('ignores the this and rest parameters, which no caller can pass by name', () => {
    expect(inferSchema('bun', 'export function main(this: void, a: string, ...rest: string[]) {}').order).toEqual(['a']);
  });

  it('takes the implementation of an overloaded main', () => {
    const schema = inferSchema(
      'bun',
      'export function main(a: string): void;\nexport function main(a: string, b?: number) {}',
    );
    expect(schema.order).toEqual(['a', 'b']);
  });

  it('gives a schema with no properties for a main without parameters', () => {
    expect(inferSchema('bun', 'export async function main() { return 42 }')).toMatchObject({ properties: {}, required: [], order: [] });
  });

  it('keeps a parameter named __proto__ as a property', () => {
    const schema = inferSchema('bun', 'export function main(__proto__: string) {}');
    expect(Object.keys(schema.properties)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype);
  });
});

describe('inferSchema for TypeScript: errors', () => {
  const error = (source: string) => {
    try {
      inferSchema('bun', source);
    } catch (err) {
      expect(err).toBeInstanceOf(SchemaInferenceError);
      return (err as Error).message;
    }
    throw new Error('expected a SchemaInferenceError');
  };

  it('reports a missing main', () => {
    expect(error('export async function handler(a: string) {}')).toMatch(/no main function found/);
    expect(error('// export function main(a: string) {}\nconst x = "export function main() {}";')).toMatch(/no main function found/);
  });

  it('reports a main that is not exported by name', () => {
    expect(error('async function main(a: string) {}')).toMatch(/main is not exported/);
    expect(error('export default async function main(a: string) {}')).toMatch(/main is not exported/);
  });

  it('reports an exported main that is not a function', () => {
    expect(error('export const main = 42;')).toMatch(/not a function/);
    expect(error('export const main = wrap(async (a: string) => a);')).toMatch(/not a function/);
  });

  it('reports destructured parameters with their position', () => {
    expect(error('export async function main(a: string, { b, c }: { b: string; c: number }) {}')).toMatch(
      /cannot parse parameter 2 of main: destructured/,
    );
    expect(error('export const main = ([x, y]: number[]) => x + y;')).toMatch(/parameter 1 of main/);
  });

  it('is a 400 ApiError so an unhandled one becomes a clear client error', () => {
    try {
      inferSchema('deno', 'console.log(1)');
    } catch (err) {
      expect(err).toMatchObject({ status: 400, code: 'schema_inference_failed', name: 'SchemaInferenceError' });
    }
    expect.assertions(1);
  });
});
