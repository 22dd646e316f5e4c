import { approveStep, rejectStep } from './console-api.js';
import { collectFields, fillDatetimes } from './form-fields.js';
import { byId, messageOf } from './page-helpers.js';
import type { ResumeOutcomeView } from '../../../core/views/approval-views.js';

/**
 * A suspended step's approval page (`/approve/...`, approval-page.ts renders it): Approve posts
 * the form's typed values to the step's signed resume URL and shows the approvals the API counted
 * (read as ResumeOutcomeView); Cancel rejects through the cancel URL. Both URLs come from the
 * body's data attributes, which the server wrote. Bundled by bin/build.js
 * (console-assets/approval-page.js).
 */

const data = document.body.dataset;
const form = byId<HTMLFormElement>('approval-form');
const actions = byId('actions');
const cancelArea = document.getElementById('cancel-area');
const status = byId('status');

function show(message: string, kind: 'ok' | 'error'): void {
  status.textContent = message;
  status.className = 'status ' + kind;
  status.hidden = false;
}

function setBusy(busy: boolean): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>('#actions button, #cancel-area button')) b.disabled = busy;
}

function finish(): void {
  actions.hidden = true;
  if (cancelArea) cancelArea.hidden = true;
  for (const el of form.querySelectorAll<HTMLInputElement>('[data-field]')) el.disabled = true;
}

function failed(error: unknown): void {
  setBusy(false);
  show('Error: ' + messageOf(error), 'error');
}

/** The counts the page shows, from what the approval answered. */
function showCounts(outcome: ResumeOutcomeView): void {
  const { approvals_received: received, approvals_required: required } = outcome;
  byId('approvals-received').textContent = String(received);
  byId('approvals-required').textContent = String(required);
  finish();
  show('Approved. ' + received + ' of ' + required + ' approvals received' + (received >= required ? '; the flow resumes.' : '.'), 'ok');
}

fillDatetimes(form);
form.addEventListener('submit', (event) => {
  event.preventDefault();
  let values: Record<string, unknown>;
  try {
    values = collectFields(form);
  } catch (e) {
    show(messageOf(e), 'error');
    return;
  }
  setBusy(true);
  approveStep(data.resumeUrl ?? '', values).then(showCounts, failed);
});

const cancel = document.getElementById('cancel');
const cancelUrl = data.cancelUrl;
if (cancel && cancelUrl)
  cancel.addEventListener('click', () => {
    const reason = (document.getElementById('cancel-reason') as HTMLInputElement | null)?.value.trim() ?? '';
    setBusy(true);
    rejectStep(cancelUrl, reason).then(() => {
      finish();
      show('Canceled. The flow does not resume from this step.', 'ok');
    }, failed);
  });
