import type { FlowModule, FlowValue } from './definition.js';
import type { InputSchema, Job } from '../../ports.js';

/**
 * The flow documents the Store keeps: a flow's versions (`flow_version`) and each flow job's run
 * state (`flow_run`). They live apart from the modules that use them because
 * documents/entity-values.ts names them to check stored values, and flows.ts, run-state.ts and the
 * approval modules read the store through store/entities.ts, which uses entity-values.ts: both
 * sides import this leaf, which imports only the flow definition's types and the ports.
 */

/** One version of a flow (`flow_version`, flows.ts); its id is global and increasing. */
export interface FlowVersion {
  id: number;
  path: string;
  summary: string;
  description: string;
  value: FlowValue;
  schema: InputSchema | null;
  /** Why this version was made (a CLI push records svc.yaml's `message`). */
  deployment_message?: string;
  created_by: string;
  created_at: string;
  /**
   * A test run's flow from the editor (flow-preview.ts), never saved: no path's history lists it and
   * no `fv/` URL runs it; it is kept only for that run (its steps, its run page).
   */
  preview?: true;
  /**
   * The lock of each inline step that imports packages, by step id (inline-step-locks.ts): beside
   * the definition, which stays as its author wrote it.
   */
  step_locks?: Record<string, string>;
}

/**
 * What a flow job has done so far, kept as the `flow_run` entity under the flow job's id and
 * changed only through optimistic updates (see advance.ts). Inline branches and loop iterations
 * are flow jobs of their own, whose run starts with their modules and the parent's scope.
 */

export interface Approval {
  resume_id: number;
  /** The logged-in user, else the `approver` named in the URL, else "anonymous". */
  approver: string;
  payload: unknown;
  at: string;
  /** Whether a logged-in user approved (not just someone holding the URL). */
  logged_in?: boolean;
}

/** Resume and cancel requests for one step job; they may arrive before the flow reaches them. */
export interface StepEvents {
  approvals: Approval[];
  cancel?: { by: string; reason: string; at: string };
  /** Set when the step's approval timeout passed before enough approvals arrived. */
  timed_out?: boolean;
  /** Set when enough approvals (its own and the pre-approvals it counted) resumed the flow. */
  resumed?: boolean;
}

/** How a ConsentGate was decided (spec 7.7); `approver` is null when it timed out. */
export interface GateDecision {
  decision: 'approved' | 'rejected';
  approver: string | null;
  reason: string;
  at: string;
}

/** One attempt to tell a gate's approvers, kept so a failed notice is visible and never silent. */
export interface GateDelivery {
  channel: 'email' | 'webhook' | 'sns' | 'chat';
  target: string;
  attempt: number;
  ok: boolean;
  at: string;
  error?: string;
}

/** A ConsentGate the run reached: its rendered message, deadline, deliveries and decision. */
export interface GateState {
  message: string;
  deadline: string | null;
  deliveries: GateDelivery[];
  /** `pending` from the write that reached the gate until every notice was tried (gate-notices.ts). */
  notices?: 'pending' | 'done';
  decision?: GateDecision;
}

/** A post or update of a chat message (with its retries); a failed post leaves the resume URLs working. */
export interface ChatDelivery {
  method: string;
  ok: boolean;
  at: string;
  error?: string;
}

/**
 * A chat message whose buttons decide an approval (core/chat): a suspend step's (one resume id per
 * message, so each message counts once) or a ConsentGate's. `ts` is the chat app's id of the posted
 * message (Slack's `ts`, Teams' activity id); null while, or when, posting did not succeed.
 */
export interface ChatMessage {
  id: string;
  platform: 'slack' | 'teams';
  /** The connection's path: its signing secret checks the callbacks, its token posts. */
  connection: string;
  /** The channel's id (Slack's channel id, Teams' conversation id: updates need it); `requested_channel` is what was asked for (an id or a name). */
  channel: string;
  requested_channel?: string;
  ts: string | null;
  target: { kind: 'step'; step_job: string; resume_id: number } | { kind: 'gate'; module: string };
  /** Only this svc user (username or email) may decide; null: the step's own rules alone. */
  approver: string | null;
  text: string;
  default_args: Record<string, unknown>;
  enums: Record<string, string[]>;
  deliveries: ChatDelivery[];
  decision?: { decision: 'approved' | 'rejected'; by: string; at: string; reason?: string };
}

