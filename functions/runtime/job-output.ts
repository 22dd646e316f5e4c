import { StringDecoder } from 'node:string_decoder';

interface ActiveJob {
  marker: string;
  deliver: (text: string) => void;
  markerSeen: () => void;
}

/**
 * Attributes the stdout of a warm process to the job it is serving. The result travels on another
 * channel and can overtake the output, so the child ends each job by writing a per-job marker and
 * the job is complete only once the marker came through: everything before it belongs to the job.
 * Output while no job runs (a stray timer, a background process) is dropped rather than given to
 * the next job.
 */
export class JobOutputRouter {
  private readonly decoder = new StringDecoder('utf8');
  private job: ActiveJob | undefined;
  /** Text that may be the start of the marker, held back until the next chunk decides. */
  private held = '';

  /** Starts routing to a job; the returned promise resolves when its end marker was seen. */
  begin(marker: string, deliver: (text: string) => void): Promise<void> {
    return new Promise((markerSeen) => {
      this.held = '';
      this.job = { marker, deliver, markerSeen };
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
    const at = text.indexOf(job.marker);
    if (at >= 0) {
      if (at > 0) job.deliver(text.slice(0, at));
      this.job = undefined;
      job.markerSeen();
      return;
    }
    const keep = partialMarkerLength(text, job.marker);
    const ready = text.slice(0, text.length - keep);
    this.held = text.slice(text.length - keep);
    if (ready) job.deliver(ready);
  }

  /** Hands over whatever was held back, for when the process ended without a marker. */
  flush(): void {
    const rest = this.held + this.decoder.end();
    this.held = '';
    if (rest && this.job) this.job.deliver(rest);
  }
}

/** Length of the longest end of `text` that is a beginning of `marker`. */
function partialMarkerLength(text: string, marker: string): number {
  for (let length = Math.min(text.length, marker.length - 1); length > 0; length--) {
    if (marker.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}
