/**
 * The workspace documents the Store keeps for resources, resource types, variables and apps. They
 * live apart from the modules that manage them because documents/entity-values.ts names them to
 * check stored values, and those modules read the store through store/entities.ts, which uses
 * entity-values.ts: both sides import this leaf, which imports nothing.
 */

/** A connection (`resource`): a value of a resource type at a workspace path (workspace/resources.ts). */
export interface Resource {
  path: string;
  resource_type: string;
  value: unknown;
  description: string;
  created_by: string;
}

/** A resource type (`resource_type`): the JSON Schema its resources follow (workspace/resource-types.ts). */
export interface ResourceType {
  name: string;
  schema: Record<string, unknown>;
  description: string;
  /** Shipped with the service; cannot be changed or deleted. */
  builtin: boolean;
}

/** A variable, plain or secret (`variable`, workspace/variables.ts). */
export interface Variable {
  path: string;
  /** The plain value, or the ciphertext of a secret. */
  value: string;
  is_secret: boolean;
  description: string;
  created_by: string;
}

/** The head of an app path (`app`): its latest version id (workspace/apps.ts). */
export interface AppHead {
  path: string;
  version: number;
}

/** One version of an app (`app_version`). */
export interface AppVersion {
  id: number;
  path: string;
  summary: string;
  /** The app builder's definition, kept as given. */
  value: Record<string, unknown>;
  /** Who may run the app's inline scripts as whom: kept as given, enforced once apps are rendered. */
  policy: Record<string, unknown> | null;
  deployment_message?: string;
  created_by: string;
  created_at: string;
}
