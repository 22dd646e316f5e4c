import { ApiError, badRequest } from '../common/errors.js';
import { APPROVE, FORM_CALLBACK, parseButtonValue, REASON_CALLBACK, REASON_FIELD, REJECT } from './slack-blocks.js';

/**
 * What Slack posts to the interactivity URL: a form-encoded body whose `payload` field holds the
 * interaction as JSON. Only the two kinds the service sends buttons and modals for are accepted: a
 * click on Approve / Reject (`block_actions`) and a submitted modal (`view_submission`).
 */

export type Interaction =
  | { kind: 'click'; action: 'approve' | 'reject'; flowJobId: string; messageId: string; slackUser: string; triggerId: string }
  | { kind: 'submit'; modal: 'form' | 'reason'; flowJobId: string; messageId: string; slackUser: string; state: unknown };

const invalid = (message: string) => badRequest('invalid_payload', message);

export function parseInteraction(rawBody: string): Interaction {
  const text = new URLSearchParams(rawBody).get('payload');
  if (!text) throw invalid('a Slack interaction is a form-encoded body with a payload field');
  let p: unknown;
  try {
    p = JSON.parse(text);
  } catch {
    throw invalid('payload: not JSON');
  }
  if (!isRecord(p)) throw invalid('payload: not a JSON object');
  const slackUser = isRecord(p.user) ? p.user.id : undefined;
  if (typeof slackUser !== 'string' || !/^[UW][A-Z0-9]{2,30}$/.test(slackUser)) throw invalid('payload.user.id: not a Slack user id');
  if (p.type === 'block_actions') {
    const action = Array.isArray(p.actions) ? p.actions[0] : undefined;
    if (!isRecord(action) || (action.action_id !== APPROVE && action.action_id !== REJECT)) throw unknownAction('payload.actions: no Approve or Reject button of this service');
    const ref = parseButtonValue(action.value);
    if (!ref) throw unknownAction('payload.actions.0.value: not a chat approval of this service');
    if (typeof p.trigger_id !== 'string' || !p.trigger_id) throw invalid('payload.trigger_id: missing');
    return { kind: 'click', action: action.action_id === APPROVE ? 'approve' : 'reject', ...ref, slackUser, triggerId: p.trigger_id };
  }
  if (p.type === 'view_submission') {
    const view = isRecord(p.view) ? p.view : {};
    if (view.callback_id !== FORM_CALLBACK && view.callback_id !== REASON_CALLBACK) throw unknownAction('payload.view.callback_id: not a modal of this service');
    const ref = parseButtonValue(view.private_metadata);
    if (!ref) throw unknownAction('payload.view.private_metadata: not a chat approval of this service');
    return { kind: 'submit', modal: view.callback_id === FORM_CALLBACK ? 'form' : 'reason', ...ref, slackUser, state: view.state };
  }
  throw unknownAction(`payload.type: ${typeof p.type === 'string' ? p.type.slice(0, 50) : 'missing'} is not an interaction this service handles`);
}

/** The reason typed in the reject modal, trimmed; empty when none. */
export function submittedReason(state: unknown): string {
  const field = isRecord(state) && isRecord(state.values) && isRecord(state.values[REASON_FIELD]) ? state.values[REASON_FIELD].value : undefined;
  return isRecord(field) && typeof field.value === 'string' ? field.value.trim() : '';
}

function unknownAction(message: string): ApiError {
  return badRequest('invalid_payload', message);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
