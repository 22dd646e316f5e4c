import { describe, expect, it } from 'vitest';
import {
  approvalRefusal,
  approvalsReceived,
  approvedAlready,
  FLOW_LEVEL,
  gateRules,
  resumeIdUsed,
  tallyGate,
  stepRules,
  tallyApprovals,
  type StepRules,
} from '../../../functions/core/approvals/approval-count.js';
import { suspendSettings } from '../../../functions/core/flows/definition.js';
import type { Approval, FlowRun, StepEvents } from '../../../functions/core/flows/run-state.js';

/**
 * The one function that decides which approvals of a suspend step or a ConsentGate count
 * (approval-count.ts), on its own: every channel (resume URLs, the approval page, chat, the inbox, the interpreter) goes
 * through it, so its rules are checked here once, without a service.
 */

let nextId = 1;
const approval = (approver: string, logged_in = true): Approval => ({ resume_id: nextId++, approver, payload: { by: approver }, at: '2026-01-01T00:00:00Z', logged_in });
const events = (...approvals: Approval[]): StepEvents => ({ approvals });
const NONE = events();
const standing = (member = true, listed = false) => ({ member, listed });
const everyone = (names: string[], listed = false) => new Map(names.map((n) => [n, standing(true, listed)]));

const open = (required = 1): StepRules => stepRules(suspendSettings.parse({ required_events: required }), [], 'tess');

describe('stepRules', () => {
  it('requires a login when the step asks for one, refuses self-approval or names groups', () => {
    expect(stepRules(suspendSettings.parse({}), [], 'tess').loginRequired).toBe(false);
    expect(stepRules(suspendSettings.parse({ user_auth_required: true }), [], 'tess').loginRequired).toBe(true);
    expect(stepRules(suspendSettings.parse({ self_approval_disabled: true }), [], 'tess').loginRequired).toBe(true);
    expect(stepRules(suspendSettings.parse({}), ['finance'], 'tess').loginRequired).toBe(true);
    expect(stepRules(suspendSettings.parse({ required_events: 3 }), [], 'tess').required).toBe(3);
  });
});

describe('tallyApprovals', () => {
  it('waits until the required number of approvals, then approves with them in order', () => {
    const rules = open(2);
    const one = tallyApprovals(rules, events(approval('ann', false)), NONE, new Map());
    expect(one).toMatchObject({ outcome: 'waiting', cancel: null });
    expect(one.counted).toHaveLength(1);
    const two = tallyApprovals(rules, events(approval('ann', false), approval('bob', false)), NONE, new Map());
    expect(two.outcome).toBe('approved');
    expect(two.counted.map((a) => a.approver)).toEqual(['ann', 'bob']);
  });

  it('counts a person once when a login is required, and every URL when it is not', () => {
    const twice = events(approval('ann'), approval('ann'));
    expect(tallyApprovals(open(2), twice, NONE, new Map()).outcome).toBe('approved');
    const login = stepRules(suspendSettings.parse({ required_events: 2, user_auth_required: true }), [], 'tess');
    const tally = tallyApprovals(login, twice, NONE, new Map());
    expect(tally.counted.map((a) => a.approver)).toEqual(['ann']);
    expect(tally.outcome).toBe('waiting');
  });

  it('refuses the triggering user when the flow disables self-approval, and only then', () => {
    const self = events(approval('tess'));
    const pre = events(approval('tess'));
    const allowed = stepRules(suspendSettings.parse({ user_auth_required: true }), [], 'tess');
    expect(tallyApprovals(allowed, NONE, pre, everyone(['tess'])).outcome).toBe('approved');
    const disabled = stepRules(suspendSettings.parse({ self_approval_disabled: true }), [], 'tess');
    expect(approvalRefusal(disabled, 'tess', { loggedIn: true, ...standing() })).toBe('self_approval_disabled');
    const tally = tallyApprovals(disabled, NONE, pre, everyone(['tess']));
    expect(tally).toMatchObject({ outcome: 'waiting', eligiblePre: [] });
    // The step's own approvals were held to its rules when they were given (approvalBlocker).
    expect(tallyApprovals(disabled, self, NONE, new Map()).counted).toHaveLength(1);
  });

  it("holds pre-approvals to the step's group rule, login and membership", () => {
    const finance = stepRules(suspendSettings.parse({ user_groups_required: { type: 'static', value: 'finance' } }), ['finance'], 'tess');
    const pre = events(approval('fay'), approval('olga'), approval('anon', false), approval('gone'));
    const standings = new Map([
      ['fay', standing(true, true)],
      ['olga', standing(true, false)],
      ['anon', standing(true, true)],
      ['gone', standing(false, true)],
    ]);
    const tally = tallyApprovals(finance, NONE, pre, standings);
    expect(tally.eligiblePre.map((a) => a.approver)).toEqual(['fay']);
    expect(tally.outcome).toBe('approved');
    expect(approvalRefusal(finance, 'olga', { loggedIn: true, ...standing(true, false) })).toBe('not_in_group');
    expect(approvalRefusal(finance, 'anon', { loggedIn: false, ...standing(true, true) })).toBe('login_required');
    expect(approvalRefusal(finance, 'gone', { loggedIn: true, ...standing(false, true) })).toBe('unknown_member');
    // Without any rule, whoever holds a URL counts, logged in or not.
    expect(tallyApprovals(open(4), NONE, pre, new Map()).eligiblePre).toHaveLength(4);
  });

  it('counts accepted pre-approvals before the step\'s own, a person once', () => {
    const login = stepRules(suspendSettings.parse({ required_events: 2, user_auth_required: true }), [], 'tess');
    const early = approval('ann');
    const tally = tallyApprovals(login, events(approval('ann'), approval('bob')), events(early), everyone(['ann']));
    expect(tally.counted[0]).toBe(early);
    expect(tally.counted.map((a) => a.approver)).toEqual(['ann', 'bob']);
    expect(tally.outcome).toBe('approved');
  });

  it("ends the wait on a rejection (a cancel of the step or of the flow's pre-approvals), whatever the count", () => {
    const cancel = { by: 'bob', reason: 'no', at: '2026-01-01T00:00:00Z' };
    const enough = events(approval('ann', false), approval('cid', false));
    expect(tallyApprovals(open(1), { ...enough, cancel }, NONE, new Map())).toMatchObject({ outcome: 'canceled', cancel });
    expect(tallyApprovals(open(1), enough, { approvals: [], cancel }, new Map())).toMatchObject({ outcome: 'canceled', cancel });
  });
});