/** Where a run's large id and flag lists are kept apart: the `flow_result` key of each (lists-apart.ts). */
export interface ListsApart {
  /** The children step's `jobs`. */
  jobs?: string;
  /** `child_jobs`, by module id. */
  child_jobs?: Record<string, string>;
}

export type FlowStep =
  /** Waiting for one job: a script step, a sub-flow or the chosen branch. */
  | { kind: 'child'; module: string; job: Job }
  /**
   * Waiting for several flow jobs: branchall branches or loop iterations. They are kept by id, with
   * which have ended, not as records: a turn then costs the same for the 400th iteration as for the
   * first (a record carries the iteration's arguments, often the whole list it iterates). A job
   * yet to be inserted is rebuilt from its run, stored before this step (`childJob`).
   */
  | {
      kind: 'children';
      module: string;
      jobs: string[];
      created_at: string;
      parallel: boolean;
      started: number;
      ended: boolean[];
      skip_failures: boolean[];
      /**
       * Stored only: every one before this index has ended, and `ended` starts there and stops at
       * `started` (the rest have not started, so not ended); a run read back has the whole list
       * (lists-apart.ts).
       */
      ended_before?: number;
      /** Stored only: every one's `skip_failures` is this (a loop's all are), and `skip_failures` is stored empty. */
      skip_all?: boolean;
    }
  /** A step with `suspend` finished and the flow waits for approvals (spec 3). */
  | {
      kind: 'suspend';
      module: string;
      resume_job: string;
      required: number;
      deadline: string | null;
      step_result: unknown;
      /** `user_groups_required` given as an expression (another node's output), evaluated once. */
      groups?: string[];
      /** Pre-approvals the step's rules accept, as counted at its last settling. */
      pre_approvals?: number;
    }
  /** A ConsentGate waits for one decision (spec 1.4, 2.7); its state is in `gates`. */
  | { kind: 'gate'; module: string; deadline: string | null }
  /**
   * The flow waits, holding no worker, until `until`: before the next attempt of a failed step
   * (`retry`, the step is started again) or after a step with `sleep` (the flow goes on).
   */
  | { kind: 'wait'; module: string; until: string; reason: 'retry' | 'sleep' }
  /** A while loop runs iteration `iteration` (a flow job); `results` are the earlier ones'. */
  /** `results_apart`: the iterations' results kept apart (by index, results-apart.ts); null in `results` when stored. */
  /** `results_chars`: their size together in characters of JSON (children-step.ts, COLLECTED_RESULTS_FACTOR). */
  | { kind: 'while'; module: string; job: Job; iteration: number; results: unknown[]; results_apart?: Record<string, string>; results_chars?: number };

/** One attempt of a step with `retry`: which, its job, how it ended, and when the next one starts. */
export interface StepAttempt {
  attempt: number;
  job: string | null;
  status: 'success' | 'failed';
  at: string;
  error?: unknown;
  /** When the next attempt starts; absent when this one was the last. */
  retry_at?: string;
}

/** How a `stop_after_if` (or a loop's `stop_after_all_iters_if`) ended the flow. */
export interface FlowStop {
  module: string;
  /** `skip_if_stopped`: the flow ended successfully, shown as skipped. */
  skipped: boolean;
  error_message?: string;
}

/** The flow failed and its `failure_module` runs (or ran): what failed, as the module receives it. */
export interface FlowFailure {
  /** The failed step's result (its error in `error`), the failure module's `previous_result`. */
  result: unknown;
  step_id: string;
  started: boolean;
  /** How the flow ends once the failure module ran: `canceled` when an approval step was canceled or timed out (spec 3). */
  status?: 'failed' | 'canceled';
}

/**
 * A flow job's run as the interpreter works on it: its modules and every decision so far. It is
 * stored as a `FlowRunDocument` (flow-run-document.ts): the modules, which never change during a
 * run, stay in the flow version and the document names them by `modules_at`.
 */
