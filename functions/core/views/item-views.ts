import { z } from 'zod';
import type { Same } from './same.js';
import type { ScriptVersion } from '../../ports.js';
import { scriptVersionFields } from '../documents/records.js';
import { appVersionValue, ENTITY_VALUES, resourceValue, variableValue } from '../documents/entity-values.js';
import type { scriptSummary } from '../scripts/scripts.js';
import type { inferSchemaForEditor } from '../scripts/script-preview.js';
import type { scriptMetadata } from '../dependencies/lock-script.js';
import type { archiveFlow, flowHistory, getFlow, listFlows } from '../flows/flows.js';
import type { validateFlow } from '../flows/flow-validate.js';
import type { getFolder, updateFolder } from '../identity/folders.js';
import type { addGroupMember, getGroup } from '../identity/groups.js';
import type { listResourceTypes, updateResourceType } from '../workspace/resource-types.js';
import type { getResource, listResources, updateResource } from '../workspace/resources.js';
import type { getVariable, listVariables, VariableView as CoreVariableView } from '../workspace/variables.js';
import type { appHistory } from '../workspace/apps.js';
import type { AppHead, AppVersion } from '../workspace/workspace-documents.js';

/**
 * Scripts, flows, variables and apps as the API answers them: the schemas of what the store keeps (records.ts,
 * entity-values.ts), since the API answers those as they are. They describe the answers in the
 * OpenAPI document and type the CLI's reading of them; the checks below make `npm run check` fail
 * when what the core answers and these schemas part.
 */

/** `scripts/get/p/{path}`, `scripts/get/h/{hash}`. */
export const scriptSchema = scriptVersionFields;
export type ScriptView = z.output<typeof scriptSchema>;
/** `scripts/list`: the latest version of each script, without its content. */
export const scriptListSchema = z.array(scriptVersionFields.omit({ content: true }));
export type ScriptListItem = z.output<typeof scriptListSchema>[number];
/** `scripts/generate_metadata`: the lock and input schema a create would store. */
export const scriptMetadataSchema = z.object({ lock: z.string().nullable(), schema: scriptVersionFields.shape.schema });
export type ScriptMetadataView = z.output<typeof scriptMetadataSchema>;
/** `scripts/infer_schema`: the input schema read from a script's code. */
export const inferredSchemaSchema = scriptVersionFields.shape.schema;
export type InferredSchemaView = z.output<typeof inferredSchemaSchema>;

/** `flows/get/{path}`: the latest version. */
export const flowSchema = ENTITY_VALUES.flow_version;
export type FlowView = z.output<typeof flowSchema>;
/** `flows/list`: each flow's path and latest version id. */
export const flowListSchema = z.array(ENTITY_VALUES.flow);
export type FlowListItem = z.output<typeof flowListSchema>[number];

