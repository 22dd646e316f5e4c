/**
 * The EventBridge rule that tells svc a flow's execution ended without finishing its job
 * (functions/core/flows/stranded.ts): Step Functions emits a "Step Functions Execution Status
 * Change" event for every execution of the flow-runner state machine; only the ends that can
 * strand a job reach the reaper function. The stack's rule uses this pattern, and so does the
 * emulator tier's stand-in for EventBridge (test/aws/aws-shell-server.ts).
 */
export const STRANDING_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;

export function executionStatusPattern(stateMachineArn: string) {
  return {
    source: ['aws.states'],
    'detail-type': ['Step Functions Execution Status Change'],
    detail: { status: [...STRANDING_STATUSES], stateMachineArn: [stateMachineArn] },
  };
}

/** Whether `event` matches the pattern (the few operators the pattern uses: exact values). */
export function matchesExecutionStatusPattern(event: { source: string; 'detail-type': string; detail: { status: string; stateMachineArn: string } }, stateMachineArn: string): boolean {
  const p = executionStatusPattern(stateMachineArn);
  return p.source.includes(event.source) && p['detail-type'].includes(event['detail-type']) && (p.detail.status as readonly string[]).includes(event.detail.status) && p.detail.stateMachineArn.includes(event.detail.stateMachineArn);
}
