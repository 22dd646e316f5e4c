import type { Io } from './io.js';

/**
 * Stderr while a job is followed: what the job streams is written as it comes (it may stop
 * mid-line), and every line of ours (logs, step headings, notices) starts on a fresh line.
 */
export class LiveOutput {
  private midLine = false;

  constructor(private readonly io: Io) {}

  /** A chunk the job streams, as it is. */
  stream(text: string): void {
    if (!text) return;
    this.io.stream(text);
    this.midLine = !text.endsWith('\n');
  }

  /** One or more whole lines of ours. */
  line(text: string): void {
    this.endLine();
    this.io.err(text);
  }

  endLine(): void {
    if (this.midLine) this.io.stream('\n');
    this.midLine = false;
  }
}

/**
 * Log text that arrives in pieces, printed by whole lines: a line is printed once its newline has
 * come; the text after the last newline waits for the next piece, or for `rest` at the end.
 */
export class LogLines {
  private pending = '';
  private received = 0;

  /** How much of the log text has been printed, in characters (the API's `log_offset`). */
  get printed(): number {
    return this.received - this.pending.length;
  }

  /** A piece of log text that follows what came before; answers the lines it completes. */
  add(piece: string): string[] {
    this.pending += piece;
    this.received += piece.length;
    const end = this.pending.lastIndexOf('\n');
    if (end < 0) return [];
    const lines = this.pending.slice(0, end).split('\n');
    this.pending = this.pending.slice(end + 1);
    return lines;
  }

  /** The log text so far, whole (a job as listed): only what is new since the last call counts. */
  addFrom(logs: string): string[] {
    return this.add(logs.slice(this.received));
  }

  /** What the final log text holds beyond the printed lines, without its last newline. */
  rest(finalLogs: string): string {
    return finalLogs.slice(this.printed).replace(/\n$/, '');
  }
}
