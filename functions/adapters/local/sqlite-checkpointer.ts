import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { errorText, log } from '../../core/common/logger.js';

/**
 * WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside the commit
 * that crosses the threshold (1,000 pages), on the service's one thread: every ~100th job commit
 * then copies the WAL into the database file and syncs both, and the request waiting on it with
 * it. Measured on this machine (ext4): a job insert 210 µs with automatic checkpoints, 96 µs
 * without; a completion 110 vs 37 µs. Here a second connection, on a worker thread, checkpoints
 * every `intervalMs` instead, and the service's connection only appends to the WAL.
 *
 * Durability is unchanged: a commit is in the WAL when it returns, exactly as before (WAL with
 * synchronous=NORMAL: a killed process loses nothing; only an OS crash or power cut may lose the
 * commits since the last sync, which each checkpoint still does before copying). PASSIVE never
 * waits for or blocks the service's connection. Should the thread die, the service's connection
 * goes back to checkpointing itself, so the WAL never grows without bound.
 */
export class BackgroundCheckpoints {
  private readonly worker: Worker;
  private stopped = false;

  private constructor(private readonly db: Database.Database, file: string, intervalMs: number) {
    // The thread loads the same driver as the service; its path is resolved here so it is found
    // wherever this module runs from (sources or the bundle in dist/).
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(CHECKPOINTER, { eval: true, workerData: { driver, file, intervalMs, restartFrames: RESTART_FRAMES, restartWaitMs: RESTART_WAIT_MS } });
    this.worker.unref();
    this.worker.on('message', (m: { error?: string }) => {
      if (m.error) log.warn('background WAL checkpoint failed', { error: m.error });
    });
    this.worker.on('error', (e) => log.error('the WAL checkpoint thread failed', { error: errorText(e) }));
    this.worker.on('exit', () => {
      if (!this.stopped && this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    });
  }

  /** Takes the checkpoints of `db` (the file at `file`) off its thread. */
  static start(db: Database.Database, file: string, intervalMs = DEFAULT_INTERVAL_MS): BackgroundCheckpoints {
    db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT}`);
    return new BackgroundCheckpoints(db, file, intervalMs);
  }

  /** Ends the thread (after its current checkpoint); the service's connection checkpoints on close. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('stop');
    await exited;
  }
}

const DEFAULT_INTERVAL_MS = 200;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
/**
 * Under a steady stream of commits a PASSIVE checkpoint never catches up with the last frame, and
 * SQLite only starts the WAL over once one has: past this many frames the thread takes the write
 * lock for a RESTART checkpoint (the frames left since the PASSIVE one, then the restart).
 */
const RESTART_FRAMES = 1000;
const RESTART_WAIT_MS = 1000;
/** Should the thread fall behind anyway, the service's connection checkpoints past this many. */
const SAFETY_AUTOCHECKPOINT = 10_000;

// CommonJS evaluated on the worker thread: open, checkpoint on a timer, close on 'stop'.
const CHECKPOINTER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = ' + workerData.restartWaitMs);
const timer = setInterval(() => {
  try {
    const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    if (log > workerData.restartFrames) db.pragma('wal_checkpoint(RESTART)');
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;
