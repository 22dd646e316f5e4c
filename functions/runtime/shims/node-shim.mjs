// Runs inside the sandboxed Node child. It loads one transpiled user script and serves jobs that
// arrive as JSON lines on fd 3, one at a time, so a warm process can run many jobs of one version;
// replies leave as JSON lines on fd 4 (not Node's IPC channel: see shim-channel.ts).
// stdout/stderr stay the user's: they are the job's log.
import { fstatSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';
import tls from 'node:tls';
import { pathToFileURL } from 'node:url';

// Inside the job's network namespace the only way out is the service's egress proxy
// (HTTPS_PROXY). Node's fetch ignores the proxy variables, so its dispatcher is given a connector
// that tunnels through the proxy with CONNECT (TLS on top where the URL is https), and goes direct
// to the NO_PROXY hosts (the namespace's own loopback, where BASE_INTERNAL_URL leads).
const fetchRouted = routeFetchThroughProxy(process.env.HTTPS_PROXY, process.env.NO_PROXY).catch(() => undefined);

const scriptPath = process.argv[2];
const requests = new net.Socket({ fd: 3, readable: true, writable: false });
const replies = new net.Socket({ fd: 4, readable: false, writable: true });
// The parent may be gone or may have killed us mid-send; there is no one left to tell.
replies.on('error', () => undefined);
const reply = (message) => new Promise((resolve) => replies.write(`${JSON.stringify(message)}\n`, () => resolve()));

// The output the parent reads the log and the trailer from, as it was at start. A job may close
// its fd 1 or put something else there (closeSync(1), a file opened after it): a trailer written
// then never reached the parent, which waited for the job's whole timeout.
const outputAtStart = outputIdentity();

function outputIdentity() {
  try {
    const { dev, ino } = fstatSync(1);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}

// Imported on the first job, not at start, so the module's top level sees a job's env and cwd.
let loading;
let queue = Promise.resolve();

createInterface({ input: requests, crlfDelay: Infinity }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message?.type === 'job') queue = queue.then(() => serve(message));
});
// Without a parent nobody will send jobs or kill us.
requests.on('end', () => process.exit(0));
requests.on('error', () => process.exit(0));

async function serve(job) {
  let outcome;
  try {
    await fetchRouted;
    setEnvironment(job.env);
    if (currentDirectory() !== job.cwd) process.chdir(job.cwd);
    outcome = await callMain(job);
  } catch (error) {
    outcome = { ok: false, error: toJobError(error) };
  }
  // windmill-client reads WM_TOKEN once, when it is imported, and that token dies with its job:
  // a script that imports it gets a fresh process for each job (docs/windmill.md).
  if (importsTokenHoldingClient()) outcome.discard = true;
  const done = { type: 'done', id: job.id, ...outcome };
  if (outputIdentity() !== outputAtStart) {
    // The result goes on fd 4; without the marker the parent discards this process after the job.
    await reply(done);
    return;
  }
  if (outcome.streamed || !job.trailer) {
    // The chunks went on fd 4 (or the parent reads the result there): the result follows them
    // there, after the marker closed the log.
    await new Promise((resolve) => process.stdout.write(job.marker, resolve));
    await reply(done);
    return;
  }
  // The trailer closes the log and carries the result, in one write behind everything the job printed.
  await new Promise((resolve) => process.stdout.write(`${job.trailer}${JSON.stringify(done)}\n`, resolve));
}

/**
 * Node's record of the working directory (process.chdir keeps it, so a job that moved is moved
 * back), or undefined when that directory is gone: the last job's, removed because the job left
 * files in it.
 */
