import { describe, expect, it } from 'vitest';
import { inferSchema } from '../../../functions/core/schema/index.js';

const sh = (content: string) => inferSchema('bash', content);

describe('inferSchema for bash', () => {
  it('reads positional arguments copied into named variables', () => {
    expect(
      sh(`#!/usr/bin/env bash
set -euo pipefail

name="$1"
count="\${2:-10}"
region=$3
echo "Deploying $name x$count to $region"
`),
    ).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string' },
        count: { type: 'string', default: '10' },
        region: { type: 'string' },
      },
      required: ['name', 'region'],
      order: ['name', 'count', 'region'],
    });
  });

  it('orders inputs by position, wherever the lines are in the script', () => {
    const schema = sh(`echo start
second="$2"
echo middle
first="\${1}"
third=\${3:-fallback} # with a comment
`);
    expect(schema.order).toEqual(['first', 'second', 'third']);
    expect(schema.properties.third).toEqual({ type: 'string', default: 'fallback' });
    expect(schema.required).toEqual(['first', 'second']);
  });

  it('keeps defaults with spaces, quotes and empty defaults', () => {
    const schema = sh(`token="$1"
digest="\${2:-latest with spaces}"
greeting="\${3:-"hello world"}"
optional="\${4:-}"
dash=\${5-x}
`);
    expect(schema.properties).toEqual({
      token: { type: 'string' },
      digest: { type: 'string', default: 'latest with spaces' },
      greeting: { type: 'string', default: 'hello world' },
      optional: { type: 'string', default: '' },
      dash: { type: 'string', default: 'x' },
    });
    expect(schema.required).toEqual(['token']);
  });

  it('reads braced positions beyond 9', () => {
    const lines = Array.from({ length: 11 }, (_, i) => `arg${i + 1}="\${${i + 1}}"`);
    expect(sh(lines.join('\n')).order).toHaveLength(11);
  });

  it('ignores lines that do not declare an input', () => {
    const schema = sh(`a="$1"
b='$2'
c="$10"
d="prefix-$2"
e="$0"
  f="$2"
local g="$2"
h=$@
run() {
  local arg="$1"
}
`);
    expect(schema.order).toEqual(['a']);
  });

  it('stops at the first missing position, since later inputs could not arrive in place', () => {
    expect(sh('a="$1"\nc="$3"\n').order).toEqual(['a']);
    expect(sh('b="$2"\n').order).toEqual([]);
  });

  it('keeps the first declaration of a position or a name', () => {
    expect(sh('a="$1"\nagain="$1"\nb="$2"\na="$3"\n').order).toEqual(['a', 'b']);
  });

  it('handles CRLF line breaks', () => {
    expect(sh('name="$1"\r\ncount="${2:-3}"\r\n').properties).toEqual({
      name: { type: 'string' },
      count: { type: 'string', default: '3' },
    });
  });

  it('gives an empty schema for a script without inputs', () => {
    expect(sh('#!/bin/bash\necho "hello"\n')).toMatchObject({ properties: {}, required: [], order: [] });
    expect(sh('')).toMatchObject({ properties: {}, required: [], order: [] });
  });
});
