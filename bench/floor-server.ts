/**
 * The benchmark's floor: the least a sync webhook can cost on this machine. A bare node:http
 * server hands each request's JSON to the same trivial function living in one warm child process
 * (Node or Python) and writes back its result: no auth, no storage, no queue.
 */
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { AddressInfo } from 'node:net';

const language = process.argv[2] === 'python3' ? 'python3' : 'node';

const NODE_CHILD = `
  function main(name = 'world') { return 'hello ' + name; }
  process.on('message', (m) => process.send({ id: m.id, result: main(m.args.name) }));
`;
const PYTHON_CHILD = `
import sys, json
def main(name="world"):
    return "hello " + name
for line in sys.stdin:
    m = json.loads(line)
    sys.stdout.write(json.dumps({"id": m["id"], "result": main(**m["args"])}) + "\\n")
    sys.stdout.flush()
`;

const waiting = new Map<number, (result: unknown) => void>();
let send: (msg: { id: number; args: Record<string, unknown> }) => void;
if (language === 'node') {
  const child = spawn(process.execPath, ['-e', NODE_CHILD], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.on('message', (m: { id: number; result: unknown }) => waiting.get(m.id)?.(m.result));
  send = (msg) => child.send(msg);
} else {
  const child = spawn('python3', ['-u', '-c', PYTHON_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const m = JSON.parse(line);
    waiting.get(m.id)?.(m.result);
  });
  send = (msg) => child.stdin!.write(JSON.stringify(msg) + '\n');
}

let nextId = 0;
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const id = nextId++;
    waiting.set(id, (result) => {
      waiting.delete(id);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    });
    send({ id, args: body ? JSON.parse(body) : {} });
  });
});
server.listen(0, '127.0.0.1', () => console.log(`floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
