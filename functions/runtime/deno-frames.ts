import { StringDecoder } from 'node:string_decoder';

/** A message of the Deno shim (shims/deno-shim.ts). */
export type DenoFrame =
  | { type: 'stream'; chunk: string }
  | { type: 'done'; ok: true; result: string; streamed: boolean }
  | { type: 'done'; ok: false; error: { name: string; message: string; stack?: string } };

/**
 * Splits a Deno job's stdout into the user's log and the shim's frames: a frame is a line that
 * starts with the job's random marker (the shim puts a newline before it, which is not log).
 */
export class DenoFrameReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(
    private readonly marker: string,
    private readonly onLog: (text: string) => void,
    private readonly onFrame: (frame: DenoFrame) => void,
  ) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    for (;;) {
      const at = this.pending.indexOf(this.marker);
      if (at < 0) break;
      const end = this.pending.indexOf('\n', at + this.marker.length);
      this.log(this.pending.slice(0, at), true);
      if (end < 0) {
        this.pending = this.pending.slice(at);
        return;
      }
      const json = this.pending.slice(at + this.marker.length, end);
      this.pending = this.pending.slice(end + 1);
      try {
        this.onFrame(JSON.parse(json) as DenoFrame);
      } catch {
        // only the shim knows the marker; a frame it did not write cannot parse, and is dropped
      }
    }
    // Text that may be the start of a frame waits for the next chunk.
    const keep = heldLength(this.pending, `\n${this.marker}`);
    this.log(this.pending.slice(0, this.pending.length - keep), false);
    this.pending = this.pending.slice(this.pending.length - keep);
  }

  /** What is left once the process ended. */
  flush(): void {
    this.log(this.pending + this.decoder.end(), false);
    this.pending = '';
  }

  private log(text: string, beforeFrame: boolean): void {
    // The newline the shim writes before a frame belongs to the frame.
    if (beforeFrame && text.endsWith('\n')) text = text.slice(0, -1);
    if (text) this.onLog(text);
  }
}

/** Length of the longest end of `text` that is a beginning of `prefix`. */
function heldLength(text: string, prefix: string): number {
  for (let length = Math.min(text.length, prefix.length - 1); length > 0; length--) {
    if (prefix.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}
