import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { setReferenced } from './sandbox-process.js';
import type { ShimChannel, ShimMessage } from './warm-worker.js';

/** The longest reply line a process may send before its first job says how long one may be. */
const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Splits what a process writes into lines of at most `maxLineBytes` bytes (see `ShimChannel`):
 * user code can write on the pipe too, and a line that never ends must not grow in the service's
 * memory (Node's readline, or the IPC channel, kept it whole: a job that wrote half a GiB without
 * a newline brought the whole service down with `Invalid string length`). Past the limit nothing
 * more is read into a line: `overflow` is told once and the rest is dropped.
 */
export class LineReader {
  maxLineBytes = DEFAULT_MAX_LINE_BYTES;
  private parts: Buffer[] = [];
  private pending = 0;
  private overflowed = false;

  constructor(
    /** A whole line and the bytes it took, its newline included. */
    private readonly line: (text: string, bytes: number) => void,
    private readonly overflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    let start = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      if (!this.add(chunk.subarray(start, newline))) return;
      const bytes = this.pending + 1;
      const text = Buffer.concat(this.parts, this.pending).toString('utf8');
      this.parts = [];
      this.pending = 0;
      this.line(text, bytes);
      start = newline + 1;
    }
    if (start < chunk.length) this.add(chunk.subarray(start));
  }

  /** Adds to the line in progress; false (and `overflow` told) once it is longer than allowed. */
  private add(part: Buffer): boolean {
    this.pending += part.length;
    if (this.pending > this.maxLineBytes) {
      this.overflowed = true;
      this.parts = [];
      this.overflow();
      return false;
    }
    if (part.length > 0) this.parts.push(part);
    return true;
  }
}

/**
 * JSON lines: requests on the child's fd 3, replies on its fd 4 (every shim: Node, Deno, Python,
 * and a Go program). Not Node's IPC channel, whose parent keeps a message that never ends whole.
 */
export function pipeChannel(child: ChildProcess): ShimChannel {
  const requests = child.stdio[3] as Writable;
  const replies = child.stdio[4] as Readable;
  // Writes to a dead child fail with EPIPE; its exit is reported to the job separately.
  requests.on('error', () => undefined);
  replies.on('error', () => undefined);
  const listeners: ((message: ShimMessage, bytes: number) => void)[] = [];
  const overflowListeners: (() => void)[] = [];
  const byteListeners: ((bytes: number) => void)[] = [];
  const reader = new LineReader(
    (line, bytes) => {
      let message: ShimMessage;
      try {
        message = JSON.parse(line) as ShimMessage;
      } catch {
        return; // user code scribbling on fd 4 must not bring the parent down
      }
      for (const listener of listeners) listener(message, bytes);
    },
    () => {
      for (const listener of overflowListeners) listener();
    },
  );
  replies.on('data', (chunk: Buffer) => {
    for (const listener of byteListeners) listener(chunk.length);
    reader.push(chunk);
  });
  return {
    send(message) {
      requests.write(`${JSON.stringify(message)}\n`);
    },
    onMessage(listener) {
      listeners.push(listener);
    },
    onOverflow(listener) {
      overflowListeners.push(listener);
    },
    onBytes(listener) {
      byteListeners.push(listener);
    },
    limitLines(maxBytes) {
      reader.maxLineBytes = maxBytes;
    },
    holdEventLoop(referenced) {
      setReferenced([requests, replies], referenced);
    },
  };
}

