import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { effectiveOptions, parseConfig, selectWorkspace, specificItemsOf, validateBranch, workspaceEntries } from '../../../functions/cli/config.js';
import { CliError, EXIT } from '../../../functions/cli/errors.js';
import { DEFAULT_SVC_YAML } from '../../../functions/cli/init.js';
import { SCHEMA_FILE, schemaText } from '../../../functions/cli/json-schema.js';

/** svc.yaml (spec 2.9): strict validation that names the key, and how options combine. */

function configError(text: string): string {
  try {
    parseConfig(text);
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(EXIT.usage);
    return (e as Error).message;
  }
  throw new Error('expected svc.yaml to be refused');
}

describe('svc.yaml validation', () => {
  it('refuses an unknown top-level property, naming it', () => {
    expect(configError('skipScripts: true\nskipScrips: true\n')).toContain('skipScrips: unknown property');
  });

  it('refuses an unknown codebases item field, naming where it is', () => {
    expect(configError('codebases:\n  - relative_path: f/app\n    minify: true\n')).toContain('codebases.0.minify: unknown property');
  });

  it('requires codebases[].relative_path and both ends of an asset', () => {
    expect(configError('codebases:\n  - format: esm\n')).toContain('codebases.0.relative_path');
    expect(configError('codebases:\n  - relative_path: a\n    assets: [{from: x}]\n')).toContain('codebases.0.assets.0.to');
  });

  it('refuses an unknown workspace-entry field, naming the workspace', () => {
    expect(configError('workspaces:\n  staging:\n    foo: 1\n')).toContain('workspaces.staging.foo: unknown property');
    expect(configError('gitBranches:\n  main:\n    branch: x\n')).toContain('gitBranches.main.branch: unknown property');
  });

  it('checks specific items, overrides and their types strictly', () => {
    expect(configError('workspaces:\n  commonSpecificItems:\n    schedules: []\n')).toContain('workspaces.commonSpecificItems.schedules: unknown property');
    expect(configError('workspaces:\n  prod:\n    overrides:\n      skipNothing: true\n')).toContain('workspaces.prod.overrides.skipNothing: unknown property');
    expect(configError('workspaces:\n  prod:\n    specificItems:\n      settings: "yes"\n')).toContain('workspaces.prod.specificItems.settings');
  });

  it('accepts only bun or deno as defaultTs, and v1 as syncBehavior', () => {
    expect(configError('defaultTs: node\n')).toContain('defaultTs');
    expect(parseConfig('defaultTs: deno\n').config.defaultTs).toBe('deno');
    expect(configError('syncBehavior: v2\n')).toContain('syncBehavior');
  });

  it('reports YAML syntax errors as such', () => {
    expect(configError('includes: [\n')).toContain('not valid YAML');
  });

  it('takes skipSecrets as true unless said otherwise', () => {
    expect(effectiveOptions(parseConfig('{}').config, undefined).skipSecrets).toBe(true);
    expect(effectiveOptions(parseConfig('skipSecrets: false\n').config, undefined).skipSecrets).toBe(false);
  });

  it('writes an init file that is valid, commented, and uses the defaults', () => {
    const { config } = parseConfig(DEFAULT_SVC_YAML);
    expect(config.skipSecrets).toBe(true);
    expect(config.syncBehavior).toBe('v1');
    expect(DEFAULT_SVC_YAML.split('\n').filter((l) => l.trim().startsWith('#')).length).toBeGreaterThan(10);
  });

  it('publishes the JSON Schema generated from the validator', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
    const schema = JSON.parse(schemaText());
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.codebases.items.required).toEqual(['relative_path']);
    expect(schema.properties.workspaces.additionalProperties.additionalProperties).toBe(false);
  });
});

