import { afterAll, describe, expect, it } from 'vitest';
import { installedPackage, startFakeNpmRegistry, type FakeNpmRegistry } from '../http/fake-npm-registry.js';
import { startFakePypiIndex, type FakePypiIndex } from '../http/fake-pypi-index.js';
import { apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/**
 * A workspace folder written the way Windmill's CLI writes one (`wmill sync pull`) pushes to svc
 * as it is (docs/windmill.md): wmill.yaml read as svc.yaml, `.script.yaml` files with their
 * `lock: '!inline ...'` references and Windmill-only fields, a flow folder with inline scripts and
 * their locks, resources, variables, a resource type, a folder, a schedule, an app with a frontend
 * script and a trigger kind svc lacks. What svc cannot represent is listed by path and reason,
 * never dropped silently; the folder then pulls back without differences.
 */

let index: FakePypiIndex | undefined;
let registry: FakeNpmRegistry | undefined;
// The folder's Python script imports `wmill`, locked to 1.818.0: a PEP 503 index on loopback serves
// a stand-in distribution of that version, since the test machines reach no Python index. Its
// TypeScript scripts import `windmill-client`, served on loopback as this checkout installed it.
const server = useServer(async () => {
  index = await startFakePypiIndex([{ name: 'wmill', version: '1.818.0', files: { 'wmill/__init__.py': 'def get_variable(path):\n    return path\n' } }]);
  registry = await startFakeNpmRegistry([installedPackage('windmill-client')]);
  return { PIP_INDEX_URL: index.url, NPM_CONFIG_REGISTRY: registry.url };
});
afterAll(async () => {
  await index?.close();
  await registry?.close();
});

const SCHEMA = `schema:
  $schema: 'https://json-schema.org/draft/2020-12/schema'
  type: object
  properties:
    name:
      type: string
      description: ''
      default: null
  required:
    - name
`;

export const WINDMILL_FOLDER: Record<string, string> = {
  'wmill.yaml': 'defaultTs: bun\nincludes:\n  - f/**\nincludeSchedules: true\nincludeTriggers: true\nskipSecrets: true\n',
  'f/ops/folder.meta.yaml': 'display_name: Operations\nowners: []\nextra_perms: {}\n',
  'f/ops/greet.ts': 'import * as wmill from "windmill-client";\n\nexport async function main(name: string) {\n  const greeting = await wmill.getVariable("f/ops/greeting");\n  await wmill.setVariable("f/ops/last_greeted", name);\n  return `${greeting}, ${name}`;\n}\n',
  'f/ops/greet.script.yaml': `summary: Greets someone
description: ''
lock: '!inline f/ops/greet.script.lock'
kind: script
${SCHEMA}tag: heavy
concurrent_limit: 2
concurrency_time_window_s: 60
ws_error_handler_muted: false
is_template: false
`,
  'f/ops/greet.script.lock': '{\n  "dependencies": {\n    "windmill-client": "1.818.0"\n  }\n}\n//bun.lock\n<empty>\n',
  'f/ops/report.py': 'import wmill\n\n\ndef main(name: str):\n    return {"region": wmill.get_variable("f/ops/region"), "name": name}\n',
  'f/ops/report.script.yaml': `summary: ''
description: Reports
lock: '!inline locks/report.lock'
kind: script
${SCHEMA}`,
  'locks/report.lock': '# py311\nwmill==1.818.0\n',
  'f/ops/cleanup.sh': 'echo cleaned\n',
  'f/ops/cleanup.script.yaml': "summary: Cleanup\ndescription: ''\nlock: ''\nkind: script\nschema:\n  $schema: 'https://json-schema.org/draft/2020-12/schema'\n  type: object\n  properties: {}\n  required: []\n",
  'f/ops/approve.flow/flow.yaml': `summary: Approve a refund
description: ''
value:
  modules:
    - id: a
      summary: Ask
      value:
        type: rawscript
        content: '!inline a.inline_script.ts'
        language: bun
        lock: '!inline a.inline_script.lock'
        input_transforms:
          amount:
            type: javascript
            expr: flow_input.amount
      suspend:
        required_events: 1
        timeout: 1800
    - id: b
      value:
        type: rawscript
        content: '!inline b.inline_script.py'
        language: python3
        input_transforms:
          resume:
            type: javascript
            expr: resume
schema:
  $schema: 'https://json-schema.org/draft/2020-12/schema'
  type: object
  properties:
    amount:
      type: number
      description: ''
  required: []
ws_error_handler_muted: false
tag: flows
`,
  'f/ops/approve.flow/a.inline_script.ts': 'import * as wmill from "windmill-client";\n\nexport async function main(amount: number) {\n  return { urls: await wmill.getResumeUrls("admin"), amount };\n}\n',
  'f/ops/approve.flow/a.inline_script.lock': '{\n  "dependencies": {\n    "windmill-client": "1.818.0"\n  }\n}\n',
  'f/ops/approve.flow/b.inline_script.py': 'def main(resume):\n    return resume\n',
  'f/ops/db.resource.yaml': "description: Orders database\nresource_type: postgresql\nvalue:\n  host: db.internal\n  port: 5432\n  user: app\n  dbname: orders\n  sslmode: disable\nis_oauth: false\n",
  'f/ops/region.variable.yaml': "description: ''\nvalue: eu-west-1\nis_secret: false\naccount: null\nis_oauth: false\n",
  'f/ops/greeting.variable.yaml': "description: ''\nvalue: Hello\nis_secret: false\n",
  'c_ticket.resource-type.yaml': "description: A ticket system\nformat_extension: null\nschema:\n  $schema: 'https://json-schema.org/draft/2020-12/schema'\n  type: object\n  properties:\n    url:\n      type: string\n  required:\n    - url\n",
  'f/ops/nightly.schedule.yaml': "schedule: '0 0 3 * * *'\ntimezone: Europe/Paris\nscript_path: f/ops/greet\nis_flow: false\nargs:\n  name: nightly\nenabled: false\nsummary: Nightly greeting\ndescription: ''\nno_flow_overlap: true\nws_error_handler_muted: false\nretry: null\ntag: null\non_recovery: f/ops/cleanup\n",
  'f/ops/orders.kafka_trigger.yaml': "kafka_resource_path: f/ops/kafka\ngroup_id: svc\ntopics:\n  - orders\nscript_path: f/ops/greet\nis_flow: false\nenabled: true\n",
  'f/ops/dash.app/app.yaml': `summary: Dashboard
value:
  grid:
    - id: a
      data:
        type: buttoncomponent
        componentInput:
          type: runnable
          runnable:
            type: runnableByName
            name: Say hi
            inlineScript:
              language: frontend
              content: "return 'hi'"
policy:
  on_behalf_of: u/admin
  execution_mode: publisher
`,
  'f/ops/dash.app/b.inline_script.ts': 'export async function main() { return 1 }\n',
};

interface Report {
  changes: { op: string; kind: string; path: string }[];
  skipped: { path: string; reason: string }[];
  warnings: string[];
  fileErrors: string[];
}

describe('svc sync push: a folder written by Windmill\'s CLI', () => {
  it('pushes it as it is with one command, lists what it skips by path and reason, and pulls back without differences', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject(WINDMILL_FOLDER);

    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(dry.code, dry.stderr).toBe(0);
    const report = JSON.parse(dry.stdout) as Report;
    expect(report.fileErrors).toEqual([]);
    expect(report.warnings).toContain('no svc.yaml here: reading wmill.yaml as one');
    expect(changesOf(dry)).toEqual([
      '+ app f/ops/dash',
      '+ flow f/ops/approve',
      '+ folder ops',
      '+ resource f/ops/db',
      '+ resource_type c_ticket',
      '+ schedule f/ops/nightly',
      '+ script f/ops/cleanup',
      '+ script f/ops/greet',
      '+ script f/ops/report',
      '+ variable f/ops/greeting',
      '+ variable f/ops/region',
    ]);
    const skipped = report.skipped.map((x) => `${x.path}: ${x.reason}`);
    expect(skipped).toEqual(expect.arrayContaining([
      expect.stringMatching(/^f\/ops\/greet\.script\.yaml: tag: svc has no worker groups or tags/),
      expect.stringMatching(/^f\/ops\/approve\.flow\/flow\.yaml: module a: lock: /),
      expect.stringMatching(/^f\/ops\/approve\.flow\/flow\.yaml: tag: /),
      expect.stringMatching(/^f\/ops\/nightly\.schedule\.yaml: no_flow_overlap: /),
      expect.stringMatching(/^f\/ops\/dash\.app\/app\.yaml: value\.grid\.0\.data\.componentInput\.runnable\.inlineScript: frontend script/),
      expect.stringMatching(/^f\/ops\/dash\.app\/b\.inline_script\.ts: /),
      expect.stringMatching(/^f\/ops\/orders\.kafka_trigger\.yaml: this server has no triggers other than HTTP routes/),
    ]));
    // Fields at their defaults are not worth a line.
    expect(skipped.some((l) => l.includes('ws_error_handler_muted') || l.includes('is_template') || l.includes('retry:'))).toBe(false);
    // Without --json-output the same list is printed.
    const text = await project.svc(['sync', 'push', '--dry-run', ...target(s, ws)]);
    expect(text.stdout).toContain('skipped (svc cannot represent these; they are left out):');
    expect(text.stdout).toContain('  f/ops/orders.kafka_trigger.yaml: this server has no triggers other than HTTP routes');

    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr + pushed.stdout).toBe(0);
    const greet = (await apiGet(s, ws, '/scripts/get/p/f/ops/greet')).body;
    // A lock in Windmill's format is resolved again into svc's own (README: Dependencies): npm's
    // package-lock for TypeScript, hashed requirement lines for Python, the same packages.
    expect(greet).toMatchObject({ language: 'bun', summary: 'Greets someone', concurrent_limit: 2, concurrency_time_window_s: 60 });
    expect(JSON.parse(greet.lock).packages['node_modules/windmill-client']).toMatchObject({ version: expect.any(String), integrity: expect.stringMatching(/^sha512-/) });
    const reportScript = (await apiGet(s, ws, '/scripts/get/p/f/ops/report')).body;
    expect(reportScript.language).toBe('python3');
    expect(reportScript.lock).toMatch(/^wmill==1\.818\.0 --hash=sha256:[0-9a-f]{64}$/m);
    const cleanup = (await apiGet(s, ws, '/scripts/get/p/f/ops/cleanup')).body;
    expect(cleanup.language).toBe('bash');
    expect(cleanup.lock ?? null).toBeNull();
    const flow = (await apiGet(s, ws, '/flows/get/f/ops/approve')).body;
    expect(flow.value.modules[0]).toMatchObject({ id: 'a', suspend: { required_events: 1, timeout: 1800 } });
    expect(flow.value.modules[0].value.content).toContain('getResumeUrls');
    expect((await apiGet(s, ws, '/schedules/get/f/ops/nightly')).body).toMatchObject({ schedule: '0 0 3 * * *', script_path: 'f/ops/greet', enabled: false });
    expect((await apiGet(s, ws, '/variables/get/f/ops/region')).body.value).toBe('eu-west-1');
    expect((await apiGet(s, ws, '/resources/type/get/c_ticket')).body.schema.required).toEqual(['url']);

    // Pulled back, only the two scripts' locks differ: svc's own lock replaces Windmill's (docs/windmill.md).
    const back = await project.svc(['sync', 'pull', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(back.code, back.stderr).toBe(0);
    expect(changesOf(back)).toEqual(['~ script f/ops/greet', '~ script f/ops/report']);
    const pulled = await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    expect(pulled.code, pulled.stderr).toBe(0);
    const again = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(changesOf(again)).toEqual([]);
  });

  it('reads svc.yaml when both are there, and says that wmill.yaml is not read', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({ 'svc.yaml': 'includes:\n  - f/**\n', 'wmill.yaml': 'includes:\n  - u/**\n', 'f/ops/x.variable.yaml': "description: ''\nvalue: one\nis_secret: false\n" });
    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as Report).warnings).toContain('both svc.yaml and wmill.yaml are here: svc.yaml wins, wmill.yaml is not read');
    expect(changesOf(dry)).toEqual(['+ variable f/ops/x']);
  });

  it('refuses a lock reference outside the folder and a field nobody knows, naming the file', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({
      'wmill.yaml': 'includes:\n  - f/**\n',
      'f/ops/a.ts': 'export function main() { return 1 }\n',
      'f/ops/a.script.yaml': "summary: ''\nlock: '!inline ../../etc/passwd'\n",
      'f/ops/b.ts': 'export function main() { return 1 }\n',
      'f/ops/b.script.yaml': "summary: ''\nsumary: typo\n",
    });
    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    const report = JSON.parse(dry.stdout) as Report;
    expect(report.fileErrors).toEqual(expect.arrayContaining([
      expect.stringMatching(/^f\/ops\/a\.script\.yaml: lock: \.\.\/\.\.\/etc\/passwd is not a file of this folder/),
      expect.stringMatching(/^f\/ops\/b\.script\.yaml: sumary: unknown property/),
    ]));
  });
});

