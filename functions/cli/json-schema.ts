import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { svcYaml } from './config-schema.js';
import { findInPackage } from './package-root.js';

/**
 * The JSON Schema of svc.yaml, generated from the validator itself, so editors complete and check
 * exactly what the CLI accepts. `npm run schema` rewrites schemas/svc.yaml.schema.json; a test
 * fails when the committed file differs from what this generates.
 */
export const SCHEMA_FILE = findInPackage(import.meta.dirname, 'schemas/svc.yaml.schema.json') ?? resolve(import.meta.dirname, '../../schemas/svc.yaml.schema.json');

export function svcYamlJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(svcYaml, { io: 'input' }),
    title: 'svc.yaml',
    description: 'Configuration of svc sync pull / push (spec 2.9)',
  };
}

export const schemaText = () => JSON.stringify(svcYamlJsonSchema(), null, 2) + '\n';

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(SCHEMA_FILE, schemaText());
  console.log(`wrote ${SCHEMA_FILE}`);
}
