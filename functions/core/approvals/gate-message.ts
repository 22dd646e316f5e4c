import { allModules, type FlowModule } from '../flows/definition.js';

/**
 * A ConsentGate's message template (spec 2.7): `{{ workflow.name }}` (the flow's summary, else
 * its path), `{{ run.triggered_by }}` and `{{ context.<key> }}` (a flow input by name, or an
 * earlier step's result by step id). Unknown keys render empty; the flow's create answer warns
 * about them. The text is plain: pages escape it when they show it.
 */

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g;

export interface GateMessageScope {
  workflowName: string;
  triggeredBy: string;
  /** Flow inputs and step results by name; step results win over inputs of the same name. */
  context: Record<string, unknown>;
}

/**
 * The longest rendered message, in characters: a placeholder may bring a flow input or a step
 * result of megabytes, and the message travels in every notice, where channels have limits of
 * their own (an SNS message is at most 256 KB, and a notice past it was never delivered). Past it
 * the message is cut between characters and says so.
 */
export const MAX_GATE_MESSAGE_CHARS = 20_000;

export function renderGateMessage(template: string, scope: GateMessageScope): string {
  return bounded(render(template, scope));
}

function bounded(message: string): string {
  if (message.length <= MAX_GATE_MESSAGE_CHARS) return message;
  const note = ` [... cut at ${MAX_GATE_MESSAGE_CHARS} characters]`;
  let end = MAX_GATE_MESSAGE_CHARS - note.length;
  // Never half a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(message[end - 1])) end--;
  return message.slice(0, end) + note;
}

function render(template: string, scope: GateMessageScope): string {
  return template.replace(PLACEHOLDER, (_, key: string) => {
    if (key === 'workflow.name') return scope.workflowName;
    if (key === 'run.triggered_by') return scope.triggeredBy;
    if (!key.startsWith('context.')) return '';
    const name = key.slice('context.'.length);
    if (!Object.hasOwn(scope.context, name)) return '';
    const value = scope.context[name];
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/**
 * The placeholders of each gate's message that can never have a value: neither a flow input of
 * the flow's schema nor a step placed before the gate. Said at create time, so a typo shows early.
 */
export function unknownMessageKeys(modules: readonly FlowModule[], inputNames: readonly string[]): string[] {
  const warnings: string[] = [];
  const seen: string[] = [];
  for (const m of allModules(modules)) {
    if (m.value.type === 'consentgate') {
      for (const [, key] of m.value.message.matchAll(PLACEHOLDER)) {
        const known = key === 'workflow.name' || key === 'run.triggered_by' || (key.startsWith('context.') && [...inputNames, ...seen].includes(key.slice('context.'.length)));
        if (!known) warnings.push(`module ${m.id}: message placeholder {{ ${key} }} is not known and will render empty`);
      }
    }
    seen.push(m.id);
  }
  return warnings;
}
