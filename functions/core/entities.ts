import { conflict, notFound } from './errors.js';
import { AGAIN, RACE, retry } from './retry.js';
import type { Clock, Entity, EntityKind, Store } from '../ports.js';

/**
 * Typed access to the workspace documents of the Store (members, groups, folders, resources,
 * resource types, variables), with the optimistic read-modify-write every update uses.
 */

const UPDATE_ATTEMPTS = 5;

export async function getEntityValue<T>(store: Store, kind: EntityKind, workspaceId: string, key: string): Promise<T | null> {
  return ((await store.getEntity(kind, workspaceId, key))?.value as T | undefined) ?? null;
}

export async function requireEntity<T>(store: Store, kind: EntityKind, workspaceId: string, key: string, what: string): Promise<Entity<T>> {
  const e = await store.getEntity(kind, workspaceId, key);
  if (!e) throw notFound(what);
  return e as unknown as Entity<T>;
}

export async function listEntityValues<T>(store: Store, kind: EntityKind, workspaceId: string): Promise<Entity<T>[]> {
  return (await store.listEntities(kind, workspaceId)) as unknown as Entity<T>[];
}

/** Creates the document; 409 naming `what` when the key is taken. */
export async function createEntity<T extends object>(store: Store, clock: Clock, kind: EntityKind, workspaceId: string, key: string, value: T, what: string): Promise<Entity<T>> {
  const now = clock.now().toISOString();
  const e: Entity<T> = { kind, workspace_id: workspaceId, key, value, version: 1, created_at: now, updated_at: now };
  if (!(await store.createEntity(e as unknown as Entity))) throw conflict(`${what} already exists`);
  return e;
}

/**
 * Applies `change` to the current document and stores it if nobody changed it meanwhile,
 * retrying on a lost race; 404 when it does not exist.
 */
export async function updateEntity<T extends object>(
  store: Store,
  clock: Clock,
  kind: EntityKind,
  workspaceId: string,
  key: string,
  what: string,
  change: (current: T) => T | Promise<T>,
): Promise<Entity<T>> {
  return retry({ attempts: UPDATE_ATTEMPTS, ...RACE, exhausted: () => conflict(`${what} is being changed by someone else; retry`) }, async () => {
    const current = await requireEntity<T>(store, kind, workspaceId, key, what);
    const next: Entity<T> = { ...current, value: await change(current.value), version: current.version + 1, updated_at: clock.now().toISOString() };
    return (await store.replaceEntity(next as unknown as Entity, current.version)) ? next : AGAIN;
  });
}

export async function deleteEntity(store: Store, kind: EntityKind, workspaceId: string, key: string, what: string): Promise<void> {
  if (!(await store.deleteEntity(kind, workspaceId, key))) throw notFound(what);
}
