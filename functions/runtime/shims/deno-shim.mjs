/* global Deno */
// Runs inside the sandboxed Deno process for one job. The job (marker, parameter names, values)
// arrives as JSON on stdin, so resolved secrets never appear in argv. stdout/stderr stay the
// user's log; results and stream chunks go on stdout as lines starting with the job's marker,
// which only this module knows (the user's code cannot read it once stdin is consumed).
const [scriptPath] = Deno.args;
const job = JSON.parse(await new Response(Deno.stdin.readable).text());
const encoder = new TextEncoder();

async function frame(message) {
  const bytes = encoder.encode(`\n${job.marker}${JSON.stringify(message)}\n`);
  for (let written = 0; written < bytes.length; ) written += await Deno.stdout.write(bytes.subarray(written));
}

function toJobError(e) {
  if (e !== null && typeof e === 'object' && 'message' in e) {
    return { name: typeof e.name === 'string' ? e.name : 'Error', message: String(e.message), ...(typeof e.stack === 'string' ? { stack: e.stack } : {}) };
  }
  return { name: 'Error', message: typeof e === 'string' ? e : String(e) };
}

// Arrays, maps and strings are iterable too, but they are results, not streams.
function isStream(value) {
  if (value === null || typeof value !== 'object') return false;
  return typeof value[Symbol.asyncIterator] === 'function' || Object.prototype.toString.call(value) === '[object Generator]';
}

async function callMain() {
  const userModule = await import(new URL(scriptPath, `file://${Deno.cwd()}/`).href);
  if (typeof userModule.main !== 'function') {
    return { ok: false, error: { name: 'TypeError', message: 'the script does not export a function named main' } };
  }
  const args = job.params.map((name) => (Object.hasOwn(job.values, name) ? job.values[name] : undefined));
  const value = await userModule.main(...args);
  if (isStream(value)) {
    // Stepped by hand rather than with for-await, which drops what the generator returns.
    const iterator = typeof value[Symbol.asyncIterator] === 'function' ? value[Symbol.asyncIterator]() : value;
    for (;;) {
      const step = await iterator.next();
      if (step.done) return { ok: true, result: step.value === undefined ? '' : (JSON.stringify(step.value) ?? ''), streamed: true };
      await frame({ type: 'stream', chunk: typeof step.value === 'string' ? step.value : (JSON.stringify(step.value) ?? '') });
    }
  }
  try {
    return { ok: true, result: JSON.stringify(value ?? null) ?? 'null', streamed: false };
  } catch (error) {
    return { ok: false, error: { name: 'SerializationError', message: `the result is not JSON-serialisable: ${error.message}` } };
  }
}

let outcome;
try {
  outcome = await callMain();
} catch (error) {
  outcome = { ok: false, error: toJobError(error) };
}
await frame({ type: 'done', ...outcome });
Deno.exit(0);
