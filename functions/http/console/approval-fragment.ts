import { html, type Markup } from '../html.js';
import { renderFormFields, type ResumeFormSchema } from '../approval-form.js';
import type { WaitingGate, WaitingStep } from '../../core/approvals/approvals-inbox.js';

/**
 * The approve / reject form of a run page: what the approvals inbox would offer this person for
 * this run (core/approvals/approvals-inbox.ts decides), or nothing. Markup only; the run page's script
 * posts it to the consent endpoint or to the resume / cancel URL signed for this person.
 */
export function approvalFragment(waiting: { gate: WaitingGate | null; step: WaitingStep | null }): string {
  const parts: Markup[] = [];
  const g = waiting.gate;
  if (g) {
    parts.push(html`<section aria-label="Decision"><h2>Waiting for your decision</h2><p>${g.message}</p>
<form data-gate="true"><label for="decision_reason">Reason</label><textarea id="decision_reason" name="decision_reason"></textarea>
<button type="submit" value="approved">Approve</button> <button type="submit" value="rejected" class="danger">Reject</button><p role="status"></p></form></section>`);
  }
  const s = waiting.step;
  if (s) {
    const v = s.view;
    const schema: ResumeFormSchema | null = v.formSchema && typeof v.formSchema.properties === 'object' ? v.formSchema : null;
    parts.push(html`<section aria-label="Approval"><h2>Waiting for your approval: step ${v.stepSummary || v.stepId}</h2>
<p class="muted">${v.approvalsReceived} of ${v.approvalsRequired} approvals received${s.deadline ? html`; decide before ${s.deadline}` : ''}</p>
<form data-resume="${s.resume_url}"${s.cancel_url ? html` data-cancel="${s.cancel_url}"` : ''}>
${schema ? renderFormFields(schema, v.defaultArgs ?? {}, v.enums ?? {}, 'approval') : ''}
${s.cancel_url ? html`<label for="decision_reason">Reason for a rejection</label><textarea id="decision_reason" name="decision_reason"></textarea>` : ''}
<button type="submit" value="approved">Approve</button>${s.cancel_url ? html` <button type="submit" value="rejected" class="danger" formnovalidate>Reject</button>` : ''}<p role="status"></p></form></section>`);
  }
  return parts.map(String).join('');
}
