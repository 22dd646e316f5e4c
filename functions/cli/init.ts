import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CONFIG_FILE } from './config.js';
import { CliError, EXIT } from './errors.js';
import { STATE_DIR } from './state.js';
import { SCHEMA_FILE } from './json-schema.js';

/** `svc init`: a commented svc.yaml with the defaults, and `.svc-sync/` kept out of git. */

/** svc.yaml with the defaults; `schemaPath` is where the editor finds the JSON Schema, relative to svc.yaml. */
export const defaultSvcYaml = (schemaPath: string) => `# yaml-language-server: $schema=${schemaPath}
# svc.yaml: what \`svc sync pull\` and \`svc sync push\` synchronise (spec 2.9).
# Every key is optional; an unknown key is an error. Full reference: schemas/svc.yaml.schema.json.

# TypeScript runtime of new .ts scripts: bun or deno (the other one is written .bun.ts / .deno.ts).
defaultTs: bun

# Globs over u/... and f/... paths: what is synced (default: everything), extra includes, exclusions.
includes:
  - "f/**"
  - "u/**"
extraIncludes: []
excludes: []

# Kinds left out of the sync.
skipVariables: false
skipResources: false
skipResourceTypes: false
skipSecrets: true          # secret variables are synced only when false (encrypted, see plainSecrets)
skipScripts: false
skipFlows: false
skipApps: false
skipFolders: false
skipWorkspaceDependencies: false
skipDmn: false
skipDataMigrations: false

# Kinds added to the sync.
includeSchedules: false
includeTriggers: false
includeUsers: false        # workspace members and roles: users/<name>.user.yaml
includeGroups: false       # groups/<name>.group.yaml
includeSettings: false     # settings.yaml
includeKey: false          # encryption_key.yaml: the key pulled secrets are encrypted with

parallel: 4                # operations at once
locksRequired: false       # push fails when a script has no <path>.script.lock
lint: true                 # check every file before a push; push nothing if one fails
plainSecrets: false        # write pulled secrets in plain text (not recommended)
# message: "deployed from git"   # recorded on the versions a push creates
# promotion: main                # use that branch's promotionOverrides
skipBranchValidation: false
nonDottedPaths: false      # true: f/x__flow/ instead of f/x.flow/
syncBehavior: v1           # keep ownership on update, strip ownership fields on pull

# codebases:
#   - relative_path: f/app
#     format: esm
#     external: []

# One entry per workspace; gitBranch and workspaceId default to the entry's name.
# workspaces:
#   main:
#     baseUrl: http://127.0.0.1:8000
#   staging:
#     gitBranch: staging
#     workspaceId: staging
#     overrides:
#       skipSecrets: true
#     specificItems:
#       resources: ["f/shared/db"]
#   commonSpecificItems:
#     variables: ["f/shared/*"]
`;

/** The text as the reference shows it (its schema path as in an svc checkout). */
export const DEFAULT_SVC_YAML = defaultSvcYaml('schemas/svc.yaml.schema.json');

export function initProject(dir: string, force: boolean): string[] {
  const file = join(dir, CONFIG_FILE);
  if (existsSync(file) && !force) throw new CliError(EXIT.usage, `${CONFIG_FILE} already exists (svc init --force overwrites it)`);
  // Relative, so the file holds no path of this machine (the project is committed and cloned elsewhere).
  writeFileSync(file, defaultSvcYaml(relative(dir, SCHEMA_FILE).split(sep).join('/')));
  const done = [`wrote ${CONFIG_FILE}`];
  const gitignore = join(dir, '.gitignore');
  const ignored = existsSync(gitignore) ? readFileSync(gitignore, 'utf8').split('\n') : [];
  if (!ignored.includes(`${STATE_DIR}/`)) {
    appendFileSync(gitignore, `${ignored.length && ignored.at(-1) !== '' ? '\n' : ''}${STATE_DIR}/\n`);
    done.push(`added ${STATE_DIR}/ to .gitignore`);
  }
  return done;
}
