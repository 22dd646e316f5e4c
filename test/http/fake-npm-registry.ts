import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A minimal npm registry on loopback, speaking what npm reads when it resolves and installs: a
 * packument at `GET /<name>` (scoped names arrive as `@scope%2fname`) with each version's
 * `dist.tarball`, `dist.integrity` (sha512) and `dist.shasum`, and the tarballs themselves. The
 * tarballs are built here with `tar` from the files a test gives, under `package/` as `npm pack`
 * lays them out. `latest` is the last version given for a name.
 */
export interface FakePackage {
  name: string;
  version: string;
  /** Files of the package besides package.json, by relative path. */
  files: Record<string, string>;
  dependencies?: Record<string, string>;
  /** npm lifecycle scripts (`postinstall`, ...), which svc must not run by default. */
  scripts?: Record<string, string>;
  /** `"module"` for ESM packages. */
  type?: 'module' | 'commonjs';
  main?: string;
  /** Other package.json fields as they are (`module`, `exports`, `types`...). */
  fields?: Record<string, unknown>;
}

export interface FakeNpmRegistry {
  /** The registry URL, with a trailing slash as npm writes it. */
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * `token`: a private registry, answering 401 to a request without `Authorization: Bearer <token>`.
 * `echoAuthorization`: a careless one, whose 404 names the Authorization header it was sent.
 */
export async function startFakeNpmRegistry(packages: FakePackage[], opts: { token?: string; echoAuthorization?: boolean } = {}): Promise<FakeNpmRegistry> {
  const work = mkdtempSync(join(tmpdir(), 'fake-npm-'));
  const tarballs = new Map<string, Buffer>();
  const packuments = new Map<string, { name: string; 'dist-tags': Record<string, string>; versions: Record<string, unknown> }>();
  const requests: string[] = [];
  let base = '';

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
    requests.push(path);
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: 'authentication required' }));
      return;
    }
    const tarball = tarballs.get(path);
    if (tarball) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tarball.length });
      res.end(tarball);
      return;
    }
    const packument = packuments.get(path.slice(1));
    if (packument) {
      const body = JSON.stringify(withTarballUrls(packument, base));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: opts.echoAuthorization ? `Not found (authorization: ${req.headers.authorization ?? 'none'})` : 'Not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  for (const pkg of packages) {
    const tgz = pack(work, pkg);
    const file = `${pkg.name}/-/${pkg.name.split('/').pop()}-${pkg.version}.tgz`;
    tarballs.set(`/${file}`, tgz);
    const doc = packuments.get(pkg.name) ?? { name: pkg.name, 'dist-tags': {}, versions: {} };
    doc.versions[pkg.version] = {
      ...manifest(pkg),
      dist: {
        tarball: file,
        integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
        shasum: createHash('sha1').update(tgz).digest('hex'),
      },
    };
    doc['dist-tags'].latest = pkg.version;
    packuments.set(pkg.name, doc);
  }

  return {
    url: base,
    requests,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(work, { recursive: true, force: true });
    },
  };
}

function manifest(pkg: FakePackage): Record<string, unknown> {
  return {
    name: pkg.name,
    version: pkg.version,
    ...(pkg.type ? { type: pkg.type } : {}),
    ...(pkg.main ? { main: pkg.main } : {}),
    ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
    ...(pkg.scripts ? { scripts: pkg.scripts } : {}),
    ...pkg.fields,
  };
}

/**
 * A package installed in this checkout's node_modules as the registry would serve it (its own
 * package.json, its files): for code that imports a real package (windmill-client) without the
 * tests reaching the public registry.
 */
export function installedPackage(name: string): FakePackage {
  const dir = join(import.meta.dirname, '../../node_modules', name);
  // Its scripts (build steps of its own repository) are not served: nothing runs at install.
  const { version, dependencies, scripts: _scripts, name: _name, ...fields } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (dependencies && Object.keys(dependencies).length > 0) throw new Error(`${name} has dependencies, which installedPackage does not serve`);
  const files: Record<string, string> = {};
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (file !== 'package.json' && statSync(join(dir, file)).isFile()) files[file] = readFileSync(join(dir, file), 'utf8');
  }
  return { name, version, files, fields };
}

/** The packument as served: tarball paths become URLs of this server. */
function withTarballUrls(doc: { versions: Record<string, unknown> }, base: string): unknown {
  const versions = Object.fromEntries(
    Object.entries(doc.versions).map(([v, m]) => {
      const meta = m as { dist: { tarball: string } };
      return [v, { ...meta, dist: { ...meta.dist, tarball: base + meta.dist.tarball } }];
    }),
  );
  return { ...doc, versions };
}

/** The package's tarball as `npm pack` makes it: everything under `package/`. */
function pack(work: string, pkg: FakePackage): Buffer {
  const dir = mkdtempSync(join(work, 'pkg-'));
  const root = join(dir, 'package');
  mkdirSync(root);
  writeFileSync(join(root, 'package.json'), JSON.stringify(manifest(pkg), null, 2));
  for (const [name, text] of Object.entries(pkg.files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  const out = join(dir, 'package.tgz');
  execFileSync('tar', ['-czf', out, '-C', dir, 'package']);
  return readFileSync(out);
}
