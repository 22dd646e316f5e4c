// Copies a flow's shared folder into a job directory, or out of it. Runs as the job's own sandbox
// user, so it can read and write exactly what the job could: a symlink a job planted towards a
// file of the service's reaches nothing this process may open.
//
// stdin: {"mode": "write", "dir": ..., "files": {"<relative path>": "<base64>"}}
//     or {"mode": "read", "dir": ..., "max": <bytes>}   -> stdout: {"files": {...}} or {"error": "..."}
// (Given to `node -e`, so the sandbox user need not be able to read this file where it lies.)
//
// Only regular files travel; symlinks and other special files are left out. Paths are relative,
// with `/` separators, and never leave the folder.
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { mode, dir, max, files } = JSON.parse(Buffer.concat(chunks).toString('utf8'));

function safeRelative(path) {
  const parts = path.split('/');
  return path.length > 0 && !path.startsWith('/') && !parts.some((p) => p === '' || p === '.' || p === '..');
}

async function write() {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [path, base64] of Object.entries(files)) {
    if (!safeRelative(path)) throw new Error(`refusing shared folder path ${JSON.stringify(path)}`);
    const target = join(dir, ...path.split('/'));
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    // wx: a fresh file, never one that already exists (or a link in its place).
    await writeFile(target, Buffer.from(base64, 'base64'), { mode: 0o600, flag: 'wx' });
  }
}

/**
 * At most `count` bytes of a regular file, or undefined when what is there now is no longer one.
 * Opened without following a link and without blocking: a FIFO put in the file's place after the
 * lstat must not hold the read (and with it the job) open.
 */
async function readAtMost(path, count) {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const chunks = [];
    for await (const chunk of handle.createReadStream({ start: 0, end: count - 1, autoClose: false })) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    await handle.close();
  }
}

async function read() {
  const limit = Number(max);
  const files = {};
  let total = 0;
  const visit = async (current) => {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (error) {
      if (error.code === 'ENOENT' && current === dir) return;
      throw error;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(current, entry.name);
      const stat = await lstat(full);
      if (stat.isDirectory()) await visit(full);
      else if (stat.isFile()) {
        // What is read counts, not what lstat said: the job may still be changing the file.
        const content = await readAtMost(full, limit - total + 1);
        if (!content) continue;
        total += content.length;
        if (total > limit) throw Object.assign(new Error(`the shared folder holds more than ${limit} bytes`), { tooLarge: true });
        files[relative(dir, full).split(sep).join('/')] = content.toString('base64');
      }
    }
  };
  try {
    await visit(dir);
    process.stdout.write(JSON.stringify({ files }));
  } catch (error) {
    if (!error.tooLarge) throw error;
    process.stdout.write(JSON.stringify({ error: error.message }));
  }
}

await (mode === 'write' ? write() : mode === 'read' ? read() : Promise.reject(new Error(`unknown mode ${mode}`)));
