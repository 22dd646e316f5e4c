import { describe, expect, it } from 'vitest';
import { inferSchema, SchemaInferenceError } from '../../../functions/core/schema/index.js';
import { goSignature, goSyntaxError } from '../../../functions/core/schema/go.js';
import { externalImports, goBuildFiles } from '../../../functions/runtime/go-source.js';

const go = (params: string, extra = '') => `package inner\n\n${extra}\nfunc main(${params}) (any, error) {\n\treturn nil, nil\n}\n`;
const props = (params: string, extra = '') => inferSchema('go', go(params, extra)).properties;

describe('Go schema inference', () => {
  it('maps integer kinds, floats, strings, bools, slices, maps and any', () => {
    expect(props('a int, b uint8, c int64, d rune, e float32, f float64, g string, h bool, i []int, j [3]string, k map[string]float64, l any, m interface{}, n []byte')).toEqual({
      a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' }, d: { type: 'integer' },
      e: { type: 'number' }, f: { type: 'number' }, g: { type: 'string' }, h: { type: 'boolean' },
      i: { type: 'array', items: { type: 'integer' } }, j: { type: 'array', items: { type: 'string' } },
      k: { type: 'object', additionalProperties: { type: 'number' } }, l: {}, m: {},
      n: { type: 'string', contentEncoding: 'base64' },
    });
  });

  it('reads structs by their json tags: exported fields only, "-" skipped, omitempty and pointers optional', () => {
    const extra = 'type Address struct {\n\tCity string `json:"city"`\n}\n\ntype Person struct {\n\tName string `json:"name"`\n\tAge int `json:"age,omitempty"`\n\tNick *string\n\tSecret string `json:"-"`\n\thidden int\n\tHome Address `json:"home"`\n}\n';
    expect(props('p Person, q *Person', extra).p).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' }, Nick: { type: 'string' }, home: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      required: ['name', 'home'],
    });
    expect(inferSchema('go', go('p Person, q *Person', extra)).required).toEqual(['p']);
  });

  it('keeps the parameter order, grouped names included, and stops at a type that contains itself', () => {
    const schema = inferSchema('go', go('x, y string, t Tree', 'type Tree struct {\n\tKids []Tree `json:"kids"`\n}\n'));
    expect(schema.order).toEqual(['x', 'y', 't']);
    expect(schema.properties.t).toEqual({ type: 'object', properties: { kids: { type: 'array', items: { type: 'object' } } }, required: ['kids'] });
  });

  it('refuses what the runner cannot call, with the reason', () => {
    const refused = (content: string) => () => inferSchema('go', content);
    expect(refused('package inner\n\nfunc other() {}\n')).toThrow(/needs a top-level function main/);
    expect(refused('package inner\n\nfunc main(x int) int { return x }\n')).toThrow(/main must return two values, \(T, error\)/);
    expect(refused('package inner\n\nfunc main(xs ...int) (int, error) { return 0, nil }\n')).toThrow(/variadic/);
    expect(refused('package inner\n\nfunc main(x int) (int, error) {\n\treturn x +, nil\n}\n')).toThrow(SchemaInferenceError);
    expect(refused('package inner\n\nfunc main(x int) (int, error) {\n\treturn x +, nil\n}\n')).toThrow('main.go:4:');
  });

  it('locates the first syntax error by line and column', () => {
    expect(goSyntaxError('package inner\n\nfunc main() (int, error) {\n\treturn 1 +, nil\n}\n')).toEqual({ line: 4, column: 12 });
    expect(goSyntaxError(go('x int'))).toBeNull();
  });
});

describe('Go build files', () => {
  it('renames package main in place, so positions in errors stay those of the script', () => {
    const content = 'package main\n\nfunc main(x int) (int, error) {\n\treturn x, nil\n}\n';
    const { files } = goBuildFiles(content, '/opt/svc/clients/go');
    expect(files['inner/main.go']).toBe(content.replace('package main', 'package inner'));
    expect(files['inner/main.go'].split('\n').length).toBe(content.split('\n').length);
    expect(files['go.mod']).toContain('replace svc => "/opt/svc/clients/go"');
    expect(files['inner/svc_generated_entry.go']).toContain('if raw, ok := svcArgs["x"]; ok {');
  });

  it('imports the packages parameter types name, and tells modules from the standard library', () => {
    const content = 'package inner\n\nimport (\n\t"time"\n\t"svc"\n\t"net/http"\n\t"github.com/x/y"\n)\n\nfunc main(d time.Duration) (any, error) { return nil, nil }\n';
    expect(goBuildFiles(content, '/c').files['inner/svc_generated_entry.go']).toContain('time "time"');
    expect(externalImports(goSignature(content))).toEqual(['github.com/x/y']);
  });
});