export interface FlowRun {
  flow_job: string;
  /** The flow version the code comes from (for inline scripts). */
  version: number;
  path: string;
  modules: FlowModule[];
  /**
   * Where `modules` are in the flow version (`value.modules`, or a branch's or loop's list such as
   * `value.modules.2.value.branches.0.modules`). Runs stored before it existed carry their modules.
   */
  modules_at?: string;
  flow_input: Record<string, unknown>;
  /**
   * A branch's or iteration's input is its enclosing run's input (`job`) with a few keys of its own
   * (`keys`: an iteration's `iter`): its document holds only those, as a loop over the flow's 1,000
   * input items held them 1,000 times over (flow-run-document.ts).
   */
  input_from?: { job: string; keys: string[] };
  /** Results of the enclosing flow's steps, visible to an inline branch or iteration. */
  outer_results: Record<string, unknown>;
  /**
   * The enclosing flow job whose results (its own and those it sees) are `outer_results`: a branch's
   * or iteration's document names it instead of holding a copy, which for a loop over a step's
   * 1,000 records was 1,000 copies of them. Its results do not change while it waits on this run.
   */
  outer_from?: string;
  results: Record<string, unknown>;
  /**
   * The results kept apart from the stored run, by module id: the `flow_result` each is in
   * (results-apart.ts). A run read from the store has them back in `results`.
   */
  results_apart?: Record<string, string>;
  previous_result: unknown;
  /** The `flow_result` that `previous_result` is kept in, when it is kept apart. */
  previous_apart?: string;
  /** The `flow_result` that `flow_input` is kept in, when it is kept apart. */
  input_apart?: string;
  /** The lists kept apart from the stored run, each in a `flow_result` (lists-apart.ts): its children step's and `child_jobs`'. */
  lists_apart?: ListsApart;
  /** Every `flow_result` written for the run, named or not any more (a while loop's iterations'): deleted with it. */
  apart_written?: string[];
  /** The last resume payload, all of them, and who approved (spec 2.5), for the steps after. */
  resume: unknown;
  resumes: unknown[];
  approvers: string[];
  index: number;
  step: FlowStep | null;
  status: 'running' | 'suspended' | 'awaiting_approval' | 'finished';
  events: Record<string, StepEvents>;
  /** ConsentGates reached, by module id. */
  gates?: Record<string, GateState>;
  /** Chat messages posted for its approval steps and gates. */
  chat?: ChatMessage[];
  /** Resume ids of pre-approvals a suspend step used up: they never count again. */
  consumed?: number[];
  /** Which module each step job ran, so a resume URL (which names a step job) finds its settings. */
  step_modules: Record<string, string>;
  /** The flow jobs of each loop or branchall module (its iterations or branches), in order: the console opens them. */
  child_jobs?: Record<string, string[]>;
  /** The module at whose completion sync endpoints answer (spec 4.4), and its value once it did. */
  early_return?: string;
  early_result?: { value: unknown };
  /** `value.same_worker`: every step shares the `./shared` folder (a step may also ask on its own). */
  same_worker?: boolean;
  /** The flow job whose shared folder this run's steps use: the flow's own, for branches and iterations the enclosing flow's. */
  shared_folder?: string;
  /**
   * The job at the top of the run's lineage, on which the jobs its steps make are counted
   * (core/flows/step-admission.ts): found at the run's first step that makes jobs, and handed down
   * to its branches and iterations.
   */
  jobs_counted_on?: string;
  /**
   * Jobs a top-level run counted on itself ahead of its next steps and has not made yet
   * (step-admission.ts): its steps then take from them without a write of their own.
   */
  jobs_reserved?: number;
  /** The trigger step (`is_trigger`) that found no new events and so ended the flow there. */
  stopped_early?: string;
  /** Attempts of the steps that have `retry`, by module id. */
  attempts?: Record<string, StepAttempt[]>;
  /** Steps whose `skip_if` was true: they did not run. */
  skipped?: string[];
  /** A `stop_after_if` that ended the flow. */
  stop?: FlowStop;
  /** The flow's `failure_module` (top-level runs only) and, once the flow failed, what failed. */
  failure_module?: FlowModule;
  failure?: FlowFailure;
  /** Steps answered from their `cache_ttl` cache, by module id: the job stored with the kept result. */
  cache_hits?: Record<string, string>;
  /** Seconds each step job may run (the step's `timeout`), by job id: the worker reads it. */
  step_timeouts?: Record<string, number>;
  /** Set once the outcome is decided; the flow job is then completed with it. */
  outcome?: { status: 'success' | 'failed' | 'canceled'; result: unknown };
}

/** A run as stored: without its modules (and failure module) when `modules_at` names them in the version. */
export type FlowRunDocument = Omit<FlowRun, 'modules' | 'outer_results'> & { modules?: FlowModule[]; outer_results?: Record<string, unknown> };
