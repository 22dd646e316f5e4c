/**
 * Exit codes of the svc command, so scripts and CI can tell outcomes apart:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | done (or nothing to do) |
 * | 1 | some operations failed (the others were applied) or an unexpected error |
 * | 2 | bad usage: unknown command or flag, invalid svc.yaml, git branch not configured |
 * | 3 | aborted: the changes were not confirmed |
 * | 4 | conflicts: an item changed both locally and remotely since the last sync (use --force) |
 * | 5 | the local files did not pass validation (lint, locksRequired): nothing was pushed |
 * | 6 | the server could not be reached |
 * | 7 | the server refused the token (401) or the operation (403) |
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  aborted: 3,
  conflicts: 4,
  invalid: 5,
  unreachable: 6,
  unauthorized: 7,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one message and an exit code, without a stack trace. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