/** `folders/get/{name}`, `folders/list` (each). */
export const folderSchema = ENTITY_VALUES.folder;
export type FolderView = z.output<typeof folderSchema>;
/** `groups/get/{name}`, `groups/list` (each). */
export const groupSchema = ENTITY_VALUES.group;
export type GroupView = z.output<typeof groupSchema>;
/** `resources/type/get/{name}`, `resources/type/list` (each). */
export const resourceTypeSchema = ENTITY_VALUES.resource_type;
export type ResourceTypeView = z.output<typeof resourceTypeSchema>;
const stamps = { created_at: z.string(), updated_at: z.string() };
/** `resources/get/{path}`: the resource and when it was made and last changed. */
export const resourceSchema = resourceValue.extend(stamps);
export type ResourceView = z.output<typeof resourceSchema>;
/** `resources/list` (each): a resource without its value. */
export const resourceListItemSchema = resourceSchema.omit({ value: true });
export type ResourceListItem = z.output<typeof resourceListItemSchema>;
/** `resources/update/{path}`: the resource as stored. */
export const updatedResourceSchema = resourceValue;
/** `flows/history/p/{path}` (each): a version without its definition. */
export const flowHistorySchema = z.array(z.object({ id: z.number().int(), created_at: z.string(), created_by: z.string(), summary: z.string(), deployment_message: z.string().optional() }));
export type FlowHistoryView = z.output<typeof flowHistorySchema>;
/** `flows/validate`: the errors a save would answer, each with the field and the step it is in. */
export const flowValidationSchema = z.object({
  errors: z.array(
    z.object({
      message: z.string(),
      /** As a create's 400 names it: `value.modules.0.value.content`. */
      field: z.string(),
      /** The step that holds it (its id and its field, `value.modules.1`), when it is inside one. */
      step: z.object({ id: z.string().nullable(), field: z.string() }).nullable(),
    }),
  ),
});
export type FlowValidationView = z.output<typeof flowValidationSchema>;
/** `flows/archive/{path}`. */
export const archivedFlowSchema = z.object({ path: z.string(), archived: z.boolean() });
/** `variables/list` (each), `variables/update/{path}`: a secret's value is left out. */
export const variableSchema = variableValue.omit({ value: true }).extend({ value: z.string().optional(), ...stamps });
export type VariableView = z.output<typeof variableSchema>;
/** `variables/get/{path}`: with the value (a secret's decrypted, or sealed with the sync key for `?encrypted=true`). */
export const variableWithValueSchema = variableSchema.extend({ value: z.string() });
export type VariableWithValue = z.output<typeof variableWithValueSchema>;

/** `apps/get/p/{path}`, `apps/get/v/{id}`, `apps/update/{path}`: an app version. */
export const appSchema = appVersionValue;
export type AppView = z.output<typeof appSchema>;
/** `apps/list` (each): an app's path and latest version id. */
export const appListSchema = z.array(ENTITY_VALUES.app);
export type AppListItem = z.output<typeof appListSchema>[number];
/** `apps/history/p/{path}` (each): a version without its definition. */
export const appHistorySchema = z.array(appVersionValue.pick({ id: true, created_at: true, created_by: true, summary: true, deployment_message: true }));

const agree: [
  Same<ScriptView, ScriptVersion>,
  Same<ScriptListItem, ReturnType<typeof scriptSummary>>,
  Same<ScriptMetadataView, Awaited<ReturnType<typeof scriptMetadata>>>,
  Same<InferredSchemaView, ReturnType<typeof inferSchemaForEditor>>,
  Same<FlowView, Awaited<ReturnType<typeof getFlow>>>,
  Same<FlowListItem, Awaited<ReturnType<typeof listFlows>>[number]>,
  Same<FolderView, Awaited<ReturnType<typeof getFolder>>>,
  Same<GroupView, Awaited<ReturnType<typeof getGroup>>>,
  Same<ResourceTypeView, Awaited<ReturnType<typeof listResourceTypes>>[number]>,
  Same<ResourceView, Awaited<ReturnType<typeof getResource>>>,
  Same<VariableView, CoreVariableView>,
  Same<VariableView, Awaited<ReturnType<typeof listVariables>>[number]>,
  Same<VariableWithValue, Awaited<ReturnType<typeof getVariable>>>,
  Same<AppView, AppVersion>,
  Same<z.output<typeof appListSchema>[number], AppHead>,
  Same<z.output<typeof appHistorySchema>, Awaited<ReturnType<typeof appHistory>>>,
  Same<ResourceListItem, Awaited<ReturnType<typeof listResources>>[number]>,
  Same<z.output<typeof updatedResourceSchema>, Awaited<ReturnType<typeof updateResource>>>,
  Same<ResourceTypeView, Awaited<ReturnType<typeof updateResourceType>>>,
  Same<FolderView, Awaited<ReturnType<typeof updateFolder>>>,
  Same<GroupView, Awaited<ReturnType<typeof addGroupMember>>>,
  Same<z.output<typeof flowHistorySchema>, Awaited<ReturnType<typeof flowHistory>>>,
  Same<z.output<typeof archivedFlowSchema>, Awaited<ReturnType<typeof archiveFlow>>>,
  Same<FlowValidationView, Awaited<ReturnType<typeof validateFlow>>>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
void agree;
