// Runs once per job network namespace, as root, inside the new namespace (runtime/job-slots.ts):
// opens the namespace's two loopback listeners (the API forward and the egress proxy) and hands
// them to the service over the IPC channel, then exits. From then on the service owns them: the
// namespace needs no process of its own, and nothing the job runs can close or take them over.
import net from 'node:net';

const ports = process.argv.slice(2).map(Number);
const servers = await Promise.all(
  ports.map(
    (port) =>
      new Promise((listening, failed) => {
        const server = net.createServer();
        server.once('error', failed);
        server.listen({ host: '127.0.0.1', port }, () => listening(server));
      }),
  ),
);
let left = servers.length;
// The service gone (killed before it acknowledged a listener): Node 20 closes the channel without a
// 'disconnect' event while a listener waits to be sent, and that listener, still open, would keep
// this process alive for good. Nothing can be handed over any more: exit.
setInterval(() => {
  if (!process.connected) process.exit(left === 0 ? 0 : 1);
}, 200).unref();
for (const [index, server] of servers.entries()) {
  process.send({ port: ports[index] }, server, (error) => {
    if (error) process.exit(1);
    // Our copy goes; the service's stays listening.
    server.close();
    if (--left === 0) process.disconnect();
  });
}
