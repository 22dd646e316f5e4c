import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedLines, Remote, RemoteError } from '../../../functions/cli/remote.js';

/**
 * Attack: a hostile server answers the CLI without end (or with more than any answer of svc), to
 * grow the user's process until it dies or hangs. The CLI reads an answer up to a bound, an
 * error's text up to 64 KiB, and then closes the connection.
 */

const MiB = 1024 * 1024;
/** Bytes the server got to send before the CLI stopped reading, per request path. */
const sent = new Map<string, number>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url!.split('?')[0];
    res.writeHead(path.endsWith('/fail') ? 500 : 200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(MiB, 'x');
    let total = 0;
    // Endless but for a bound the test sets (1 GiB), so a CLI that reads it all still ends.
    const more = () => {
      while (total < 1024 * MiB) {
        total += chunk.length;
        sent.set(path, total);
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    res.on('close', () => sent.set(path, total));
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('the CLI reading a server that never stops answering', () => {
  it('reads an error answer only as far as its message, then stops', async () => {
    const remote = new Remote({ baseUrl: base, workspaceId: 'main', token: 't' });
    const error = await remote.get('/fail').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).status).toBe(500);
    expect((error as Error).message.length).toBeLessThan(700);
    // What the socket buffers took before the close, not the gigabyte.
    expect(sent.get('/api/w/main/fail')).toBeLessThan(64 * MiB);
  }, 60_000);

  it('refuses an answer past its bound, naming it, and stops reading', async () => {
    const remote = new Remote({ baseUrl: base, workspaceId: 'main', token: 't' }, 4 * MiB);
    await expect(remote.get('/list')).rejects.toThrow(`GET /list: the server's answer is larger than ${4 * MiB} bytes`);
    expect(sent.get('/api/w/main/list')).toBeLessThan(64 * MiB);
  }, 60_000);
});

describe('an event stream whose line never ends', () => {
  const through = async (pieces: string[]) => {
    const source = new ReadableStream<string>({
      start(c) {
        for (const piece of pieces) c.enqueue(piece);
        c.close();
      },
    });
    const reader = source.pipeThrough(boundedLines(10, 'the updates of job j')).getReader();
    let text = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
    return text;
  };

  it('passes lines of any number up to the bound', async () => {
    expect(await through(['data: 12', '3\n\ndata: 4', '56789\n', 'data:'])).toBe('data: 123\n\ndata: 456789\ndata:');
  });

  it('is refused once one line grows past the bound, across pieces', async () => {
    await expect(through(['data: 12', '34567'])).rejects.toThrow('the updates of job j: the server sent a line longer than 10 characters');
  });
});

describe('a server that stops sending', () => {
  let quiet: Server;
  let quietBase: string;
  beforeAll(async () => {
    quiet = createServer((req, res) => {
      // /silent never answers; /stalls sends its headers and a first piece, then nothing.
      if (req.url!.includes('/stalls')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[1,');
      }
    });
    await new Promise<void>((r) => quiet.listen(0, '127.0.0.1', r));
    quietBase = `http://127.0.0.1:${(quiet.address() as { port: number }).port}`;
  });
  afterAll(() => {
    quiet.closeAllConnections();
    return new Promise<void>((r) => quiet.close(() => r()));
  });

  it('gives up on an answer that never comes, naming the request', async () => {
    const remote = new Remote({ baseUrl: quietBase, workspaceId: 'main', token: 't' }, undefined, 300);
    await expect(remote.get('/silent')).rejects.toThrow('GET /silent: the server sent nothing for 0 s; gave up');
  });

  it('gives up on an answer that stops halfway, and on a stream that does', async () => {
    const remote = new Remote({ baseUrl: quietBase, workspaceId: 'main', token: 't' }, undefined, 300);
    await expect(remote.get('/stalls')).rejects.toThrow('GET /stalls: the server sent nothing');
    const res = await remote.open('GET', '/stalls/events');
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await expect(reader.read()).rejects.toThrow('GET /stalls/events: the server sent nothing');
  });
});
