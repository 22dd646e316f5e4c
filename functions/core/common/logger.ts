/**
 * The one logger of the service (not of user code: a job's own output is its log). Every line
 * carries the context known where it is written - job id, workspace, request id - and never a
 * secret: fields named like credentials are masked, and so are bearer tokens inside text. The AWS
 * shell writes JSON lines (CloudWatch Logs Insights reads their fields); the local shell writes
 * readable text. Both shells log through this same interface.
 */

export type LogLevel = 'info' | 'warn' | 'error';
export type LogFormat = 'json' | 'text';

/** Context keys every line should carry where known; anything else is a plain field. */
export interface LogFields {
  job_id?: string;
  workspace_id?: string;
  request_id?: string;
  [field: string]: unknown;
}

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose every line carries `context` too. */
  child(context: LogFields): Logger;
}

export interface LogRecord {
  time: string;
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

export const REDACTED = '[redacted]';
/** Field names that hold credentials: tokens, passwords, secret values, auth headers, cookies. */
const SECRET_NAME = /token|passw|secret|authorization|cookie|api[-_]?key|credential|private[-_]?key|^value$/i;
/** Credentials that travel inside text (an error message quoting a header, a URL with ?token=). */
const SECRET_TEXT: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [/([?&](?:token|access_token|secret|password)=)[^&\s"']+/gi, `$1${REDACTED}`],
];

/** A copy of `value` with every secret-named field and in-text credential masked. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return SECRET_TEXT.reduce((text, [re, by]) => text.replace(re, by), value);
  if (value instanceof Error) return redact(value.message, depth);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  // Flags and counts (`is_secret: true`, `tokens: 3`) say nothing secret; text and objects might.
  const masked = (k: string, v: unknown) => SECRET_NAME.test(k) && (typeof v === 'string' || (typeof v === 'object' && v !== null));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(k, v) ? REDACTED : redact(v, depth + 1)]));
}

/** One JSON object per line: `{"time","level","msg",...fields}`. */
export function formatJson(record: LogRecord): string {
  return JSON.stringify({ time: record.time, level: record.level, msg: record.msg, ...record.fields });
}

/** `2026-01-01T00:00:00.000Z ERROR job execution failed job_id=… error="…"`: for people. */
export function formatText(record: LogRecord): string {
  const fields = Object.entries(record.fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)}`);
  return [record.time, record.level.toUpperCase(), record.msg, ...fields].join(' ');
}

export interface LoggerOptions {
  format: LogFormat;
  /** Where lines go; by default stdout (info) and stderr (warn, error). */
  write?: (level: LogLevel, line: string) => void;
  now?: () => Date;
}

export function createLogger(options: LoggerOptions, context: LogFields = {}): Logger {
  const write = options.write ?? defaultWrite;
  const now = options.now ?? (() => new Date());
  const format = options.format === 'json' ? formatJson : formatText;
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    const all = redact({ ...context, ...fields }) as Record<string, unknown>;
    write(level, format({ time: now().toISOString(), level, msg: redact(msg) as string, fields: all }));
  };
  return {
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => createLogger(options, { ...context, ...more }),
  };
}

function defaultWrite(level: LogLevel, line: string): void {
  if (level === 'info') console.log(line);
  else console.error(line);
}

/**
 * The process's logger. Readable text unless a shell says otherwise: the AWS shell switches it to
 * JSON lines when its handlers load (shells/aws.ts).
 */
let current: Logger = createLogger({ format: 'text' });

export const log: Logger = {
  info: (msg, fields) => current.info(msg, fields),
  warn: (msg, fields) => current.warn(msg, fields),
  error: (msg, fields) => current.error(msg, fields),
  child: (context) => {
    const parent = current;
    return parent.child(context);
  },
};

export function useLogFormat(format: LogFormat): void {
  current = createLogger({ format });
}

/** Lines go to `logger` from now on (the AWS shell's Powertools logger, adapters/aws/powertools.ts). */
export function useLogger(logger: Logger): void {
  current = logger;
}

/** An error as a log field: its message only (stacks and causes may quote request data). */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
