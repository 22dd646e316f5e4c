import { z } from 'zod';
import { conflict, notFound } from './errors.js';
import { assertWorkspaceId } from './paths.js';
import { parseBody } from './validation.js';
import type { Clock, Store, Workspace } from '../ports.js';

export const createWorkspaceBody = z.object({
  id: z.string(),
  name: z.string().min(1).max(200),
});

export async function createWorkspace(store: Store, clock: Clock, body: unknown): Promise<Workspace> {
  const input = parseBody(createWorkspaceBody, body);
  assertWorkspaceId(input.id);
  const ws: Workspace = { id: input.id, name: input.name, created_at: clock.now().toISOString(), object_storage_enabled: false };
  if ((await store.createWorkspace(ws)) === 'exists') throw conflict(`workspace ${input.id} already exists`);
  return ws;
}

export async function requireWorkspace(store: Store, id: string): Promise<Workspace> {
  const ws = await store.getWorkspace(id);
  if (!ws) throw notFound(`workspace ${id}`);
  return ws;
}

export const objectStorageBody = z.object({ enabled: z.boolean() });

export async function setObjectStorage(store: Store, id: string, body: unknown): Promise<Workspace> {
  const input = parseBody(objectStorageBody, body);
  await requireWorkspace(store, id);
  await store.setObjectStorage(id, input.enabled);
  return requireWorkspace(store, id);
}
