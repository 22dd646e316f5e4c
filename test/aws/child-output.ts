import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * Keeps the last output of an emulator process for error messages and drains its pipes (a full
 * pipe would block Java or moto). The pipes must not keep the test process alive on their own.
 */
export function collectOutput(child: ChildProcess): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-8_000);
  };
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', keep);
    (stream as Socket | null)?.unref?.();
  }
  return () => text;
}