describe('svc migrate', () => {
  it('reports per kind what moves, what needs a lock and what is skipped and why, as a table and as JSON, without a server', async () => {
    const project = newProject({ ...WINDMILL_FOLDER, 'f/ops/unlocked.py': 'def main():\n    return 1\n' });
    const elsewhere = newProject();
    const json = await elsewhere.svc(['migrate', project.dir, '--json-output']);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { config: string; kinds: { kind: string; moves: string[]; needsLock: string[]; skipped: { path: string; reason: string }[] }[]; errors: string[] };
    expect(report.config).toBe('wmill.yaml');
    expect(report.errors).toEqual([]);
    const byKind = Object.fromEntries(report.kinds.map((k) => [k.kind, k]));
    expect(byKind.script.moves).toEqual(['f/ops/cleanup', 'f/ops/greet', 'f/ops/report', 'f/ops/unlocked']);
    // Bash needs no lock; the Python script without one does.
    expect(byKind.script.needsLock).toEqual(['f/ops/unlocked']);
    expect(byKind.flow.moves).toEqual(['f/ops/approve']);
    expect(byKind.schedule.moves).toEqual(['f/ops/nightly']);
    expect(byKind.variable.moves).toEqual(['f/ops/greeting', 'f/ops/region']);
    expect(byKind.trigger.moves).toEqual([]);
    expect(byKind.trigger.skipped).toEqual([{ path: 'f/ops/orders.kafka_trigger.yaml', reason: 'this server has no triggers other than HTTP routes' }]);
    expect(byKind.app.skipped.map((x) => x.path)).toEqual(expect.arrayContaining(['f/ops/dash.app/app.yaml', 'f/ops/dash.app/b.inline_script.ts']));
    expect(byKind.script.skipped.map((x) => x.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/^tag: /)]));

    const text = await elsewhere.svc(['migrate', project.dir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^kind\s+moves\s+needs a lock\s+skipped$/m);
    expect(text.stdout).toMatch(/^script\s+4\s+1\s+\d+$/m);
    expect(text.stdout).toContain('needs a dependency lock');
    expect(text.stdout).toContain('  f/ops/unlocked\n');
    expect(text.stdout).toContain('  f/ops/orders.kafka_trigger.yaml: this server has no triggers other than HTTP routes');

    expect((await elsewhere.svc(['migrate', `${project.dir}/missing`])).code).toBe(2);
  });
});

