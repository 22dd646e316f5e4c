import { Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { REFUSED_IPV4 } from '../../functions/core/common/address-rules.js';
import type { SvcConfig } from '../config.js';
import { functionLogGroup } from './lambda-defaults.js';

/** Rule numbers: the refused ranges first, the catch-all allow after them (first match wins). */
const FIRST_DENY_RULE = 100;
const ALLOW_RULE = 1000;

/**
 * The sandboxes' network boundary on AWS, the same rule as a confined job's on one machine
 * (README "Job confinement"): their functions run in private subnets of a VPC of their own, out to
 * the internet through a NAT gateway (to the API at BASE_INTERNAL_URL, its public endpoint, and the
 * sites jobs call), and the subnets' network ACL denies every destination the local egress proxy
 * refuses (core/common/address-rules.ts: loopback, RFC 1918, CGNAT, link-local, reserved): nothing else of
 * the VPC, no peered or on-premises network. Lambda offers no instance metadata service, and the
 * Amazon DNS server is not filtered by network ACLs, so names resolve.
 *
 * Lambda needs the function's role to hold the EC2 network-interface actions to place it in a VPC,
 * and the role's credentials sit in the environment user code runs in. So the same role denies
 * every action to any caller inside an execution environment: Lambda marks those calls with
 * `lambda:SourceFunctionArn`, and its own network-interface calls, made outside the environment,
 * carry no such key (AWS Lambda guide, "Using source function ARN to control function access").
 *
 * To let jobs reach listed private addresses (the local SVC_JOB_NETWORK_ALLOW), add ALLOW entries
 * with rule numbers below 100 to `acl`.
 */
export class SandboxNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  readonly acl: ec2.NetworkAcl;
  readonly securityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, config: SvcConfig) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 1,
      // Nothing uses the default security group; CDK's lockdown of it would add a custom resource function.
      restrictDefaultSecurityGroup: false,
      subnetConfiguration: [
        { name: 'nat', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'jobs', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
    });
    // Refused connections are what this boundary is for: they are logged.
    this.vpc.addFlowLog('RejectedFlows', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(functionLogGroup(this, 'RejectedFlowLogs', config)),
      trafficType: ec2.FlowLogTrafficType.REJECT,
    });

    this.acl = new ec2.NetworkAcl(this, 'JobsAcl', { vpc: this.vpc, subnetSelection: { subnetGroupName: 'jobs' } });
    Validations.of(this.acl).acknowledge({
      id: 'AwsSolutions-VPC3',
      reason: 'Security groups can only allow; refusing private, loopback and link-local destinations to user code while the internet stays open takes deny rules, which only a network ACL has.',
    });
    REFUSED_IPV4.forEach(([address, prefix], index) => {
      this.acl.addEntry(`Refuse${index}`, {
        ruleNumber: FIRST_DENY_RULE + index,
        cidr: ec2.AclCidr.ipv4(`${address}/${prefix}`),
        traffic: ec2.AclTraffic.allTraffic(),
        direction: ec2.TrafficDirection.EGRESS,
        ruleAction: ec2.Action.DENY,
      });
    });
    this.acl.addEntry('Out', {
      ruleNumber: ALLOW_RULE,
      cidr: ec2.AclCidr.anyIpv4(),
      traffic: ec2.AclTraffic.allTraffic(),
      direction: ec2.TrafficDirection.EGRESS,
      ruleAction: ec2.Action.ALLOW,
    });
    // Network ACLs keep no state: the answers come back on ephemeral ports, from outside only.
    REFUSED_IPV4.forEach(([address, prefix], index) => {
      this.acl.addEntry(`RefuseIn${index}`, {
        ruleNumber: FIRST_DENY_RULE + index,
        cidr: ec2.AclCidr.ipv4(`${address}/${prefix}`),
        traffic: ec2.AclTraffic.allTraffic(),
        direction: ec2.TrafficDirection.INGRESS,
        ruleAction: ec2.Action.DENY,
      });
    });
    for (const [name, traffic] of [
      ['TcpAnswers', ec2.AclTraffic.tcpPortRange(1024, 65535)],
      ['UdpAnswers', ec2.AclTraffic.udpPortRange(1024, 65535)],
    ] as const) {
      this.acl.addEntry(name, { ruleNumber: ALLOW_RULE + (name === 'TcpAnswers' ? 0 : 1), cidr: ec2.AclCidr.anyIpv4(), traffic, direction: ec2.TrafficDirection.INGRESS, ruleAction: ec2.Action.ALLOW });
    }

    this.securityGroup = new ec2.SecurityGroup(this, 'Jobs', {
      vpc: this.vpc,
      description: 'svc sandboxes: no inbound; outbound as the network ACL lets through',
      allowAllOutbound: true,
    });
  }

  /** The VPC settings of a sandbox function. */
  functionProps(): Pick<lambda.FunctionProps, 'vpc' | 'vpcSubnets' | 'securityGroups'> {
    return { vpc: this.vpc, vpcSubnets: { subnetGroupName: 'jobs' }, securityGroups: [this.securityGroup] };
  }

  /**
   * What placing `role`'s function in the VPC takes: the network-interface actions for Lambda, and a
   * deny of every action to calls made from inside the execution environment, where user code runs.
   */
  static grantNetworkInterfaces(role: iam.Role): void {
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'LambdaPlacesTheFunctionInTheVpc',
        actions: ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
        resources: ['*'],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'NothingForCodeInTheEnvironment',
        effect: iam.Effect.DENY,
        actions: ['*'],
        resources: ['*'],
        conditions: { Null: { 'lambda:SourceFunctionArn': 'false' } },
      }),
    );
  }
}
