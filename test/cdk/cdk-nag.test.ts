import { Validations, type PolicyViolation } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildSvcApp } from './svc-app.js';

interface Acknowledgment {
  path: string;
  id: string;
  reason: string;
}

/** Every acknowledgment recorded in the tree, with the construct it was made on. */
function acknowledgmentsIn(root: IConstruct): Acknowledgment[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([qualifiedId, reason]) => ({ path: construct.node.path, id: qualifiedId.replace(/^annotation::/i, ''), reason }))
      // aws-cdk-lib's own, for CloudFormation's template linter (a VPC reading its availability
      // zones, a flow log): not cdk-nag rules, and not ours to explain.
      .filter(({ id }) => !id.startsWith('CloudFormation-Validate::')),
  );
}

/** cdk-nag 3 is a CDK validation plugin; `validateScope` runs the same checks without a synth. */
function awsSolutionsViolations(root: IConstruct): PolicyViolation[] {
  return new AwsSolutionsChecks(root, { verbose: true }).validateScope(root).violations;
}

// Bundling adds nothing the rules look at, so it is skipped here.
let acknowledged: Acknowledgment[];
let violations: PolicyViolation[];

beforeAll(() => {
  const { app } = buildSvcApp({ bundle: false });
  acknowledged = acknowledgmentsIn(app);
  violations = awsSolutionsViolations(app);
});

afterEach(() => vi.restoreAllMocks());

describe('cdk-nag AwsSolutions', () => {
  it('finds no unacknowledged error or warning', () => {
    const report = violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}: ${v.description}`);
    expect(report).toEqual([]);
  });

  it('acknowledges only AwsSolutions rules, each with a reason that explains it', () => {
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const { id, reason, path } of acknowledged) {
      expect(id, path).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
      expect(reason.length, `${id} at ${path}`).toBeGreaterThanOrEqual(60);
    }
  });

  it('has no stale acknowledgment: each one silences a finding that would otherwise fail the checks', () => {
    vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => {});
    const { app } = buildSvcApp({ bundle: false });
    const unacknowledged = awsSolutionsViolations(app);
    for (const { id, path } of acknowledged) {
      const hits = unacknowledged
        .filter((v) => v.ruleName === id)
        .flatMap((v) => v.violatingResources)
        .filter((r) => r.constructPath?.startsWith(`${path}/`));
      expect(hits.length, `${id} acknowledged at ${path} but not found there`).toBeGreaterThan(0);
    }
  });
});
