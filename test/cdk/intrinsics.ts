/**
 * Evaluates the few CloudFormation intrinsics the stack's URLs are made of (Ref, Fn::GetAtt,
 * Fn::Join and the pseudo parameters) with the values a deploy would give them, so a test can read
 * a synthesized value as the deployed function will see it.
 */
export interface DeployedValues {
  region: string;
  urlSuffix?: string;
  /** What `Ref` of a logical id gives (a RestApi's id, a queue's URL, ...). */
  refs: Record<string, string>;
}

export function evaluate(value: unknown, deployed: DeployedValues): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) throw new Error(`cannot evaluate ${JSON.stringify(value)}`);
  const [[fn, arg]] = Object.entries(value) as [[string, unknown]];
  if (fn === 'Ref') {
    const pseudo: Record<string, string | undefined> = { 'AWS::Region': deployed.region, 'AWS::URLSuffix': deployed.urlSuffix ?? 'amazonaws.com', 'AWS::Partition': 'aws' };
    const resolved = pseudo[arg as string] ?? deployed.refs[arg as string];
    if (resolved === undefined) throw new Error(`no deployed value for Ref ${String(arg)}`);
    return resolved;
  }
  if (fn === 'Fn::Join') {
    const [separator, parts] = arg as [string, unknown[]];
    return parts.map((part) => evaluate(part, deployed)).join(separator);
  }
  throw new Error(`unsupported intrinsic ${fn}`);
}
