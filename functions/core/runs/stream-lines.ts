/**
 * Windmill's way for a script to add to its result stream from anywhere in its code: a line of
 * output `WM_STREAM: <text>`, with each newline of the text written as `\n` (what windmill-client's
 * `appendToResultStream` and `streamResult` print). Such a line goes to the job's result stream,
 * as the chunks of a generator do, and not to its logs; every other line stays a log line.
 *
 * Output arrives in chunks that may cut a line anywhere, so the start of a line that may still
 * become `WM_STREAM: ...` is held until its end arrives (or the output ends); any other text passes
 * at once, so live logs are not delayed.
 */
const PREFIX = 'WM_STREAM: ';

export interface SplitOutput {
  log: string;
  stream: string;
}

export class StreamLines {
  private held = '';
  private atLineStart = true;
  /** Whether any stream line was seen: the job's result then carries the stream. */
  seen = false;

  push(text: string): SplitOutput {
    // Most output names no stream: it passes as it came, unless it ends in what may become one.
    if (this.held === '' && !text.includes(PREFIX) && !this.mayStartStreamLine(text)) {
      if (text !== '') this.atLineStart = text.endsWith('\n');
      return { log: text, stream: '' };
    }
    const input = this.held + text;
    this.held = '';
    return this.split(input, false);
  }

  /** The output has ended: a last line without its newline is a line too. */
  flush(): SplitOutput {
    const rest = this.held;
    this.held = '';
    return this.split(rest, true);
  }

  private mayStartStreamLine(text: string): boolean {
    const lastLine = text.lastIndexOf('\n') + 1;
    if (lastLine === 0 && !this.atLineStart) return false;
    const tail = text.slice(lastLine);
    return tail !== '' && PREFIX.startsWith(tail);
  }

  private split(input: string, ended: boolean): SplitOutput {
    let log = '';
    let stream = '';
    let pos = 0;
    while (pos < input.length) {
      const newline = input.indexOf('\n', pos);
      const end = newline === -1 ? input.length : newline;
      if (!this.atLineStart) {
        log += input.slice(pos, newline === -1 ? end : end + 1);
        if (newline !== -1) this.atLineStart = true;
        pos = newline === -1 ? end : end + 1;
        continue;
      }
      const line = input.slice(pos, end);
      if (newline === -1 && !ended && (PREFIX.startsWith(line) || line.startsWith(PREFIX))) {
        this.held = line;
        break;
      }
      if (line.startsWith(PREFIX) && line.length > PREFIX.length) {
        stream += line.slice(PREFIX.length).replaceAll('\\n', '\n');
        this.seen = true;
      } else {
        log += input.slice(pos, newline === -1 ? end : end + 1);
        this.atLineStart = newline !== -1;
      }
      pos = newline === -1 ? end : end + 1;
    }
    return { log, stream };
  }
}

/**
 * A streamed job's result: the stream alone when the script returned nothing, else what it
 * returned with the stream under `wm_stream` (`{...value, wm_stream}` for an object, else
 * `{result, wm_stream}`; spec 4.5 `only_result`).
 */
export function resultWithStream(stream: string, returned: unknown, hasReturn: boolean): unknown {
  if (!hasReturn) return stream;
  if (typeof returned === 'object' && returned !== null && !Array.isArray(returned)) return { ...returned, wm_stream: stream };
  return { result: returned, wm_stream: stream };
}
