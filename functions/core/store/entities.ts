import { conflict, notFound } from '../common/errors.js';
import { parseStored } from '../documents/parse.js';
import { jsonObject } from '../documents/json-maps.js';
import { ENTITY_VALUES, type EntityValues } from '../documents/entity-values.js';
import { AGAIN, RACE, retry, type RetryPolicy } from '../common/retry.js';
import type { Clock, Entity, EntityKind, Job, OutboxEvent, Store } from '../../ports.js';

/**
 * Typed access to the workspace documents of the Store (members, groups, folders, resources,
 * resource types, variables, flows and their runs, ...), with the optimistic read-modify-write
 * every update uses. Every value is parsed with its kind's schema on the way in and out, so a
 * document that does not match is a clear error here rather than a crash further on.
 */

const UPDATE_ATTEMPTS = 5;

export type StoredEntity<K extends EntityKind> = Omit<Entity, 'kind' | 'value'> & { kind: K; value: EntityValues[K] };

/** A document as the API shows it (schedules, HTTP routes): its value with its workspace and times. */
export type EntityView<K extends EntityKind> = EntityValues[K] & { workspace_id: string; created_at: string; updated_at: string };

export function entityView<K extends EntityKind>(e: StoredEntity<K>): EntityView<K> {
  return { ...e.value, workspace_id: e.workspace_id, created_at: e.created_at, updated_at: e.updated_at };
}

/** The Store's entity as a document of its kind; a StoredDocumentError when it does not match. */
export function typed<K extends EntityKind>(kind: K, e: Entity): StoredEntity<K> {
  return { ...e, kind, value: parseStored(ENTITY_VALUES[kind], e.value, `${kind} ${e.key} in ${e.workspace_id}`) };
}

/** The Store's untyped form of a document, checked against its schema before it is written; the Store keeps any JSON object, and jsonObject makes the typed value that by checking, not casting. */
function untyped<K extends EntityKind>(d: StoredEntity<K>): Entity {
  const what = `${d.kind} ${d.key} in ${d.workspace_id}`;
  return { ...d, value: parseStored(jsonObject, parseStored(ENTITY_VALUES[d.kind], d.value, what), what) };
}

export async function readEntity<K extends EntityKind>(store: Store, kind: K, workspaceId: string, key: string): Promise<StoredEntity<K> | null> {
  const e = await store.getEntity(kind, workspaceId, key);
  return e ? typed(kind, e) : null;
}

export async function getEntityValue<K extends EntityKind>(store: Store, kind: K, workspaceId: string, key: string): Promise<EntityValues[K] | null> {
  return (await readEntity(store, kind, workspaceId, key))?.value ?? null;
}

export async function requireEntity<K extends EntityKind>(store: Store, kind: K, workspaceId: string, key: string, what: string): Promise<StoredEntity<K>> {
  const e = await readEntity(store, kind, workspaceId, key);
  if (!e) throw notFound(what);
  return e;
}

/** Every document of the kind in the workspace, ordered by key. */
export async function listEntityValues<K extends EntityKind>(store: Store, kind: K, workspaceId: string): Promise<StoredEntity<K>[]> {
  return (await store.listEntities(kind, workspaceId)).map((e) => typed(kind, e));
}

/** The events a write announces (core/events/announce.ts), made from the document as it will be stored. */
export type EventsOf<K extends EntityKind> = (stored: StoredEntity<K>) => OutboxEvent[];

/**
 * Stores a new document (version 1); false when the key is taken. For callers that race on purpose.
 * `jobs` are inserted with it, only when it is stored (Store.createEntity).
 */
export async function tryCreateEntity<K extends EntityKind>(store: Store, clock: Clock, kind: K, workspaceId: string, key: string, value: EntityValues[K], events?: EventsOf<K>, jobs?: Job[]): Promise<StoredEntity<K> | null> {
  const now = clock.now().toISOString();
  const d: StoredEntity<K> = { kind, workspace_id: workspaceId, key, value, version: 1, created_at: now, updated_at: now };
  return (await store.createEntity(untyped(d), events?.(d), jobs)) ? d : null;
}

/** Creates the document; 409 naming `what` when the key is taken. */
export async function createEntity<K extends EntityKind>(store: Store, clock: Clock, kind: K, workspaceId: string, key: string, value: EntityValues[K], what: string, events?: EventsOf<K>): Promise<StoredEntity<K>> {
  const created = await tryCreateEntity(store, clock, kind, workspaceId, key, value, events);
  if (!created) throw conflict(`${what} already exists`);
  return created;
}

/**
 * Replaces `current` with `value` if nobody changed it since it was read; false when someone did.
 * `jobs` are inserted with it, only when it is replaced (Store.replaceEntity).
 */
export async function tryReplaceEntity<K extends EntityKind>(store: Store, clock: Clock, current: StoredEntity<K>, value: EntityValues[K], events?: EventsOf<K>, jobs?: Job[]): Promise<StoredEntity<K> | null> {
  const next: StoredEntity<K> = { ...current, value, version: current.version + 1, updated_at: clock.now().toISOString() };
  return (await store.replaceEntity(untyped(next), current.version, events?.(next), jobs)) ? next : null;
}

/**
 * Applies `change` to the current document and stores it if nobody changed it meanwhile,
 * retrying on a lost race (`policy`: a document the service itself writes often, such as a
 * schedule, needs more attempts); 404 when it does not exist.
 */
export async function updateEntity<K extends EntityKind>(
  store: Store,
  clock: Clock,
  kind: K,
  workspaceId: string,
  key: string,
  what: string,
  change: (current: EntityValues[K]) => EntityValues[K] | Promise<EntityValues[K]>,
  events?: EventsOf<K>,
  policy: RetryPolicy = { attempts: UPDATE_ATTEMPTS, ...RACE },
): Promise<StoredEntity<K>> {
  return retry({ ...policy, exhausted: () => conflict(`${what} is being changed by someone else; retry`) }, async () => {
    const current = await requireEntity(store, kind, workspaceId, key, what);
    return (await tryReplaceEntity(store, clock, current, await change(current.value), events)) ?? AGAIN;
  });
}

export async function deleteEntity(store: Store, kind: EntityKind, workspaceId: string, key: string, what: string, events?: OutboxEvent[]): Promise<void> {
  if (!(await store.deleteEntity(kind, workspaceId, key, events))) throw notFound(what);
}
