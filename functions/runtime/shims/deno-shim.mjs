/* global Deno */
// Runs inside the sandboxed, warm Deno process. It imports one user script on its first job and
// serves jobs that arrive as JSON lines on fd 3, one at a time, as node-shim.mjs does for Node: the
// job's environment, cwd and arguments come in, stream chunks and the result go back as JSON lines
// on fd 4. stdout/stderr stay the user's: they are the job's log.
import net from 'node:net';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [scriptPath] = Deno.args;
const encoder = new TextEncoder();

const requests = new net.Socket({ fd: 3, readable: true, writable: false });
const replies = new net.Socket({ fd: 4, readable: false, writable: true });
// The parent may be gone or may have killed us mid-send; there is no one left to tell.
replies.on('error', () => undefined);
const reply = (message) => new Promise((resolve) => replies.write(`${JSON.stringify(message)}\n`, () => resolve()));

// Imported on the first job, not at start, so the module's top level sees a job's env and cwd.
let loading;
let queue = Promise.resolve();

createInterface({ input: requests, crlfDelay: Infinity }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message?.type === 'job') queue = queue.then(() => serve(message));
});
// Without a parent nobody will send jobs or kill us.
requests.on('end', () => Deno.exit(0));
requests.on('error', () => Deno.exit(0));

async function serve(job) {
  let outcome;
  try {
    setEnvironment(job.env);
    Deno.chdir(job.cwd);
    outcome = await callMain(job);
  } catch (error) {
    outcome = { ok: false, error: toJobError(error) };
  }
  // windmill-client reads WM_TOKEN once, when it is imported, and that token dies with its job.
  if (importsTokenHoldingClient()) outcome.discard = true;
  const done = { type: 'done', id: job.id, ...outcome };
  if (outcome.streamed || !job.trailer) {
    // The chunks went on fd 4 (or the parent reads the result there): the result follows them
    // there, after the marker closed the log.
    await writeAll(encoder.encode(job.marker));
    await reply(done);
    return;
  }
  // The trailer closes the log and carries the result, in one write behind everything the job printed.
  await writeAll(encoder.encode(`${job.trailer}${JSON.stringify(done)}\n`));
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
      if (step.done) return { ok: true, result: step.value === undefined ? '' : (JSON.stringify(step.value) ?? ''), streamed: true };
      await reply({ type: 'stream', id: job.id, chunk: typeof step.value === 'string' ? step.value : (JSON.stringify(step.value) ?? '') });
    }
  }
  try {
    return { ok: true, result: JSON.stringify(value ?? null) ?? 'null', streamed: false };
  } catch (error) {
    return { ok: false, error: { name: 'SerializationError', message: `the result is not JSON-serialisable: ${error.message}` } };
  }
}

async function writeAll(bytes) {
  for (let written = 0; written < bytes.length; ) written += await Deno.stdout.write(bytes.subarray(written));
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
      holdsToken = /['"](npm:)?windmill-client(@[^'"]*)?['"]|WM_TOKEN/.test(Deno.readTextFileSync(scriptPath));
    } catch {
      holdsToken = true;
    }
  }
  return holdsToken;
}

/**
 * The process's environment becomes exactly the job's (the previous job's variables go). Only what
 * differs from it now (the last job's own changes included) is unset or set.
 */
function setEnvironment(env) {
  const now = Deno.env.toObject();
  for (const key of Object.keys(now)) if (!Object.hasOwn(env, key)) Deno.env.delete(key);
  for (const [key, value] of Object.entries(env)) {
    if (now[key] === String(value)) continue;
    try {
      Deno.env.set(key, String(value));
    } catch {
      // a name the platform cannot hold (empty, with "=" or NUL) is left out
    }
  }
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

function toJobError(e) {
  if (e !== null && typeof e === 'object' && 'message' in e) {
    const extra = errorExtra(e);
    return { name: typeof e.name === 'string' ? e.name : 'Error', message: String(e.message), ...(typeof e.stack === 'string' ? { stack: e.stack } : {}), ...(extra ? { extra } : {}) };
  }
  let message;
  try {
    message = typeof e === 'string' ? e : (JSON.stringify(e) ?? String(e));
  } catch {
    message = String(e);
  }
  return { name: 'Error', message };
}
