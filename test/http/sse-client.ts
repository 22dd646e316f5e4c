import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Reads a whole SSE response into its events' JSON data, as an EventSource client would. */
export async function readSse(res: Response, onEvent?: (data: any) => void): Promise<any[]> {
  const events: any[] = [];
  const parser = createParser({
    onEvent(e: EventSourceMessage) {
      const data = JSON.parse(e.data);
      events.push(data);
      onEvent?.(data);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}
