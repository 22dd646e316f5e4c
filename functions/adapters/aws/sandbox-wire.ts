import { z } from 'zod';
import { LANGUAGES, type RunOutcome, type RunRequest } from '../../ports.js';
import type { SandboxEvent } from './sandbox-protocol.js';
import { withinDepthLimit } from '../../core/common/json-limits.js';

/**
 * Both ends of the sandbox wire check what they receive: the sandbox must not trust its payload
 * (a bad one gets an `outcome` error, never a crash), and the worker must not trust what comes
 * back from a process that ran user code.
 */

/** A `same_worker` flow's shared folder: relative path -> base64 (ports.ts SharedFiles). */
const sharedFilesSchema = z.record(z.string(), z.string()).optional();

const runRequestSchema = z.object({
  jobId: z.string(),
  workspaceId: z.string(),
  language: z.enum(LANGUAGES),
  scriptHash: z.string(),
  content: z.string(),
  args: z.record(z.string(), z.unknown()),
  schema: z.object({
    $schema: z.string().optional(),
    type: z.literal('object'),
    properties: z.record(z.string(), z.record(z.string(), z.unknown())),
    required: z.array(z.string()),
    order: z.array(z.string()).optional(),
  }),
  env: z.record(z.string(), z.string()),
  timeoutMs: z.number().positive(),
  maxOutputBytes: z.number().positive(),
  shared: sharedFilesSchema,
  limits: z
    .object({ memoryBytes: z.number().int().positive(), processes: z.number().int().positive(), cpuSeconds: z.number().int().positive(), fileBytes: z.number().int().positive(), openFiles: z.number().int().positive(), diskBytes: z.number().int().positive() })
    .partial()
    .optional(),
  goBinaryUrl: z.string().url().optional(),
  lock: z.string().optional(),
  dependencies: z.object({ key: z.string().regex(/^[0-9a-f]{32}$/), url: z.string().url() }).optional(),
  modules: z.record(z.string(), z.string()).optional(),
  requestUrl: z.string().url().optional(),
  resultUrl: z.string().url().optional(),
}) satisfies z.ZodType<RunRequest>;

const jobErrorSchema = z.object({ name: z.string(), message: z.string(), stack: z.string().optional() });

const outcomeSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), result: z.unknown(), streamed: z.boolean(), shared: sharedFilesSchema }),
  z.object({ ok: z.literal(false), error: jobErrorSchema, shared: sharedFilesSchema }),
]) satisfies z.ZodType<RunOutcome>;

const sandboxEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('log'), text: z.string() }),
  z.object({ type: z.literal('stream'), chunk: z.string() }),
  z.object({ type: z.literal('outcome'), outcome: outcomeSchema }),
  z.object({ type: z.literal('stored') }),
]) satisfies z.ZodType<SandboxEvent>;

const bufferedResponseSchema = z.object({ events: z.array(sandboxEventSchema) });

export type ParsedRequest = { ok: true; request: RunRequest } | { ok: false; message: string };

export function parseRunRequest(payload: unknown): ParsedRequest {
  const parsed = runRequestSchema.safeParse(payload);
  if (parsed.success) return { ok: true, request: parsed.data };
  return { ok: false, message: `the sandbox request is invalid: ${describeIssues(parsed.error)}` };
}

/** The failure of the sandbox machinery itself (as opposed to the job's own error). */
export function sandboxFailure(message: string): RunOutcome {
  return { ok: false, error: { name: 'SandboxError', message } };
}

export function encodeEventLine(event: SandboxEvent): string {
  // A result nested too deep would overflow JSON.stringify here: it goes back as the job's failure.
  const sent = event.type === 'outcome' ? { ...event, outcome: withinDepthLimit(event.outcome) } : event;
  // JSON.stringify escapes newlines inside strings, so one event is always exactly one line.
  return `${JSON.stringify(sent)}\n`;
}

/** One NDJSON line from the Node sandbox. Throws on anything that is not a SandboxEvent. */
export function parseEventLine(line: string): SandboxEvent {
  return checked(sandboxEventSchema, parseJson(line), 'event');
}

/** The Python sandbox's whole answer, `{"events": [...]}`. Throws when it is anything else. */
export function parseBufferedEvents(text: string): SandboxEvent[] {
  return checked(bufferedResponseSchema, parseJson(text), 'response').events;
}

/**
 * Splits a byte stream into NDJSON events. Chunk boundaries fall anywhere (inside a line, inside a
 * multi-byte character), so undecoded bytes and the unfinished line carry over to the next chunk.
 */
export async function* decodeEventStream(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SandboxEvent> {
  const decoder = new TextDecoder();
  let partial = '';
  for await (const chunk of chunks) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    // Only the new text is searched, so a long line arriving in many chunks stays linear.
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const line = partial + text.slice(start, end);
      partial = '';
      start = end + 1;
      if (line.trim()) yield parseEventLine(line);
    }
    partial += text.slice(start);
  }
  partial += decoder.decode();
  if (partial.trim()) yield parseEventLine(partial);
}

/**
 * The message of a Lambda function error: Lambda reports it as a JSON document
 * (`{"errorType", "errorMessage", ...}`) or, for some failures, as plain text.
 */
export function functionErrorMessage(kind: string, details: string): string {
  let described = details.trim();
  try {
    const error = JSON.parse(details) as { errorType?: unknown; errorMessage?: unknown };
    if (typeof error.errorMessage === 'string') {
      described = typeof error.errorType === 'string' ? `${error.errorType}: ${error.errorMessage}` : error.errorMessage;
    }
  } catch {
    // not JSON: the text is the message
  }
  return `the sandbox function failed (${kind})${described ? `: ${described}` : ''}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`the sandbox sent something that is not JSON: ${text.slice(0, 200)}`);
  }
}

function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`the sandbox sent an invalid ${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(payload)'}: ${issue.message}`).join('; ');
}
