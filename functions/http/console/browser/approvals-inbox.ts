import { approveStep, decideConsent, rejectStep } from './console-api.js';
import { collectFields, fillDatetimes } from './form-fields.js';
import { messageOf } from './page-helpers.js';
import type { ResumeOutcomeView } from '../../../core/views/approval-views.js';

/**
 * The approvals inbox (`/approvals`, approvals-inbox-page.ts renders it): each ConsentGate's form
 * decides through the consent endpoint, each approval step's form approves through its signed
 * resume URL and rejects through its cancel URL, all through the typed API client, so the count
 * an approval answers is read as the API's view types it. Bundled for the browser by
 * bin/build.js (console-assets/approvals-inbox.js). URLs and run ids come from the forms' data
 * attributes, which the server wrote.
 */

function statusOf(form: HTMLFormElement): HTMLElement {
  return form.querySelector<HTMLElement>('[role=status]') ?? form;
}

function reasonOf(form: HTMLFormElement): string {
  return form.querySelector<HTMLTextAreaElement>('textarea[name=decision_reason]')?.value.trim() ?? '';
}

function done(form: HTMLFormElement, text: string): void {
  statusOf(form).textContent = text;
  for (const el of form.querySelectorAll<HTMLButtonElement | HTMLTextAreaElement | HTMLInputElement | HTMLSelectElement>('button, textarea, input, select')) el.disabled = true;
}

/** What an approval says it counted: the step goes on once the required number is reached. */
export function approvedText(outcome: ResumeOutcomeView): string {
  const { approvals_received: received, approvals_required: required } = outcome;
  return 'Approved: ' + received + ' of ' + required + ' approvals received' + (received >= required ? '; the flow goes on.' : '.');
}

function decision(event: SubmitEvent): 'approved' | 'rejected' {
  return (event.submitter as HTMLButtonElement | null)?.value === 'rejected' ? 'rejected' : 'approved';
}

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-run]')) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = decision(event);
    decideConsent(form.dataset.run ?? '', chosen, reasonOf(form))
      .then(() => done(form, chosen === 'approved' ? 'Approved: the run goes on.' : 'Rejected: the run failed.'))
      .catch((e: unknown) => (statusOf(form).textContent = messageOf(e)));
  });
}

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-resume]')) {
  fillDatetimes(form);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const status = statusOf(form);
    if (decision(event) === 'rejected') {
      rejectStep(form.dataset.cancel ?? '', reasonOf(form))
        .then(() => done(form, 'Rejected: the flow is canceled.'))
        .catch((e: unknown) => (status.textContent = messageOf(e)));
      return;
    }
    let values: Record<string, unknown>;
    try {
      values = collectFields(form);
    } catch (e) {
      status.textContent = messageOf(e);
      return;
    }
    approveStep(form.dataset.resume ?? '', values)
      .then((outcome) => done(form, approvedText(outcome)))
      .catch((e: unknown) => (status.textContent = messageOf(e)));
  });
}
