import { PassThrough, type Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

/**
 * What the Lambda Node runtime provides to a response-streaming handler, reproduced for running
 * the real handlers on one machine (after aws-lambda-nodejs-runtime-interface-client):
 *
 * - `awslambda.streamifyResponse(fn)` marks `fn`; the runtime then calls it as
 *   `fn(event, responseStream, context)` instead of `fn(event, context)`.
 * - `responseStream` is a writable whose content type may be set until the first write.
 * - `awslambda.HttpResponseStream.from(stream, metadata)` sets the content type
 *   `application/vnd.awslambda.http-integration-response` and, just before the first write,
 *   writes the metadata as JSON followed by 8 NUL bytes: the prelude API Gateway reads.
 *
 * The invoker gets the raw bytes as they are written, exactly what the runtime sends to Lambda's
 * InvokeWithResponseStream and API Gateway consumes.
 */

const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
const STREAM_RESPONSE = 'response';
export const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const DELIMITER_LEN = 8;

/** The runtime's response stream: the content type goes out with the response, before any byte. */
export class RuntimeResponseStream extends PassThrough {
  contentType = 'application/octet-stream';
  _onBeforeFirstWrite?: (write: (chunk: string | Uint8Array) => void) => void;
  private writeCalled = false;

  setContentType(contentType: string): void {
    if (this.writeCalled) throw new Error('Cannot set content-type, too late.');
    this.contentType = contentType;
  }

  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    // The runtime sends anything that is not bytes or a string as JSON.
    const bytes = typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : JSON.stringify(chunk);
    if (!this.writeCalled) {
      this.writeCalled = true;
      this._onBeforeFirstWrite?.((first) => super.write(first));
    }
    return super.write(bytes, encoding as BufferEncoding, callback as (error?: Error | null) => void);
  }
}

const runtimeGlobals = {
  streamifyResponse<T extends (...args: never[]) => unknown>(handler: T): T {
    (handler as unknown as Record<symbol, string>)[HANDLER_STREAMING] = STREAM_RESPONSE;
    return handler;
  },
  HttpResponseStream: {
    from(stream: Writable, metadata: Record<string, unknown>): Writable {
      const responseStream = stream as RuntimeResponseStream;
      responseStream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
      // JSON.stringify escapes control characters, so the prelude itself never holds a NUL byte.
      const prelude = JSON.stringify(metadata);
      responseStream._onBeforeFirstWrite = (write) => {
        write(prelude);
        write(new Uint8Array(DELIMITER_LEN));
      };
      return responseStream;
    },
  },
};

/** Defines the `awslambda` global before a handler module that uses it is imported. */
export function installLambdaStreamingGlobals(): void {
  Object.assign(globalThis, { awslambda: runtimeGlobals });
}

export type StreamingHandler = (event: unknown, responseStream: Writable, context: Context) => unknown;

/**
 * Invokes a streaming handler as the runtime does. The stream ends when the handler ends it; a
 * handler that fails destroys it with its error, which the reader sees as a broken stream.
 */
export function invokeStreaming(handler: unknown, event: unknown, context: Context): RuntimeResponseStream {
  if ((handler as Record<symbol, unknown>)[HANDLER_STREAMING] !== STREAM_RESPONSE) {
    throw new Error('the handler is not wrapped in awslambda.streamifyResponse');
  }
  const stream = new RuntimeResponseStream();
  Promise.resolve()
    .then(() => (handler as StreamingHandler)(event, stream, context))
    .then(
      // Hono ends the stream itself; one left open by its handler is ended here rather than hung.
      () => void (stream.writableEnded || stream.end()),
      (error: unknown) => stream.destroy(error instanceof Error ? error : new Error(String(error))),
    );
  return stream;
}
