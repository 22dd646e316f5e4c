import type { ChatMessage } from '../flows/run-state.js';

/**
 * The Block Kit the service posts (README: Chat approvals): the message with Approve / Reject
 * buttons, the message once decided (no buttons, who and when), and the modals: the step's
 * `resume_form` fields in `order`, prefilled, with selects for enums; a reason for rejecting a
 * ConsentGate. Only the buttons' `value` and a modal's `private_metadata` come back from Slack:
 * they carry `<flow job>.<message id>`, naming the message record and nothing secret.
 */

export const APPROVE = 'svc_approve';
export const REJECT = 'svc_reject';
export const FORM_CALLBACK = 'svc_approval_form';
export const REASON_CALLBACK = 'svc_reject_reason';
/** The block and action ids of the reason field in the reject modal. */
export const REASON_FIELD = 'reason';
const FIELD_ACTION = 'value';

type Block = Record<string, unknown>;

/** Slack's mrkdwn treats these three as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const plain = (text: string) => ({ type: 'plain_text', text: text.slice(0, 150) || ' ', emoji: false });
const textSection = (text: string): Block => ({ type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(text).slice(0, 3000) || ' ' } });

export function buttonValue(flowJobId: string, messageId: string): string {
  return `${flowJobId}.${messageId}`;
}

export function parseButtonValue(value: unknown): { flowJobId: string; messageId: string } | null {
  const m = typeof value === 'string' ? value.match(/^([0-9a-f-]{36})\.([a-z0-9]{16})$/) : null;
  return m ? { flowJobId: m[1], messageId: m[2] } : null;
}

/** `reject: false` for a step with `hide_cancel`: it can only be approved. */
export function approvalMessage(text: string, value: string, opts: { reject: boolean } = { reject: true }): { text: string; blocks: Block[] } {
  return {
    text: text.slice(0, 3000),
    blocks: [
      textSection(text),
      {
        type: 'actions',
        block_id: 'svc_decision',
        elements: [
          { type: 'button', action_id: APPROVE, text: plain('Approve'), style: 'primary', value },
          ...(opts.reject ? [{ type: 'button', action_id: REJECT, text: plain('Reject'), style: 'danger', value }] : []),
        ],
      },
    ],
  };
}

/** The message once decided: its text, then who decided and when; the buttons are gone. */
export function decidedMessage(message: ChatMessage, outcome: string): { text: string; blocks: Block[] } {
  return {
    text: `${message.text.slice(0, 2500)}\n${outcome}`,
    blocks: [textSection(message.text), { type: 'context', elements: [{ type: 'mrkdwn', text: escapeMrkdwn(outcome).slice(0, 3000) }] }],
  };
}

export interface FormSchema {
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  order?: string[];
}

/** Slack allows 100 blocks in a modal and 100 options in a select. */
const MAX_FIELDS = 100;
const MAX_OPTIONS = 100;

export function formModal(schema: FormSchema, message: ChatMessage, value: string): Block {
  const names = fieldOrder(schema).slice(0, MAX_FIELDS);
  return {
    type: 'modal',
    callback_id: FORM_CALLBACK,
    private_metadata: value,
    title: plain('Approve'),
    submit: plain('Approve'),
    close: plain('Cancel'),
    blocks: [textSection(message.text), ...names.map((name) => fieldBlock(name, schema.properties[name] ?? {}, (schema.required ?? []).includes(name), message))],
  };
}

export function reasonModal(message: ChatMessage, value: string): Block {
  return {
    type: 'modal',
    callback_id: REASON_CALLBACK,
    private_metadata: value,
    title: plain('Reject'),
    submit: plain('Reject'),
    close: plain('Cancel'),
    blocks: [
      textSection(message.text),
      { type: 'input', block_id: REASON_FIELD, label: plain('Reason'), element: { type: 'plain_text_input', action_id: FIELD_ACTION, multiline: true, max_length: 2000 } },
    ],
  };
}

/** The fields in `order`, then any the order leaves out. */
function fieldOrder(schema: FormSchema): string[] {
  const all = Object.keys(schema.properties ?? {});
  const ordered = (schema.order ?? []).filter((n) => all.includes(n));
  return [...ordered, ...all.filter((n) => !ordered.includes(n))];
}

function fieldBlock(name: string, property: Record<string, unknown>, required: boolean, message: ChatMessage): Block {
  const label = plain(typeof property.description === 'string' && property.description ? property.description : name);
  const prefill = message.default_args[name] ?? property.default;
  const choices = message.enums[name] ?? (Array.isArray(property.enum) ? property.enum.map(String) : null);
  let element: Block;
  if (choices || property.type === 'boolean') {
    const values = choices ?? ['true', 'false'];
    const options = values.slice(0, MAX_OPTIONS).map((v) => ({ text: plain(v), value: v.slice(0, 150) }));
    const initial = prefill === undefined ? undefined : options.find((o) => o.value === String(prefill));
    element = { type: 'static_select', action_id: FIELD_ACTION, options, ...(initial ? { initial_option: initial } : {}) };
  } else if (property.type === 'number' || property.type === 'integer') {
    element = { type: 'number_input', action_id: FIELD_ACTION, is_decimal_allowed: property.type === 'number', ...(typeof prefill === 'number' ? { initial_value: String(prefill) } : {}) };
  } else {
    element = { type: 'plain_text_input', action_id: FIELD_ACTION, ...(prefill !== undefined && prefill !== null ? { initial_value: typeof prefill === 'string' ? prefill : JSON.stringify(prefill) } : {}) };
  }
  return { type: 'input', block_id: name, label, optional: !required, element };
}

/**
 * The values of a submitted modal, typed as the form's schema says; a field left empty is left
 * out. `null` when the state is not the shape Slack sends.
 */
export function submittedValues(schema: FormSchema | null, state: unknown): Record<string, unknown> | null {
  if (!isRecord(state) || !isRecord(state.values)) return null;
  const out: Record<string, unknown> = {};
  for (const [block, actions] of Object.entries(state.values)) {
    const input = isRecord(actions) ? actions[FIELD_ACTION] : undefined;
    if (!isRecord(input)) return null;
    const raw = isRecord(input.selected_option) ? input.selected_option.value : input.value;
    if (raw === undefined || raw === null || raw === '') continue;
    if (typeof raw !== 'string') return null;
    const type = schema?.properties?.[block]?.type;
    if (type === 'number' || type === 'integer') {
      const n = Number(raw);
      out[block] = Number.isFinite(n) ? n : raw;
    } else if (type === 'boolean') out[block] = raw === 'true';
    else out[block] = raw;
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
