import type Database from 'better-sqlite3';

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: the writes made while the event loop handles one round of I/O share one
 * transaction, committed at the end of that round (setImmediate), and each writer's promise
 * settles only once that commit is done. Nothing is acknowledged before it is durable, exactly as
 * with a commit per statement; what changes is the cost under load. A commit writes every page
 * it changed to the WAL, two write() calls per page, and a job's insert touches the table and six
 * indexes: consecutive jobs share most of those pages (the newest end of each index), so sixteen
 * concurrent webhook calls write them once per round instead of once per statement.
 *
 * A statement that fails inside the group is undone alone (SQLite's statement rollback); one that
 * rolls back the whole transaction (disk full, I/O error) fails every writer of the group.
 */
export class GroupCommit {
  private waiters: Waiter[] | null = null;

  constructor(private readonly db: Database.Database) {}

  /** Runs `work` in the open group (opening one) and resolves with its result once committed. */
  write<T>(work: () => T): Promise<T> {
    let result: T;
    try {
      result = this.join(work);
    } catch (error) {
      return Promise.reject(error);
    }
    // Inside a transaction of the caller's own (a bulk load), whose commit is the caller's.
    if (!this.waiters) return Promise.resolve(result);
    return new Promise<T>((resolve, reject) => this.waiters!.push({ resolve: () => resolve(result), reject }));
  }

  /**
   * Runs `work` in the open group and returns at once, for a caller that cannot wait (the local
   * pool's claim): its change is durable with the group, and until then a crash leaves it undone.
   */
  join<T>(work: () => T): T {
    if (!this.waiters && this.db.inTransaction) return work();
    if (!this.waiters) {
      this.db.exec('BEGIN IMMEDIATE');
      this.waiters = [];
      setImmediate(() => this.commit());
    }
    try {
      return work();
    } catch (error) {
      // SQLite gave up the whole transaction: nothing of this group was stored.
      if (!this.db.inTransaction) this.fail(error);
      throw error;
    }
  }

  /** Commits the open group now (before the connection closes). */
  commit(): void {
    const waiters = this.waiters;
    if (!waiters) return;
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      this.fail(error);
      return;
    }
    this.waiters = null;
    for (const w of waiters) w.resolve();
  }

  private fail(error: unknown): void {
    const waiters = this.waiters ?? [];
    this.waiters = null;
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    for (const w of waiters) w.reject(error);
  }
}
