import type { ChatMessage } from '../flows/run-state.js';
import type { FormSchema } from './slack-blocks.js';

/**
 * The Adaptive Cards the service posts to Teams (README: Chat approvals): the message, the step's
 * form fields as inputs (in `order`, prefilled, choices for enums), and Approve / Reject as
 * `Action.Execute` (Universal Actions), whose `data.svc_ref` names the message record
 * (`<flow job>.<message id>`, nothing secret). Once decided, the card is replaced by its outcome.
 */

export const REF = 'svc_ref';
export const APPROVE_VERB = 'svc_approve';
export const REJECT_VERB = 'svc_reject';
export const REASON_INPUT = 'svc_reason';
const SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';

type Element = Record<string, unknown>;

export function approvalCard(message: ChatMessage, ref: string, form: FormSchema | null, opts: { reject: boolean }): Element {
  return {
    type: 'AdaptiveCard',
    $schema: SCHEMA,
    version: '1.4',
    body: [{ type: 'TextBlock', text: message.text, wrap: true }, ...(form ? formInputs(form, message) : [])],
    actions: [
      { type: 'Action.Execute', title: 'Approve', verb: APPROVE_VERB, style: 'positive', data: { [REF]: ref } },
      ...(opts.reject ? [{ type: 'Action.Execute', title: 'Reject', verb: REJECT_VERB, style: 'destructive', data: { [REF]: ref } }] : []),
    ],
  };
}

/** A ConsentGate's card: its message, a reason (which a rejection needs), Approve and Reject. */
export function gateCard(message: ChatMessage, ref: string): Element {
  return {
    type: 'AdaptiveCard',
    $schema: SCHEMA,
    version: '1.4',
    body: [{ type: 'TextBlock', text: message.text, wrap: true }, { type: 'Input.Text', id: REASON_INPUT, label: 'Reason (a rejection needs one)', isMultiline: true, maxLength: 2000 }],
    actions: [
      { type: 'Action.Execute', title: 'Approve', verb: APPROVE_VERB, style: 'positive', data: { [REF]: ref } },
      { type: 'Action.Execute', title: 'Reject', verb: REJECT_VERB, style: 'destructive', data: { [REF]: ref } },
    ],
  };
}

export function decidedCard(message: ChatMessage, outcome: string): Element {
  return { type: 'AdaptiveCard', $schema: SCHEMA, version: '1.4', body: [{ type: 'TextBlock', text: message.text, wrap: true }, { type: 'TextBlock', text: outcome, wrap: true, isSubtle: true }] };
}

/** A message activity carrying one Adaptive Card. */
export function cardActivity(card: Element): Element {
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: card }] };
}

function formInputs(form: FormSchema, message: ChatMessage): Element[] {
  const all = Object.keys(form.properties ?? {});
  const ordered = [...(form.order ?? []).filter((n) => all.includes(n)), ...all.filter((n) => !(form.order ?? []).includes(n))];
  return ordered.map((name) => {
    const p = form.properties[name] ?? {};
    const label = typeof p.description === 'string' && p.description ? p.description : name;
    const required = (form.required ?? []).includes(name);
    const prefill = message.default_args[name] ?? p.default;
    const choices = message.enums[name] ?? (Array.isArray(p.enum) ? p.enum.map(String) : p.type === 'boolean' ? ['true', 'false'] : null);
    const common = { id: name, label, isRequired: required, ...(required ? { errorMessage: `${label} is required` } : {}) };
    if (choices) return { type: 'Input.ChoiceSet', ...common, choices: choices.map((c) => ({ title: c, value: c })), ...(prefill !== undefined ? { value: String(prefill) } : {}) };
    if (p.type === 'number' || p.type === 'integer') return { type: 'Input.Number', ...common, ...(typeof prefill === 'number' ? { value: prefill } : {}) };
    return { type: 'Input.Text', ...common, ...(prefill !== undefined && prefill !== null ? { value: typeof prefill === 'string' ? prefill : JSON.stringify(prefill) } : {}) };
  });
}

/** The form's values from an invoke's `action.data` (Teams sends inputs as strings), typed by the schema; empty ones left out. */
export function cardValues(form: FormSchema | null, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(form?.properties ?? {})) {
    const raw = data[name];
    if (raw === undefined || raw === null || raw === '') continue;
    const type = form!.properties[name]?.type;
    if (type === 'number' || type === 'integer') {
      const n = typeof raw === 'number' ? raw : Number(raw);
      out[name] = Number.isFinite(n) ? n : raw;
    } else if (type === 'boolean') out[name] = raw === true || raw === 'true';
    else out[name] = typeof raw === 'string' ? raw : JSON.stringify(raw);
  }
  return out;
}
