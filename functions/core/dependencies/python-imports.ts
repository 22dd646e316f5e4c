import { PYTHON_STDLIB } from './python-stdlib.js';

/**
 * The distributions a Python script needs (README: Dependencies): its top-level imports mapped to
 * the distribution that provides them (`yaml` is PyYAML's), plus the `# requirements:` comment
 * block, whose lines pin or add distributions as in a requirements file. The standard library,
 * the built-in `svc` client and workspace imports (`f.`, `u.`) need nothing.
 */

/** Import names whose distribution has another name; the rest install under their own name. */
const DISTRIBUTION_OF: Record<string, string> = {
  yaml: 'PyYAML',
  PIL: 'pillow',
  bs4: 'beautifulsoup4',
  psycopg2: 'psycopg2-binary',
  cv2: 'opencv-python',
  sklearn: 'scikit-learn',
  skimage: 'scikit-image',
  dateutil: 'python-dateutil',
  dotenv: 'python-dotenv',
  jwt: 'PyJWT',
  jose: 'python-jose',
  magic: 'python-magic',
  docx: 'python-docx',
  pptx: 'python-pptx',
  Crypto: 'pycryptodome',
  OpenSSL: 'pyOpenSSL',
  MySQLdb: 'mysqlclient',
  git: 'GitPython',
  google: 'google-cloud-core',
  googleapiclient: 'google-api-python-client',
  slack_sdk: 'slack-sdk',
  serial: 'pyserial',
  usb: 'pyusb',
  zmq: 'pyzmq',
  fitz: 'PyMuPDF',
  attr: 'attrs',
  telegram: 'python-telegram-bot',
  discord: 'discord.py',
  ldap: 'python-ldap',
  snowflake: 'snowflake-connector-python',
  pymysql: 'PyMySQL',
  multipart: 'python-multipart',
  wmill: 'wmill',
};

const BUILT_IN = new Set(['svc', 'f', 'u']);

/** A distribution's name (PEP 508): letters, digits, `.`, `_` and `-`, beginning and ending with a letter or digit. */
const DISTRIBUTION_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** A requirement as pip reads it: a distribution name and what follows (`==1.2`, `>=2,<3`, `[extra]`). */
const REQUIREMENT = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,-]+\])?\s*((?:[<>=!~]=?|===)\s*[A-Za-z0-9.*+!_-]+(?:\s*,\s*(?:[<>=!~]=?|===)\s*[A-Za-z0-9.*+!_-]+)*)?$/;

export class PythonRequirementError extends Error {}

/** The distributions to resolve, by normalized name: requirement lines as pip takes them. */
export function pythonRequirements(content: string): Record<string, string> {
  const wanted: Record<string, string> = {};
  for (const module of topLevelImports(content)) {
    if (PYTHON_STDLIB.has(module) || BUILT_IN.has(module)) continue;
    const distribution = DISTRIBUTION_OF[module] ?? module.replaceAll('_', '-');
    // A private module (`_speedups`, `__version`) names no distribution (PEP 508 names begin and
    // end with a letter or digit), and `-x` would be an option to pip: its distribution, if it
    // has one, goes in the `# requirements:` block.
    if (!DISTRIBUTION_NAME.test(distribution)) continue;
    wanted[normalizeName(distribution)] = distribution;
  }
  // Windmill's `# extra_requirements:` block adds to the imports as `# requirements:` does here.
  for (const label of ['requirements', 'extra_requirements']) {
    for (const line of requirementsBlock(content, label)) {
      const match = REQUIREMENT.exec(line);
      if (!match) throw new PythonRequirementError(`# ${label}: "${line}" is not a requirement pip can install from an index (name, optional [extras], optional version specifiers)`);
      wanted[normalizeName(match[1])] = line.replace(/\s+/g, '');
    }
  }
  return wanted;
}

/** PEP 503's normalized name: lowercase, runs of `-_.` as one `-`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** The first name of every `import a.b` / `from a.b import c` (relative imports left out). */
function topLevelImports(content: string): Set<string> {
  const names = new Set<string>();
  // Continuation lines and bodies of strings are rare enough in import statements to read lines.
  for (const raw of content.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    const from = /^from\s+([A-Za-z_][\w.]*)\s+import\b/.exec(line);
    if (from) names.add(from[1].split('.')[0]);
    const plain = /^import\s+(.+)$/.exec(line);
    if (plain) {
      for (const part of plain[1].replace(/[()\\]/g, '').split(',')) {
        const name = part.trim().split(/\s+/)[0]?.split('.')[0];
        if (name && /^[A-Za-z_]\w*$/.test(name)) names.add(name);
      }
    }
  }
  return names;
}

/** The lines of the `# requirements:` (or `# extra_requirements:`) comment block (Windmill's), up to its first non-comment or empty comment line. */
function requirementsBlock(content: string, label: string): string[] {
  const lines = content.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^#\\s*${label}:\\s*$`, 'i').test(l.trim()));
  if (start === -1) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^#\s*(.*)$/.exec(line.trim());
    // The block ends at an empty comment, code, or the next block's label.
    if (!m || !m[1].trim() || /^[a-z_]+:$/i.test(m[1].trim())) break;
    out.push(m[1].trim());
  }
  return out;
}

/** A lock line: `name==version --hash=sha256:<hex>` (pip's hash-checking mode). */
const LOCK_LINE = /^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)\s+--hash=sha256:([0-9a-f]{64})$/;

/**
 * Where Python's `str.splitlines` (pip's reading of a requirements file) breaks a line and a split
 * on `\n` does not: a "comment" holding one would be a second line to pip, another requirement or
 * an option (`-r <url>`, `--index-url`) that the lock's tree key never saw.
 */
const PYTHON_ONLY_LINE_BREAK = /\r(?!\n)|[\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** The locked distributions, or null when `text` is not an svc Python lock (a plain pin list of another tool, say). */
export function readPythonLock(text: string): { name: string; version: string; sha256: string }[] | null {
  if (PYTHON_ONLY_LINE_BREAK.test(text)) return null;
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (lines.length === 0) return null;
  const out = [];
  for (const line of lines) {
    const m = LOCK_LINE.exec(line);
    if (!m) return null;
    out.push({ name: m[1], version: m[2], sha256: m[3] });
  }
  return out;
}

/**
 * The requirements file pip installs a lock from: the locked lines alone, rebuilt from what
 * `readPythonLock` read (and the tree key hashed), so that nothing else of the lock's text (its
 * comments, an encoding cookie) ever reaches pip.
 */
export function pythonLockRequirements(locked: readonly { name: string; version: string; sha256: string }[]): string {
  return `${locked.map((d) => `${d.name}==${d.version} --hash=sha256:${d.sha256}`).join('\n')}\n`;
}
