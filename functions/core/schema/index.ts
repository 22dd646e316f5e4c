/**
 * Infers the input schema of a script from its source, as Windmill does: the parameters of
 * `main` (TypeScript, Python) or the positional arguments a bash script names. The schema drives
 * argument forms and tells runners which arguments to pass, in which order.
 */
import type { InputSchema, Language } from '../../ports.js';
import { bashParams } from './bash.js';
import { goParams } from './go.js';
import { toInputSchema, type ParamInfo } from './build.js';
import { SchemaInferenceError } from './errors.js';
import { pythonParams } from './python.js';
import { typeScriptParams } from './typescript.js';

export { NoMainError, SchemaInferenceError } from './errors.js';
export { JSON_SCHEMA_DRAFT } from './build.js';

const PARSERS: Record<Language, (content: string) => ParamInfo[]> = {
  bun: typeScriptParams,
  deno: typeScriptParams,
  nativets: typeScriptParams,
  python3: pythonParams,
  bash: bashParams,
  go: goParams,
};

/** @throws SchemaInferenceError when the source declares no `main` or a parameter cannot be read. */
export function inferSchema(language: Language, content: string): InputSchema {
  try {
    return toInputSchema(PARSERS[language](content));
  } catch (err) {
    // The parsers recurse into brackets: absurd nesting overflows the stack. That is the
    // script's problem, so it gets the same clear 400 as any other unreadable signature.
    if (err instanceof RangeError) {
      throw new SchemaInferenceError('cannot read the parameters of main: brackets are nested too deeply');
    }
    throw err;
  }
}
