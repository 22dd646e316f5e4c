import { encodeEventLine, parseRunRequest, sandboxFailure, type ParsedRequest } from './sandbox-wire.js';
import { INLINE_PAYLOAD_BYTES, type SandboxEvent } from './sandbox-protocol.js';

/**
 * The sandbox's side of payloads past Lambda's 6 MB (sandbox-payload-offload.ts has the worker's):
 * a stub's request is fetched from its `requestUrl`, and an answer past the limit is PUT to the
 * request's `resultUrl`. The sandbox has no credentials; the presigned URLs are all it has.
 */

/** The request itself: the payload, or for a stub, the request it points to, which must name the same job and tenant. */
export async function resolveRequest(payload: unknown, signal: AbortSignal): Promise<ParsedRequest> {
  const parsed = parseRunRequest(payload);
  if (!parsed.ok || !parsed.request.requestUrl) return parsed;
  const stub = parsed.request;
  let fetched: unknown;
  try {
    const response = await fetch(stub.requestUrl!, { signal });
    if (!response.ok) return { ok: false, message: `the sandbox request could not be fetched from the bucket (HTTP ${response.status})` };
    fetched = await response.json();
  } catch (error) {
    return { ok: false, message: `the sandbox request could not be fetched from the bucket: ${error instanceof Error ? error.message : String(error)}` };
  }
  const full = parseRunRequest(fetched);
  if (!full.ok) return full;
  const r = full.request;
  const same = r.jobId === stub.jobId && r.workspaceId === stub.workspaceId && r.language === stub.language && r.env.OV_USERNAME === stub.env.OV_USERNAME;
  if (!same || r.requestUrl) return { ok: false, message: 'the sandbox request fetched from the bucket is not the one this invocation names' };
  return full;
}

/** The outcome as the event to answer with: inline, or past the limit stored at `resultUrl` and answered `stored`. */
export async function outcomeEvent(outcome: Extract<SandboxEvent, { type: 'outcome' }>, resultUrl: string | undefined, signal: AbortSignal): Promise<SandboxEvent> {
  if (!resultUrl) return outcome;
  const line = encodeEventLine(outcome);
  const bytes = Buffer.byteLength(line);
  if (bytes <= INLINE_PAYLOAD_BYTES) return outcome;
  try {
    const response = await fetch(resultUrl, { method: 'PUT', body: `{"events":[${line.trimEnd()}]}`, headers: { 'content-type': 'application/json' }, signal });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return { type: 'stored' };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { type: 'outcome', outcome: sandboxFailure(`the job's answer is ${Math.ceil(bytes / (1024 * 1024))} MB, past Lambda's 6 MB, and could not be stored in the bucket: ${why}`) };
  }
}
