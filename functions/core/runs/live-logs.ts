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
/**
 * What one job's live text may cost the store per second, in bytes rewritten: each write rewrites
 * all that was stored before it, so past FLUSH_MS worth of this budget the writes grow further apart
 * (a 5 MiB log is written again every ~5 s). At a fixed interval, a job that printed 5 MiB and then
 * a dot every 300 ms made the store write ~21 MB/s for as long as it ran (377 MB in 18 s).
 */
export const LIVE_REWRITE_BYTES_PER_SECOND = 1024 * 1024;

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

  // The next write waits until the rewrite it costs (all written so far) fits the budget.
  const nextFlushMs = () => Math.max(flushMs, Math.ceil((written / LIVE_REWRITE_BYTES_PER_SECOND) * 1000));

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
      timer ??= setTimeout(flush, nextFlushMs());
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
