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
