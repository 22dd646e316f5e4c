import { lstat, mkdir, readFile, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gzipSync } from 'node:zlib';
import { extract, pack, type Headers } from 'tar-stream';

/** An unpacked tree larger than this is refused: it would not fit the sandbox's /tmp beside its jobs. */
export const MAX_TREE_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * An installed dependency tree as one gzipped tar (AWS: the object in S3 the sandbox unpacks):
 * directories, files with their modes, and relative symbolic links (npm's `.bin`).
 */
export async function packTree(dir: string): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    archive.once('end', resolve);
    archive.once('error', reject);
  });
  const add = (header: Headers, body?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body) archive.entry(header, body, done);
      else archive.entry(header, done);
    });
  const walk = async (relative: string): Promise<void> => {
    for (const name of (await readdir(join(dir, relative))).sort()) {
      const path = relative ? `${relative}/${name}` : name;
      const info = await lstat(join(dir, path));
      if (info.isSymbolicLink()) await add({ name: path, type: 'symlink', linkname: await readlink(join(dir, path)), mode: 0o777 });
      else if (info.isDirectory()) {
        await add({ name: path, type: 'directory', mode: 0o755 });
        await walk(path);
      } else if (info.isFile()) await add({ name: path, type: 'file', mode: info.mode & 0o111 ? 0o755 : 0o644 }, await readFile(join(dir, path)));
    }
  };
  await walk('');
  archive.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/**
 * Unpacks `gzipped` into `dir` (which must exist and be empty). Every entry must stay inside
 * `dir`: absolute names, `..`, links leaving the tree and entries through links are refused, and
 * so are device files and trees past MAX_TREE_BYTES.
 */
export async function unpackTree(gzipped: Uint8Array, dir: string): Promise<void> {
  const reader = extract();
  const links = new Set<string>();
  const through = new Set<string>();
  let total = 0;
  reader.on('entry', (header, stream, next) => {
    const done = (error?: unknown) => {
      stream.resume();
      next(error instanceof Error ? error : error === undefined ? undefined : new Error(String(error)));
    };
    const name = normalize(header.name).replace(/\/+$/, '');
    if (!name || name === '.' || isAbsolute(name) || name.split(sep).includes('..')) return done(new Error(`the archive names a path outside its tree: ${header.name}`));
    const parts = name.split(sep);
    for (let i = 1; i < parts.length; i++) if (links.has(parts.slice(0, i).join(sep))) return done(new Error(`the archive writes through a link: ${header.name}`));
    const target = join(dir, name);
    const work = async () => {
      if (header.type === 'directory') await mkdir(target, { recursive: true, mode: 0o755 });
      else if (header.type === 'symlink') {
        const link = header.linkname ?? '';
        if (!link || isAbsolute(link)) throw new Error(`the archive has a link leaving its tree: ${header.name}`);
        // Read word by word from the link's folder: `..` may not leave the tree, and no word but
        // the last may be a link (the kernel follows it before a later `..`, which words alone
        // cannot tell), nor become one later (`through` keeps the folders links pass through).
        const at = parts.slice(0, -1);
        const words = link.split('/').filter((w) => w !== '' && w !== '.');
        for (const [i, word] of words.entries()) {
          if (word === '..') {
            if (at.length === 0) throw new Error(`the archive has a link leaving its tree: ${header.name}`);
            at.pop();
            continue;
          }
          at.push(word);
          if (i === words.length - 1) continue;
          if (links.has(at.join(sep))) throw new Error(`the archive has a link through another link: ${header.name}`);
          through.add(at.join(sep));
        }
        if (through.has(name)) throw new Error(`the archive has a link where another link passes through a folder: ${header.name}`);
        links.add(name);
        await symlink(link, target);
      } else if (header.type === 'file') {
        const chunks: Buffer[] = [];
        for await (const chunk of stream) {
          total += (chunk as Buffer).length;
          if (total > MAX_TREE_BYTES) throw new Error(`the tree is larger than ${MAX_TREE_BYTES} bytes`);
          chunks.push(chunk as Buffer);
        }
        await writeFile(target, Buffer.concat(chunks), { mode: (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644, flag: 'wx' });
      } else throw new Error(`the archive has an entry of type ${header.type}: ${header.name}`);
    };
    work().then(() => done(), done);
  });
  await pipeline(Readable.from([Buffer.from(gzipped)]), createGunzip(), reader);
}
