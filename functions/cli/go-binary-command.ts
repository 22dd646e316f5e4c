import { readFileSync } from 'node:fs';
import { CliError, EXIT, type ExitCode } from './errors.js';
import type { Io } from './io.js';
import type { GoTarget } from '../ports.js';
import { GoBuildError, prebuiltGoBinary } from '../runtime/go-prebuilt.js';

/**
 * `svc go-binary <file> --goarch <arch>`: what `svc sync push` does for a Go script on a server
 * that builds none (the AWS shell), for those who create scripts with curl: the binary, built with
 * svc's generated wrapper for the sandbox, as the `go_binary` field of `scripts/create`.
 */
export async function goBinaryCommand(file: string, opts: { goarch: GoTarget['goarch'] }, io: Io): Promise<ExitCode> {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(EXIT.usage, `cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    io.out(JSON.stringify(await prebuiltGoBinary(content, { goos: 'linux', goarch: opts.goarch })));
  } catch (e) {
    if (e instanceof GoBuildError) throw new CliError(EXIT.invalid, `${file}: ${e.message}`);
    throw e;
  }
  return EXIT.ok;
}
