import type Database from 'better-sqlite3';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Group commit: the writes asked for while the event loop handles one round of I/O are run
 * together, in one transaction, when that round ends (setImmediate), and each writer's promise
 * settles only after that transaction has committed. A commit writes every page it changed to
 * the WAL, and a job's insert changes the jobs table, its indexes and job_fields: concurrent runs
 * share most of those pages (the newest end of each index), so sixteen webhook calls write them
 * once per round instead of once per statement.
 *
 * Writes are queued, not run at once inside an open transaction: until the round's commit no
 * statement of it has run, so no read on this connection (an SSE stream, a console page, a sync
 * caller polling) can see a change that is not yet committed, and nothing can be reported before
 * it is durable. Writes run in the order they were asked for.
 *
 * A write that throws is undone alone and its writer gets the error; the others of the round are
 * committed (the round runs again with a savepoint per write). When SQLite gives up the whole transaction (a
 * full disk, an I/O error) or the commit fails, every writer of the round gets the error and
 * nothing of it is stored.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;

  // Prepared once: exec() parses its SQL at every call.
  private readonly begin: Database.Statement;
  private readonly end: Database.Statement;
  private readonly undo: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.end = db.prepare('COMMIT');
    this.undo = db.prepare('ROLLBACK');
  }

  /** Queues `work` for this round's transaction; resolves with its result once committed. */
  write<T>(work: () => T): Promise<T> {
    // Inside a transaction of the caller's own (a bulk load): its commit is the caller's.
    if (this.db.inTransaction) {
      try {
        return Promise.resolve(work());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commit());
      }
    });
  }

  /** Runs and commits what is queued now (also before the connection closes). */
  commit(): void {
    this.scheduled = false;
    const round = this.queue;
    if (round.length === 0) return;
    this.queue = [];
    // A round of one write needs no savepoint: its failure undoes its transaction, nothing else.
    if (round.length === 1) return this.commitOne(round[0]);
    let outcomes: Outcome[] | null;
    try {
      // Most rounds have no failing write: run them without savepoints (two statements fewer per
      // write). When one fails, nothing of the round is kept and it runs again with a savepoint
      // per write: the writes only read and change the database, so a second run is the first.
      outcomes = this.runRound(round, false) ?? this.runRound(round, true);
      this.end.run();
    } catch (error) {
      if (this.db.inTransaction) this.undo.run();
      for (const p of round) p.reject(error);
      return;
    }
    round.forEach((p, i) => {
      const outcome = outcomes![i];
      if (outcome.ok) p.resolve(outcome.value);
      else p.reject(outcome.error);
    });
  }

  /**
   * Runs the round's writes in a new transaction, left open for the commit. Without savepoints, a
   * failing write rolls the transaction back and the answer is null.
   */
  private runRound(round: Pending[], savepoints: boolean): Outcome[] | null {
    this.begin.run();
    const outcomes: Outcome[] = [];
    for (const { work } of round) {
      if (!savepoints) {
        try {
          outcomes.push({ ok: true, value: work() });
        } catch {
          if (this.db.inTransaction) this.undo.run();
          return null;
        }
        continue;
      }
      try {
        outcomes.push({ ok: true, value: this.db.transaction(work)() });
      } catch (error) {
        // SQLite ended the whole transaction: nothing of the round is stored.
        if (!this.db.inTransaction) throw error;
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  private commitOne({ work, resolve, reject }: Pending): void {
    let value: unknown;
    try {
      this.begin.run();
      value = work();
      this.end.run();
    } catch (error) {
      if (this.db.inTransaction) this.undo.run();
      reject(error);
      return;
    }
    resolve(value);
  }
}
