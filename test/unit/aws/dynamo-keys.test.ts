import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gsi1, gsi2, gsi3, JOB_STATUS_SHARDS, jobShard, keys, tableDefinition, WORKSPACE_JOB_SHARDS } from '../../../functions/adapters/aws/dynamo-keys.js';
import { jobItem, type JobPayload } from '../../../functions/adapters/aws/dynamo-items.js';
import type { Job } from '../../../functions/ports.js';
import { aJob } from '../../contract/store-fixtures.js';

/** Job-id-shaped ids (UUIDs), the same every run. */
const ids = Array.from({ length: 10_000 }, (_, i) => {
  const h = createHash('sha256').update(`job ${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
});

describe('DynamoDB job keys', () => {
  it('shard a workspace job list and each unfinished status by the job id', () => {
    const id = '0d9c6f52-1b1e-4c2a-9a57-5f0f3c1f7a11';
    expect(keys.job(id)).toEqual({ pk: `JOB#${id}`, sk: 'JOB' });
    const w = jobShard(id, WORKSPACE_JOB_SHARDS);
    const s = jobShard(id, JOB_STATUS_SHARDS);
    expect(gsi1.job('main', '2030-01-01T00:00:00.000Z', id)).toEqual({ gsi1pk: `WS#main#JOBS#${w}`, gsi1sk: `2030-01-01T00:00:00.000Z#${id}` });
    expect(gsi2.job('queued', '2030-01-01T00:00:00.000Z', id)).toEqual({ gsi2pk: `JOBS#queued#${s}`, gsi2sk: `2030-01-01T00:00:00.000Z#${id}` });
    // A status change keeps the job's shard number: claim and requeue write gsi2.status(status, id).
    expect(gsi2.status('running', id)).toBe(`JOBS#running#${s}`);
  });

  it('pin the shard function: stored items keep the shard it gave them', () => {
    // Changing the hash or the counts would strand every job already written in other shards.
    expect([WORKSPACE_JOB_SHARDS, JOB_STATUS_SHARDS]).toEqual([8, 64]);
    expect(['a', 'job-1', '0d9c6f52-1b1e-4c2a-9a57-5f0f3c1f7a11'].map((id) => [jobShard(id, 8), jobShard(id, 64)])).toEqual([
      [4, 44],
      [6, 22],
      [5, 53],
    ]);
  });

  it('list every shard to the readers, and the unsharded key of older items last', () => {
    const partitions = gsi1.jobPartitionsOf('main');
    expect(partitions).toHaveLength(WORKSPACE_JOB_SHARDS + 1);
    expect(partitions.at(-1)).toBe('WS#main#JOBS');
    expect(new Set(ids.map((id) => gsi1.jobsOf('main', id)))).toEqual(new Set(partitions.slice(0, -1)));
    const running = gsi2.statusPartitions('running');
    expect(running).toHaveLength(JOB_STATUS_SHARDS + 1);
    expect(running.at(-1)).toBe('JOBS#running');
    expect(new Set(ids.map((id) => gsi2.status('running', id)))).toEqual(new Set(running.slice(0, -1)));
  });

  it('spread job ids evenly: no shard takes more than 1.25x its share', () => {
    for (const shards of [WORKSPACE_JOB_SHARDS, JOB_STATUS_SHARDS]) {
      const counts = new Array<number>(shards).fill(0);
      for (const id of ids) counts[jobShard(id, shards)]! += 1;
      expect(Math.max(...counts)).toBeLessThan((1.25 * ids.length) / shards);
      expect(Math.min(...counts)).toBeGreaterThan((0.75 * ids.length) / shards);
    }
  });

  it("key a workspace's running flows in their own sparse index, sharded like its job list", () => {
    const id = '0d9c6f52-1b1e-4c2a-9a57-5f0f3c1f7a11';
    const w = jobShard(id, WORKSPACE_JOB_SHARDS);
    expect(gsi3.runningFlowsOf('main', id)).toBe(`WS#main#FLOWS#${w}`);
    expect(gsi3.runningFlowPartitionsOf('main')).toEqual(Array.from({ length: WORKSPACE_JOB_SHARDS }, (_, n) => `WS#main#FLOWS#${n}`));
    expect(new Set(ids.map((i) => gsi3.runningFlowsOf('main', i)))).toEqual(new Set(gsi3.runningFlowPartitionsOf('main')));
    const index = tableDefinition('t').GlobalSecondaryIndexes?.find((i) => i.IndexName === 'gsi3');
    expect(index).toMatchObject({ KeySchema: [{ AttributeName: 'gsi3pk', KeyType: 'HASH' }, { AttributeName: 'gsi3sk', KeyType: 'RANGE' }], Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['script_path'] } });

    // The partition on every flow job, the sort key only while it runs; script jobs carry neither.
    const at = '2030-01-01T00:00:00.000Z';
    const item = (kind: Job['kind'], status: Job['status']) => jobItem(aJob('main', { id, kind, status, created_at: at }), payload);
    expect(item('flow', 'running')).toMatchObject({ gsi3pk: `WS#main#FLOWS#${w}`, gsi3sk: `${at}#${id}` });
    expect(item('flow', 'queued')).toMatchObject({ gsi3pk: `WS#main#FLOWS#${w}` });
    expect(item('flow', 'queued')).not.toHaveProperty('gsi3sk');
    expect(item('flow', 'success')).not.toHaveProperty('gsi3sk');
    expect(item('script', 'running')).not.toHaveProperty('gsi3pk');
  });

  it("key a workspace's queued jobs in a sparse keys-only index over its job list's partitions", () => {
    const id = '0d9c6f52-1b1e-4c2a-9a57-5f0f3c1f7a11';
    const index = tableDefinition('t').GlobalSecondaryIndexes?.find((i) => i.IndexName === 'gsi4');
    expect(index).toMatchObject({ KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }, { AttributeName: 'gsi4sk', KeyType: 'RANGE' }], Projection: { ProjectionType: 'KEYS_ONLY' } });
    // The sort key only while queued, on every kind of job; the partition is the job list's.
    const at = '2030-01-01T00:00:00.000Z';
    const item = (kind: Job['kind'], status: Job['status']) => jobItem(aJob('main', { id, kind, status, created_at: at }), payload);
    for (const kind of ['script', 'flow'] as const) {
      expect(item(kind, 'queued')).toMatchObject({ gsi1pk: gsi1.jobsOf('main', id), gsi4sk: `${at}#${id}` });
      for (const status of ['running', 'suspended', 'success', 'canceled'] as const) expect(item(kind, status)).not.toHaveProperty('gsi4sk');
    }
  });
});

const payload: JobPayload = { args_json: '{}', result_json: 'null', log_chunks: [], stream_chunks: [], stream_refs: [], stream_bytes: 0, stream_seq: 0 };
