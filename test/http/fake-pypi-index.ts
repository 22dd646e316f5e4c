import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A PEP 503 simple index on loopback serving wheels built here (a wheel is a zip with a
 * `.dist-info`; Python's own zipfile writes it, so no build tool or network is needed):
 * `GET /simple/<normalized name>/` lists a project's files with their `#sha256=` fragment,
 * `GET /files/<wheel>` serves one.
 */
export interface FakeDistribution {
  /** The distribution's name as published (`PyYAML`). */
  name: string;
  version: string;
  /** Files by path inside the wheel (`yaml/__init__.py`). */
  files: Record<string, string>;
  /** `Requires-Dist` lines (`svc-test-helper>=1`). */
  requires?: string[];
}

export interface FakePypiIndex {
  /** The index URL (`.../simple/`), as PIP_INDEX_URL takes it. */
  url: string;
  requests: string[];
  close(): Promise<void>;
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/**
 * `credentials` (`user:password`): a private index, answering 401 to a request without them
 * (HTTP Basic); its `url` then carries them, as PIP_INDEX_URL does for such an index.
 */
export async function startFakePypiIndex(distributions: FakeDistribution[], opts: { credentials?: string } = {}): Promise<FakePypiIndex> {
  const wheels = new Map<string, Buffer>();
  const projects = new Map<string, { file: string; sha256: string }[]>();
  for (const dist of distributions) {
    const file = `${dist.name.replace(/[-.]+/g, '_')}-${dist.version}-py3-none-any.whl`;
    const wheel = buildWheel(dist);
    wheels.set(file, wheel);
    const key = normalize(dist.name);
    projects.set(key, [...(projects.get(key) ?? []), { file, sha256: createHash('sha256').update(wheel).digest('hex') }]);
  }
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
    requests.push(path);
    if (opts.credentials && req.headers.authorization !== `Basic ${Buffer.from(opts.credentials).toString('base64')}`) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Basic realm="svc-test"' });
      res.end('authentication required');
      return;
    }
    const project = /^\/simple\/([^/]+)\/?$/.exec(path);
    const files = project ? projects.get(normalize(project[1])) : undefined;
    if (files) {
      const links = files.map((f) => `<a href="/files/${f.file}#sha256=${f.sha256}">${f.file}</a><br/>`).join('\n');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!DOCTYPE html><html><body>\n${links}\n</body></html>`);
      return;
    }
    const wheel = path.startsWith('/files/') ? wheels.get(path.slice('/files/'.length)) : undefined;
    if (wheel) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': wheel.length });
      res.end(wheel);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://${opts.credentials ? `${opts.credentials}@` : ''}127.0.0.1:${(server.address() as AddressInfo).port}/simple/`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The wheel's bytes: its files, METADATA, WHEEL and a RECORD of them, zipped by Python's zipfile. */
function buildWheel(dist: FakeDistribution): Buffer {
  const distInfo = `${dist.name.replace(/[-.]+/g, '_')}-${dist.version}.dist-info`;
  const metadata = [`Metadata-Version: 2.1`, `Name: ${dist.name}`, `Version: ${dist.version}`, ...(dist.requires ?? []).map((r) => `Requires-Dist: ${r}`), ''].join('\n');
  const files: Record<string, string> = {
    ...dist.files,
    [`${distInfo}/METADATA`]: metadata,
    [`${distInfo}/WHEEL`]: 'Wheel-Version: 1.0\nGenerator: svc-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  };
  const script = `
import base64, hashlib, io, json, sys, zipfile
files, record_name = json.load(sys.stdin), sys.argv[1]
out = io.BytesIO()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    lines = []
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    lines.append(f"{record_name},,")
    z.writestr(record_name, "\\n".join(lines) + "\\n")
sys.stdout.buffer.write(out.getvalue())
`;
  return execFileSync('python3', ['-c', script, `${distInfo}/RECORD`], { input: JSON.stringify(files) });
}