function currentDirectory() {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

async function callMain(job) {
  let userModule;
  try {
    userModule = await (loading ??= import(pathToFileURL(scriptPath).href));
  } catch (error) {
    // A module that failed to evaluate stays failed in this process; a fresh one may do better.
    return { ok: false, error: toJobError(error), discard: true };
  }
  if (typeof userModule.main !== 'function') {
    return { ok: false, error: { name: 'TypeError', message: 'the script does not export a function named main' } };
  }
  const args = job.params.map((name) => (Object.hasOwn(job.values, name) ? job.values[name] : undefined));
  // A `Date` parameter gets a Date, as Windmill's wrapper makes it (an empty value: undefined).
  for (const name of job.dates ?? []) {
    const i = job.params.indexOf(name);
    if (i !== -1) args[i] = args[i] ? new Date(args[i]) : undefined;
  }
  const value = await userModule.main(...args);
  if (isStream(value)) {
    // Stepped by hand rather than with for-await, which drops what the generator returns.
    const iterator = typeof value[Symbol.asyncIterator] === 'function' ? value[Symbol.asyncIterator]() : value;
    for (;;) {
      const step = await iterator.next();
      if (step.done) {
        // The return value, if any, becomes the result beside the stream (the parent adds `wm_stream`).
        return { ok: true, result: step.value === undefined ? '' : JSON.stringify(step.value) ?? '', streamed: true };
      }
      const chunk = step.value;
      await reply({ type: 'stream', id: job.id, chunk: typeof chunk === 'string' ? chunk : (JSON.stringify(chunk) ?? '') });
    }
  }
  let json;
  try {
    json = JSON.stringify(value ?? null) ?? 'null';
  } catch (error) {
    return { ok: false, error: { name: 'SerializationError', message: `the result is not JSON-serialisable: ${error.message}` } };
  }
  return { ok: true, result: json, streamed: false };
}

// Arrays, maps and strings are iterable too, but they are results, not streams.
function isStream(value) {
  if (value === null || typeof value !== 'object') return false;
  return typeof value[Symbol.asyncIterator] === 'function' || Object.prototype.toString.call(value) === '[object Generator]';
}

let holdsToken;
function importsTokenHoldingClient() {
  if (holdsToken === undefined) {
    try {
      // The package by name, or its code bundled into the script (which reads WM_TOKEN by name).
      holdsToken = /['"]windmill-client['"]|WM_TOKEN/.test(readFileSync(scriptPath, 'utf8'));
    } catch {
      holdsToken = true;
    }
  }
  return holdsToken;
}

// Each read or write of process.env is a call into the C environment (getenv, setenv): comparing a
// job's thirty-odd variables with it cost more than a trivial job itself. So process.env is
// watched instead: the variables a job set or deleted are noted, and the next job's environment is
// made from the previous one by setting what it changes and whatever the job touched. No change a
// job makes to process.env reaches the next job.
const environ = process.env;
const touchedByJob = new Set();
let applied = { ...environ };
const watched = new Proxy(environ, {
  set(target, key, value) {
    touchedByJob.add(key);
    target[key] = value;
    return true;
  },
  deleteProperty(target, key) {
    touchedByJob.add(key);
    return delete target[key];
  },
  defineProperty(target, key, descriptor) {
    touchedByJob.add(key);
    return Reflect.defineProperty(target, key, descriptor);
  },
});
process.env = watched;

function setEnvironment(env) {
  if (process.env !== watched) {
    // A job replaced process.env itself: what the C environment holds is no longer known.
    process.env = watched;
    for (const key of Object.keys(environ)) touchedByJob.add(key);
  }
  for (const key of touchedByJob) {
    if (Object.hasOwn(env, key)) environ[key] = env[key];
    else delete environ[key];
  }
  touchedByJob.clear();
  for (const key in applied) if (!Object.hasOwn(env, key)) delete environ[key];
  for (const key in env) if (applied[key] !== env[key]) environ[key] = env[key];
  applied = env;
}

// An error's own properties besides the standard ones (an HTTP client's `status`, `body`, ...),
// as Windmill's wrapper puts them under `extra`: each that JSON can hold, 64 KiB of it at most.
const STANDARD_ERROR_KEYS = new Set(['line', 'name', 'stack', 'column', 'message', 'sourceURL', 'originalLine', 'originalColumn']);
function errorExtra(error) {
  const extra = {};
  let size = 0;
  for (const key of Object.getOwnPropertyNames(error)) {
    if (STANDARD_ERROR_KEYS.has(key)) continue;
    let json;
    try {
      json = JSON.stringify(error[key]);
    } catch {
      continue;
    }
    if (json === undefined) continue;
    size += key.length + json.length;
    if (size > 65536) return undefined;
    extra[key] = JSON.parse(json);
  }
  return Object.keys(extra).length > 0 ? extra : undefined;
}

function toJobError(error) {
  if (error !== null && typeof error === 'object' && 'message' in error) {
    const extra = errorExtra(error);
    return {
      name: typeof error.name === 'string' ? error.name : 'Error',
      message: String(error.message),
      ...(typeof error.stack === 'string' ? { stack: error.stack } : {}),
      ...(extra ? { extra } : {}),
    };
  }
  let message;
  try {
    message = typeof error === 'string' ? error : JSON.stringify(error) ?? String(error);
  } catch {
    message = String(error);
  }
  return { name: 'Error', message };
}

async function routeFetchThroughProxy(proxy, noProxy) {
  if (!proxy) return;
  const key = Symbol.for('undici.globalDispatcher.1');
  // The first fetch loads undici, which installs its default Agent under this key.
  await fetch('data:,').catch(() => undefined);
  const Agent = globalThis[key]?.constructor;
  if (typeof Agent !== 'function') return;
  const via = new URL(proxy);
  const direct = new Set((noProxy ?? '').split(',').map((host) => host.trim()).filter(Boolean));
  globalThis[key] = new Agent({
    connect(options, callback) {
      const host = options.hostname.replace(/^\[|\]$/g, '');
      const secure = options.protocol === 'https:';
      const port = Number(options.port) || (secure ? 443 : 80);
      let settled = false;
      const done = (error, socket) => {
        if (settled) return;
        settled = true;
        callback(error, socket);
      };
      const ready = (raw) => {
        if (!secure) return done(null, raw);
        const servername = options.servername || (net.isIP(host) ? undefined : host);
        const secured = tls.connect({ socket: raw, servername, ALPNProtocols: ['http/1.1'] });
        secured.once('secureConnect', () => done(null, secured));
        secured.once('error', (error) => done(error));
      };
      if (direct.has(host)) {
        const raw = net.connect({ host, port });
        raw.once('connect', () => ready(raw));
        raw.once('error', (error) => done(error));
        return;
      }
      const authority = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
      const raw = net.connect({ host: via.hostname, port: Number(via.port) || 80 });
      raw.once('error', (error) => done(error));
      raw.once('connect', () => raw.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`));
      let answer = Buffer.alloc(0);
      const onData = (chunk) => {
        answer = Buffer.concat([answer, chunk]);
        const end = answer.indexOf('\r\n\r\n');
        if (end < 0) return;
        raw.off('data', onData);
        const head = answer.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.[01] 200/.test(head)) {
          raw.once('end', () => done(new Error(answer.toString('utf8').split('\r\n\r\n').slice(1).join('').trim() || head)));
          raw.resume();
          raw.on('data', (more) => (answer = Buffer.concat([answer, more])));
          return;
        }
        const rest = answer.subarray(end + 4);
        if (rest.length > 0) raw.unshift(rest);
        ready(raw);
      };
      raw.on('data', onData);
    },
  });
}
