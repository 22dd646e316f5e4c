/**
 * Writes a running job's logs to the store as they come, at most once per FLUSH_MS, so a client
 * polling the job sees them live. A job that ends before the first flush writes nothing extra:
 * completion stores the full text anyway (the per-run statement count is a perf target).
 */
export const FLUSH_MS = 300;
/**
 * A streaming job's chunks go to the store the same way, more often: each write appends to the
 * stored stream, which the store rewrites whole (SQLite copies the row), so one write per chunk
 * cost a job of n one-byte chunks ~n²/2 bytes written (4.8 GB of WAL in a minute for 10^6).
 */
export const STREAM_FLUSH_MS = 100;

export interface ThrottledLogWriter {
  add(text: string): void;
  /**
   * Cancels the pending flush and waits for writes under way; pending text is left to completion,
   * or written now with `flush` (a stream, which completion does not write again).
   */
  stop(flush?: boolean): Promise<void>;
}

export function throttledLogWriter(append: (chunk: string) => Promise<void>, maxBytes: number, flushMs = FLUSH_MS): ThrottledLogWriter {
  let pending = '';
  let written = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writes = Promise.resolve();
  let stopped = false;

  const flush = () => {
    timer = undefined;
    const room = maxBytes - written;
    // Bounded like the final logs: past maxOutputBytes nothing more goes out live.
    const chunk = truncateUtf8(pending, room);
    pending = '';
    if (!chunk) return;
    written += Buffer.byteLength(chunk);
    // Live logs are best effort: a failed write must not fail the job; completion has the full text.
    writes = writes.then(() => append(chunk)).catch(() => undefined);
  };

  return {
    add(text) {
      if (stopped || written >= maxBytes) return;
      pending += text;
      timer ??= setTimeout(flush, flushMs);
    },
    async stop(flushPending = false) {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (flushPending && timer) flush();
      timer = undefined;
      await writes;
    },
  };
}

function truncateUtf8(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  return bytes.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '');
}
