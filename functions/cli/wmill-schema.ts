/**
 * A script's input schema as a Windmill folder stores it in `.script.yaml`, against the one svc
 * infers from `main`: they agree when they name the same properties with the same type, format
 * (resource types: `resource-<name>`), enum and default, and require the same ones. Windmill writes
 * `default: null` and `description: ''` where nothing is set; those mean "unset" here too.
 */

type Schema = { properties?: Record<string, Record<string, unknown>>; required?: unknown[] };

const COMPARED = ['type', 'format', 'enum', 'default'] as const;

const unset = (v: unknown) => v === undefined || v === null;
const same = (a: unknown, b: unknown) => (unset(a) && unset(b)) || JSON.stringify(a) === JSON.stringify(b);

/** What differs, one phrase each (`n: default 2 here, 3 inferred`); empty when they agree. */
export function schemaDifferences(stored: Schema, inferred: Schema): string[] {
  const out: string[] = [];
  const a = stored.properties ?? {};
  const b = inferred.properties ?? {};
  for (const name of Object.keys(a)) if (!(name in b)) out.push(`${name}: not a parameter of main`);
  for (const name of Object.keys(b)) if (!(name in a)) out.push(`${name}: missing from the stored schema`);
  for (const name of Object.keys(a).filter((n) => n in b)) {
    for (const key of COMPARED) {
      if (!same(a[name][key], b[name][key])) out.push(`${name}: ${key} ${JSON.stringify(a[name][key] ?? null)} stored, ${JSON.stringify(b[name][key] ?? null)} inferred`);
    }
  }
  const req = (s: Schema) => [...new Set((s.required ?? []).map(String))].sort();
  if (!same(req(stored), req(inferred))) out.push(`required ${JSON.stringify(req(stored))} stored, ${JSON.stringify(req(inferred))} inferred`);
  return out;
}