describe('svc sync push: a Windmill folder\'s input schemas', () => {
  it('agree with what svc infers, TypedDict and type-alias resource types included; where they differ the stored one is used and --dry-run says so', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const header = "summary: ''\ndescription: ''\nlock: ''\nkind: script\nschema:\n  $schema: 'https://json-schema.org/draft/2020-12/schema'\n  type: object\n";
    const project = newProject({
      'wmill.yaml': 'includes:\n  - f/**\n',
      'f/ops/typed.py': 'from typing import TypedDict\n\n\nclass s3(TypedDict):\n    bucket: str\n\n\ndef main(store: s3, n: int = 2, mode: str = "fast"):\n    return n\n',
      'f/ops/typed.script.yaml': `${header}  properties:\n    store:\n      type: object\n      description: ''\n      format: resource-s3\n    n:\n      type: integer\n      description: ''\n      default: 2\n    mode:\n      type: string\n      description: ''\n      default: fast\n  required:\n    - store\n`,
      'f/ops/aliased.ts': 'type Pg = { host: string };\nexport async function main(db: Pg, kind: "a" | "b" = "a") { return kind }\n',
      'f/ops/aliased.script.yaml': `${header}  properties:\n    db:\n      type: object\n      description: ''\n      format: resource-pg\n    kind:\n      type: string\n      description: ''\n      default: a\n      enum:\n        - a\n        - b\n  required:\n    - db\n`,
      'f/ops/drift.ts': 'export async function main(color: string) { return color }\n',
      'f/ops/drift.script.yaml': `${header}  properties:\n    color:\n      type: string\n      description: 'pick one'\n      default: red\n      enum:\n        - red\n        - blue\n  required: []\n`,
    });
    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(dry.code, dry.stderr).toBe(0);
    const warnings = (JSON.parse(dry.stdout) as Report).warnings.filter((w) => w.includes('schema'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^f\/ops\/drift\.script\.yaml: schema: svc infers it differently \(color: enum \["red","blue"\] stored, null inferred; color: default "red" stored, null inferred; required \[\] stored, \["color"\] inferred\); the stored schema is used$/);

    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    const schemaOf = async (path: string) => (await apiGet(s, ws, `/scripts/get/p/${path}`)).body.schema;
    expect(await schemaOf('f/ops/typed')).toMatchObject({ properties: { store: { type: 'object', format: 'resource-s3' }, n: { type: 'integer', default: 2 }, mode: { default: 'fast' } }, required: ['store'] });
    expect(await schemaOf('f/ops/aliased')).toMatchObject({ properties: { db: { format: 'resource-pg' }, kind: { enum: ['a', 'b'], default: 'a' } }, required: ['db'] });
    expect(await schemaOf('f/ops/drift')).toMatchObject({ properties: { color: { enum: ['red', 'blue'], default: 'red', description: 'pick one' } }, required: [] });
    expect(changesOf(await project.svc(['sync', 'pull', '--dry-run', '--json-output', ...target(s, ws)]))).toEqual([]);
  });
});
