import { afterAll, describe, expect, it } from 'vitest';
import { errorOf, makeRunner, request, runOnce, schemaOf } from './runtime-helpers.js';

const { runner, dispose } = makeRunner();
afterAll(dispose);

describe('Bash scripts', () => {
  it('passes positional args in schema order: strings raw, objects as JSON, missing as empty', async () => {
    const content = 'echo "log line"\necho "[$1] [$2] [$3]"\n';
    const req = request('bash', content, { schema: schemaOf('a', 'b', 'c'), args: { c: { k: 1 }, a: 'hello world' } });
    const { outcome, log } = await runOnce(runner, req);
    expect(outcome).toEqual({ ok: true, result: '[hello world] [] [{"k":1}]', streamed: false });
    expect(log).toContain('log line\n');
  });

  it('passes arguments and variables literally, whatever shell syntax they hold', async () => {
    const hostile = ["it's", '$(touch /tmp/x) `id` $HOME', 'a\nb', '\\\' -- "q"', '-n', ''];
    const content = 'for a in "$@"; do printf "%s|" "$a"; done\nprintf "%s" "$EXTRA"\n';
    const req = request('bash', content, { schema: schemaOf('a', 'b', 'c', 'd', 'e', 'f'), args: Object.fromEntries(hostile.map((v, i) => ['abcdef'[i]!, v])) });
    const { log } = await runOnce(runner, { ...req, env: { ...req.env, EXTRA: "x'; exit 9; '" } });
    expect(log).toBe(`${hostile.join('|')}|x'; exit 9; '`);
  });

  it('fails a job whose argument holds a NUL character, which no Bash argument can hold', async () => {
    const req = request('bash', 'echo "[$1] [$2]"\n', { schema: schemaOf('a', 'b'), args: { a: 'x\u0000y', b: 'second' } });
    const error = errorOf((await runOnce(runner, req)).outcome);
    expect(error.name).toBe('BashInputError');
    expect(error.message).toContain('NUL');
  });

  it('parses the last non-empty stdout line as JSON when it is JSON', async () => {
    const { outcome } = await runOnce(runner, request('bash', 'echo first\necho \'{"n": 1}\'\necho\necho "" >&2\n'));
    expect(outcome).toEqual({ ok: true, result: { n: 1 }, streamed: false });
  });

  it('returns null when nothing was printed', async () => {
    expect((await runOnce(runner, request('bash', 'true\n'))).outcome).toEqual({ ok: true, result: null, streamed: false });
  });

  it('fails with ExecutionErr, the exit code and the last output on a non-zero exit', async () => {
    const error = errorOf((await runOnce(runner, request('bash', 'echo "about to fail" >&2\nexit 3\n'))).outcome);
    expect(error.name).toBe('ExecutionErr');
    expect(error.message).toContain('3');
    expect(error.message).toContain('about to fail');
  });
});