describe('what the views count', () => {
  const run = (events: FlowRun['events'], preApprovals?: number) =>
    ({ events, step: { kind: 'suspend', module: 'ask', resume_job: 'step-1', required: 2, deadline: null, pre_approvals: preApprovals }, consumed: [7] }) as unknown as FlowRun;

  it("shows a step's own approvals plus the pre-approvals its last tally accepted", () => {
    const r = run({ 'step-1': events(approval('ann')), [FLOW_LEVEL]: events(approval('bob'), approval('cid')) }, 1);
    expect(approvalsReceived(r, 'step-1')).toBe(2);
    expect(approvalsReceived(r, FLOW_LEVEL)).toBe(2);
    expect(approvalsReceived(r, 'other-step')).toBe(0);
  });

  it('knows who approved already and which resume ids are used', () => {
    const anon = approval('dan', false);
    const r = run({ 'step-1': events(approval('ann'), anon), [FLOW_LEVEL]: events(approval('bob')) });
    expect(approvedAlready(r, 'step-1', 'ann')).toBe(true);
    expect(approvedAlready(r, 'step-1', 'bob')).toBe(true);
    // Naming someone in a URL is not their login.
    expect(approvedAlready(r, 'step-1', 'dan')).toBe(false);
    expect(approvedAlready(r, FLOW_LEVEL, 'ann')).toBe(false);
    expect(resumeIdUsed(r, anon.resume_id)).toBe(true);
    expect(resumeIdUsed(r, 7)).toBe(true);
    expect(resumeIdUsed(r, 999_999)).toBe(false);
  });
});

describe('a ConsentGate under the same rules', () => {
  const gate = gateRules('pay', { approvers: ['nina', 'role:admin', 'group:finance'], self_approval: false }, 'nina');
  const at = '2026-01-01T00:00:00Z';

  it('lets only a logged-in member among its approvers decide, and not the triggering user unless allowed', () => {
    expect(gate.loginRequired).toBe(true);
    expect(approvalRefusal(gate, 'olga', { loggedIn: true, ...standing(true, false) })).toBe('not_an_approver');
    expect(approvalRefusal(gate, 'fiona', { loggedIn: true, ...standing(true, true) })).toBeNull();
    expect(approvalRefusal(gate, 'nina', { loggedIn: true, ...standing(true, true) })).toBe('self_approval_disabled');
    expect(approvalRefusal(gate, 'fiona', { loggedIn: false, ...standing(true, true) })).toBe('login_required');
    expect(approvalRefusal(gate, 'gone', { loggedIn: true, ...standing(false, true) })).toBe('unknown_member');
    const allowed = gateRules('pay', { approvers: ['nina'], self_approval: true }, 'nina');
    expect(approvalRefusal(allowed, 'nina', { loggedIn: true, ...standing(true, true) })).toBeNull();
  });

  it('counts its one decision: approved, rejected (by a person or the deadline), or still waiting', () => {
    expect(tallyGate(gate, undefined).outcome).toBe('waiting');
    const approved = tallyGate(gate, { decision: 'approved', approver: 'fiona', reason: '', at });
    expect(approved.outcome).toBe('approved');
    expect(approved.counted.map((a) => a.approver)).toEqual(['fiona']);
    expect(tallyGate(gate, { decision: 'rejected', approver: 'fiona', reason: 'duplicate', at }).outcome).toBe('canceled');
    expect(tallyGate(gate, { decision: 'rejected', approver: null, reason: 'timeout', at }).cancel).toEqual({ by: 'timeout', reason: 'timeout', at });
  });
});