describe('workspaces', () => {
  const yaml = `
skipVariables: false
message: top
workspaces:
  main: {}
  staging:
    gitBranch: stage
    workspaceId: stg
    baseUrl: http://staging.example
    overrides:
      skipVariables: true
      message: staging push
    promotionOverrides:
      skipResources: true
    specificItems:
      resources: ["f/db/*"]
      settings: true
  commonSpecificItems:
    variables: ["f/shared/*"]
`;
  const { config } = parseConfig(yaml);

  it('defaults gitBranch and workspaceId to the entry name', () => {
    const main = workspaceEntries(config).find((e) => e.name === 'main')!;
    expect(main).toMatchObject({ gitBranch: 'main', workspaceId: 'main', baseUrl: undefined });
    expect(workspaceEntries(config).find((e) => e.name === 'staging')).toMatchObject({ gitBranch: 'stage', workspaceId: 'stg', baseUrl: 'http://staging.example' });
  });

  it('selects the entry by name, else by the current git branch', () => {
    expect(selectWorkspace(config, { gitBranch: 'stage' })?.name).toBe('staging');
    expect(selectWorkspace(config, { name: 'main', gitBranch: 'stage' })?.name).toBe('main');
    expect(selectWorkspace(config, { gitBranch: 'feature' })).toBeUndefined();
  });

  it('lets overrides replace top-level options for that workspace only', () => {
    const staging = selectWorkspace(config, { name: 'staging' });
    expect(effectiveOptions(config, staging)).toMatchObject({ skipVariables: true, message: 'staging push' });
    expect(effectiveOptions(config, selectWorkspace(config, { name: 'main' }))).toMatchObject({ skipVariables: false, message: 'top' });
  });

  it('applies promotionOverrides of the promotion branch, from the flag or the promotion option', () => {
    const main = selectWorkspace(config, { name: 'main' });
    expect(effectiveOptions(config, main).skipResources).toBeUndefined();
    expect(effectiveOptions(config, main, 'stage').skipResources).toBe(true);
    expect(effectiveOptions(parseConfig(yaml + 'promotion: stage\n').config, main).skipResources).toBe(true);
    expect(() => effectiveOptions(config, main, 'nowhere')).toThrow(/no workspace .* has git branch nowhere/);
  });

  it('merges commonSpecificItems into every workspace', () => {
    expect(specificItemsOf(config, selectWorkspace(config, { name: 'staging' }))).toMatchObject({ variables: ['f/shared/*'], resources: ['f/db/*'], settings: true });
    expect(specificItemsOf(config, selectWorkspace(config, { name: 'main' }))).toMatchObject({ variables: ['f/shared/*'], resources: [], settings: false });
  });

  it('requires the current git branch to be configured unless skipBranchValidation', () => {
    expect(() => validateBranch(config, effectiveOptions(config, undefined), 'feature')).toThrow(/feature is not configured/);
    expect(() => validateBranch(config, effectiveOptions(config, undefined), 'stage')).not.toThrow();
    const skipping = parseConfig(yaml + 'skipBranchValidation: true\n').config;
    expect(() => validateBranch(skipping, effectiveOptions(skipping, undefined), 'feature')).not.toThrow();
    // Outside a git repository there is no branch to check.
    expect(() => validateBranch(config, effectiveOptions(config, undefined), null)).not.toThrow();
  });

  it('accepts the deprecated gitBranches and environments with a warning, meaning the same', () => {
    for (const key of ['gitBranches', 'environments']) {
      const loaded = parseConfig(yaml.replace('workspaces:', `${key}:`));
      expect(loaded.warnings.join()).toContain(`${key} is deprecated`);
      expect(workspaceEntries(loaded.config).map((e) => e.name)).toEqual(['main', 'staging']);
      expect(effectiveOptions(loaded.config, selectWorkspace(loaded.config, { gitBranch: 'stage' })).skipVariables).toBe(true);
    }
    expect(parseConfig(yaml).warnings).toEqual([]);
  });

  it('parses the init file as YAML with every documented top-level key known', () => {
    const keys = Object.keys(parseYaml(DEFAULT_SVC_YAML));
    expect(keys).toContain('parallel');
  });
});
