import { Duration } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { tableDefinition, TTL_ATTRIBUTE } from '../../functions/adapters/aws/dynamo-keys.js';
import { removalPolicyFor, type SvcConfig } from '../config.js';
import { acknowledgeWildcardResource } from './nag.js';

/**
 * The service's state: the single DynamoDB table (jobs, scripts, tokens, ...) and the S3 bucket for
 * payloads too large for an item or a message (multipart uploads, large results, logs).
 */
export class Data extends Construct {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, config: SvcConfig) {
    super(scope, id);
    const removalPolicy = removalPolicyFor(config.stage);

    this.table = new dynamodb.Table(this, 'Table', {
      ...tablePropsFromDefinition(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // AWS managed key: encrypted at rest with a key whose use shows in CloudTrail, without a key
      // policy of our own to keep right.
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy,
      deletionProtection: config.stage === 'prod',
    });
    for (const index of DEFINITION.GlobalSecondaryIndexes ?? []) {
      this.table.addGlobalSecondaryIndex(globalIndexFromDefinition(index));
    }

    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // Server access log delivery only supports SSE-S3 on the target bucket.
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(90) }],
      removalPolicy,
    });

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Objects are written once under unique keys; old versions would only cost storage.
      versioned: false,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'data-bucket/',
      lifecycleRules: [
        // No expiry of stored uploads: a job may be re-run or its file named again later, and the
        // local shell keeps them too (keys are <workspace>/webhook_uploads/..., which a lifecycle
        // prefix could not match anyway).
        // A crashed upload leaves parts that are billed but invisible in listings.
        { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // A sandbox request or answer past Lambda's 6 MB (sandbox-payload-offload.ts) lives for one
        // run and is deleted after it; a worker that died mid-run leaves it to this rule.
        { id: 'expire-sandbox-payloads', prefix: '_sandbox/', expiration: Duration.days(1) },
      ],
      // Upload parts are PUT by clients straight to presigned URLs (README: Large uploads); a
      // browser page needs CORS for that, and must read each part's ETag to complete the upload.
      cors: [
        {
          id: 'presigned-upload-parts',
          allowedMethods: [s3.HttpMethods.PUT],
          allowedOrigins: config.uploadAllowedOrigins,
          allowedHeaders: ['*'],
          exposedHeaders: ['ETag'],
          maxAge: 3600,
        },
      ],
      removalPolicy,
    });
  }

  /** Item reads and writes, including queries on the indexes (listings, the unfinished-jobs sweep). */
  grantTableReadWrite(role: iam.Role): void {
    this.table.grantReadWriteData(role);
    acknowledgeWildcardResource(role, this.table, '/index/*', "Queries on the table's own GSIs (job listings, the unfinished-jobs sweep); the wildcard spans this table's indexes only.");
  }

  /**
   * Objects: read, write, delete, abort multipart uploads. Plus ListBucket, without which S3 answers
   * a missing key with 403 instead of 404 and "not found" cannot be told from "not allowed".
   */
  grantObjectReadWrite(role: iam.Role): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }));
    acknowledgeWildcardResource(role, this.bucket, '/*', 'Object keys are generated per upload, result and log at run time; the wildcard spans the objects of this one bucket only.');
  }
}

/**
 * The key schema lives once, in `tableDefinition` (the store and the emulator tests use it too);
 * the stack translates it rather than restating it, so a new index cannot be forgotten here. The
 * table name is left to CloudFormation, so two stages can share an account.
 */
const DEFINITION = tableDefinition('named-by-cloudformation');

type KeySchema = NonNullable<typeof DEFINITION.KeySchema>;
type GlobalIndex = NonNullable<typeof DEFINITION.GlobalSecondaryIndexes>[number];

function tablePropsFromDefinition(): Pick<dynamodb.TableProps, 'partitionKey' | 'sortKey' | 'billingMode' | 'stream'> {
  const { partitionKey, sortKey } = keysOf(DEFINITION.KeySchema ?? []);
  if (DEFINITION.BillingMode !== 'PAY_PER_REQUEST') throw new Error(`unsupported billing mode ${DEFINITION.BillingMode}`);
  const streamViewType = DEFINITION.StreamSpecification?.StreamEnabled ? DEFINITION.StreamSpecification.StreamViewType : undefined;
  return {
    partitionKey,
    sortKey,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    stream: streamViewType ? (streamViewType as dynamodb.StreamViewType) : undefined,
  };
}

function globalIndexFromDefinition(index: GlobalIndex): dynamodb.GlobalSecondaryIndexProps {
  const { partitionKey, sortKey } = keysOf(index.KeySchema ?? []);
  const projectionType = (index.Projection?.ProjectionType ?? 'ALL') as dynamodb.ProjectionType;
  return {
    indexName: required(index.IndexName, 'IndexName'),
    partitionKey,
    sortKey,
    projectionType,
    nonKeyAttributes: projectionType === dynamodb.ProjectionType.INCLUDE ? index.Projection?.NonKeyAttributes : undefined,
  };
}

function keysOf(schema: KeySchema): { partitionKey: dynamodb.Attribute; sortKey?: dynamodb.Attribute } {
  const attribute = (keyType: 'HASH' | 'RANGE'): dynamodb.Attribute | undefined => {
    const name = schema.find((key) => key.KeyType === keyType)?.AttributeName;
    if (name === undefined) return undefined;
    const type = DEFINITION.AttributeDefinitions?.find((a) => a.AttributeName === name)?.AttributeType;
    return { name, type: required(type, `AttributeType of ${name}`) as dynamodb.AttributeType };
  };
  return { partitionKey: required(attribute('HASH'), 'partition key'), sortKey: attribute('RANGE') };
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`tableDefinition() lacks ${what}`);
  return value;
}
