import { describe, expect, it } from 'vitest';
import { firstMissingOutput, outputsOf, parseDocPage } from '../../docs/doc-blocks.js';

/** The rules the doctests (test/docs/doctests.test.ts) read the docs' shell examples by. */

describe('doc blocks', () => {
  it('finds sh and bash blocks with their lines, and the skip annotation right before one', () => {
    const page = parseDocPage(['# T', '', '```sh', 'echo 1', '```', '', '<!-- doctest: skip (needs AWS) -->', '```bash', 'npx cdk deploy', '```', '', '```js', 'x', '```', ''].join('\n'));
    expect(page.blocks.map((b) => [b.line, b.code, b.skip])).toEqual([
      [3, 'echo 1', undefined],
      [8, 'npx cdk deploy', 'needs AWS'],
    ]);
  });

  it('skips a whole page, names the pages it follows, and refuses an annotation it does not know', () => {
    const page = parseDocPage('<!-- doctest: after docs/users-and-tokens.md -->\n<!-- doctest: skip page (synopses) -->\n\n```sh\nsvc job get <id>\n```\n');
    expect(page.after).toEqual(['docs/users-and-tokens.md']);
    expect(page.blocks[0]!.skip).toBe('synopses');
    expect(() => parseDocPage('<!-- doctest: skip it -->\n')).toThrow(/unknown doctest annotation/);
  });

  it('reads the comment right after a command, and its "#  " continuations, as what it prints', () => {
    const code = [
      '# a heading comment, not output',
      'curl -s $SVC/a \\',
      '  -d x',
      '# "hello Ada"',
      '# a remark after the output, not output',
      'curl -s $SVC/b',
      '# {…,"a":1,',
      '#  "b":2}',
      'curl -s $SVC/hash',
      '# 70f3fc133ea2e8a4   (the hash: yours differs)',
      'curl -s $SVC/c',
      '# {"ok":true}   (never the secret)',
    ].join('\n');
    expect(outputsOf(code)).toEqual(['"hello Ada"', '{…,"a":1,', '"b":2}', '{"ok":true}']);
  });

  it('matches outputs in order, with … for any text', () => {
    expect(firstMissingOutput('abc"hello Ada"{"x":1,"a":1,"b":2}', ['"hello Ada"', '{…"a":1,', '"b":2}'])).toBeUndefined();
    expect(firstMissingOutput('"b":2} "hello Ada"', ['"hello Ada"', '"b":2}'])).toBe('"b":2}');
    expect(firstMissingOutput('{"a": 1}', ['{"a":1}'])).toBe('{"a":1}');
  });
});
