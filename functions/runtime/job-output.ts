import { StringDecoder } from 'node:string_decoder';

/** The two ways a job's output can end (see JobOutputRouter). */
export interface JobEnds {
  /** Ends the log; the result follows on the reply channel. */
  marker: string;
  /** Ends the log and is followed by the result message itself, one JSON line. */
  trailer: string;
}

/** How a job's output ended: with `trailer`, the result message's text; with the marker, none. */
export interface OutputEnd {
  done?: string;
}

interface ActiveJob {
  ends: JobEnds;
  deliver: (text: string) => void;
  /** Counts the result message's text as it arrives, so a line that never ends cannot grow unbounded. */
  countDone: (text: string) => void;
  ended: (end: OutputEnd) => void;
  /** Set once the trailer was seen: the result message read so far. */
  done?: string[];
}

/**
 * Attributes the stdout of a warm process to the job it is serving. Each job's output ends with a
 * string only that job was given. Shims end it with `trailer` followed by their result message on
 * the same stream, in one write: the result cannot overtake the output, and the service is woken
 * once per job. A process that sends its result on its reply channel instead (a Go binary built by
 * an older svc, or a job that streamed, whose chunks are on that channel) ends its output with
 * `marker`, and the job is complete only once both came through. Output while no job runs (a
 * stray timer, a background process) is dropped rather than given to the next job.
 */
export class JobOutputRouter {
  private readonly decoder = new StringDecoder('utf8');
  private job: ActiveJob | undefined;
  /** Text that may be the start of an end string, held back until the next chunk decides. */
  private held = '';

  /** Starts routing to a job; the returned promise resolves when its output ended. */
  begin(ends: JobEnds, deliver: (text: string) => void, countDone: (text: string) => void): Promise<OutputEnd> {
    return new Promise((ended) => {
      this.held = '';
      this.job = { ends, deliver, countDone, ended };
    });
  }

  /** Stops routing (the job was stopped from outside); later output is dropped. */
  end(): void {
    this.job = undefined;
    this.held = '';
  }

  push(chunk: Buffer): void {
    const job = this.job;
    const text = this.held + this.decoder.write(chunk);
    this.held = '';
    if (!job) return;
    if (job.done) return this.readDone(job, text);
    const { at, end } = firstEnd(text, job.ends);
    if (at < 0) {
      const keep = Math.max(partialLength(text, job.ends.marker), partialLength(text, job.ends.trailer));
      const ready = text.slice(0, text.length - keep);
      this.held = text.slice(text.length - keep);
      if (ready) job.deliver(ready);
      return;
    }
    if (at > 0) job.deliver(text.slice(0, at));
    if (end === job.ends.marker) {
      this.job = undefined;
      job.ended({});
      return;
    }
    job.done = [];
    this.readDone(job, text.slice(at + end.length));
  }

  /** Hands over whatever was held back, for when the process ended without ending the job's output. */
  flush(): void {
    const rest = this.held + this.decoder.end();
    this.held = '';
    if (rest && this.job && !this.job.done) this.job.deliver(rest);
  }

  private readDone(job: ActiveJob & { done?: string[] }, text: string): void {
    const newline = text.indexOf('\n');
    const part = newline < 0 ? text : text.slice(0, newline);
    job.countDone(part);
    job.done!.push(part);
    if (newline < 0) return;
    this.job = undefined;
    job.ended({ done: job.done!.join('') });
  }
}

/** Where the first of the two end strings starts in `text`, if either does. */
function firstEnd(text: string, ends: JobEnds): { at: number; end: string } {
  const marker = text.indexOf(ends.marker);
  const trailer = text.indexOf(ends.trailer);
  if (trailer >= 0 && (marker < 0 || trailer < marker)) return { at: trailer, end: ends.trailer };
  return { at: marker, end: ends.marker };
}

/** Length of the longest end of `text` that is a beginning of `end`. */
function partialLength(text: string, end: string): number {
  for (let length = Math.min(text.length, end.length - 1); length > 0; length--) {
    if (end.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}
