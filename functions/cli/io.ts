/** How the CLI meets its user: output streams, a question on the terminal, the environment. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Writes text to stderr as it is, without a newline (what a job streams, as it comes). */
  stream(text: string): void;
  /** Reads one answer; null when there is no one to ask (end of input). `secret`: not echoed on a terminal. */
  ask(question: string, opts?: { secret?: boolean }): Promise<string | null>;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether stderr/stdout is a terminal (colour is for terminals only). */
  isTty?: boolean;
}

/**
 * Colour on a terminal only, never when NO_COLOR is set (https://no-color.org); FORCE_COLOR asks
 * for it where there is no terminal (a CI log that renders ANSI).
 */
export function colourEnabled(io: Pick<Io, 'env' | 'isTty'>): boolean {
  if (io.env.NO_COLOR) return false;
  if (io.env.FORCE_COLOR && io.env.FORCE_COLOR !== '0') return true;
  return io.isTty === true;
}

export interface Paint {
  red(t: string): string;
  green(t: string): string;
  yellow(t: string): string;
  bold(t: string): string;
  dim(t: string): string;
}

const sgr = (open: number, close: number) => (t: string) => `\x1b[${open}m${t}\x1b[${close}m`;
const plain = (t: string) => t;

export function paint(io: Pick<Io, 'env' | 'isTty'>): Paint {
  if (!colourEnabled(io)) return { red: plain, green: plain, yellow: plain, bold: plain, dim: plain };
  return { red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), bold: sgr(1, 22), dim: sgr(2, 22) };
}

/*
 * What a server sends (names, summaries, error messages, a job's logs and stream) reaches the
 * user's terminal, and a terminal obeys escape sequences: a hostile server could set the window
 * title, clear or rewrite what was printed, move the cursor, write the clipboard (OSC 52), make a
 * link say one thing and open another (OSC 8), or answer into the shell's input. Colour (SGR,
 * `ESC [ ... m`) is kept: job logs are coloured, and so is the CLI's own output.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what this matches
const SGR = /^\x1b\[[0-9;:]*m$/;
// Every escape sequence, whole or cut off at the end of the text (CSI, OSC to BEL or ST, DCS/SOS/PM/APC
// to ST, any other ESC and what it introduces), then every other C0 and C1 control but tab, newline
// and a carriage return that ends a line. A lone ESC cut off at the end of one piece of a stream
// goes with it, so the next piece cannot complete a sequence.
// eslint-disable-next-line no-control-regex -- the control characters are what this matches
const UNSAFE = /\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b\x9c]*(?:\x07|\x1b\\)?|[PX^_][^\x1b\x9c]*(?:\x1b\\)?|[ -/]*[0-~]?)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/g;

/** `text` with nothing a terminal would take as a command but colour. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (found) => (SGR.test(found) ? found : ''));
}

/**
 * The CLI's streams for a person: stderr (messages, a followed job's logs) always goes through
 * `terminalSafe`, stdout when it is a terminal (piped or redirected, it is data and stays as it is:
 * JSON escapes control characters itself).
 */
export function terminalGuard(io: Io, stdoutIsTerminal: boolean): Io {
  return {
    ...io,
    out: stdoutIsTerminal ? (t) => io.out(terminalSafe(t)) : (t) => io.out(t),
    err: (t) => io.err(terminalSafe(t)),
    stream: (t) => io.stream(terminalSafe(t)),
    ask: (question, opts) => io.ask(terminalSafe(question), opts),
  };
}
