import type { ApiOperation } from '../../core/openapi/api-document.js';
import { createScriptBody } from '../../core/scripts/scripts.js';
import { metadataBody } from '../../core/dependencies/lock-script.js';
import { inferSchemaBody } from '../../core/scripts/script-preview.js';
import { archiveBody, flowBody } from '../../core/flows/flows.js';
import { validateFlowBody } from '../../core/flows/flow-validate.js';
import { appBody } from '../../core/workspace/apps.js';
import { createBody as createResourceTypeBody, updateBody as updateResourceTypeBody } from '../../core/workspace/resource-types.js';
import { createBody as createResourceBody, updateBody as updateResourceBody } from '../../core/workspace/resources.js';
import { createBody as createVariableBody, updateBody as updateVariableBody } from '../../core/workspace/variables.js';
import { createBody as createRouteBody, updateBody as updateRouteBody } from '../../core/triggers/http-triggers.js';
import { createBody as createScheduleBody, enabledBody, updateBody as updateScheduleBody } from '../../core/triggers/schedules.js';
import { generateBody } from '../../core/openapi/selection.js';
import { updateValueBody } from '../windmill-compat-routes.js';
import { z } from 'zod';
import { flowListQuery, pageQuery, resourceListQuery } from '../list-query.js';
import { archivedFlowSchema, flowHistorySchema, flowListSchema, flowSchema, flowValidationSchema, resourceListItemSchema, resourceSchema, resourceTypeSchema, inferredSchemaSchema, scriptListSchema, scriptMetadataSchema, scriptSchema, updatedResourceSchema } from '../../core/views/item-views.js';
import { appHistorySchema, appListSchema, appSchema, variableSchema, variableWithValueSchema } from '../../core/views/item-views.js';
import { httpTriggerSchema, scheduleSchema } from '../../core/views/trigger-views.js';
import { created, createdText, json, text, ws } from './helpers.js';

/** What a workspace holds: scripts, flows, apps, resources and variables, routes and schedules. */
export const itemOperations: ApiOperation[] = [
  { method: 'post', path: ws('/scripts/create'), tag: 'scripts', summary: 'Create a script, or a new version of one (give parent_hash)', body: createScriptBody, response: createdText('The new version\'s hash') },
  { method: 'post', path: ws('/scripts/generate_metadata'), tag: 'scripts', summary: 'The lock and input schema a create would store, without creating anything', body: metadataBody, response: json('The lock (null when the script imports nothing to lock) and the input schema', scriptMetadataSchema) },
  { method: 'post', path: ws('/scripts/infer_schema'), tag: 'scripts', summary: 'The input schema inferred from a script\'s code (the editor\'s live form); stores nothing', body: inferSchemaBody, response: json('The input schema', inferredSchemaSchema) },
  { method: 'get', path: ws('/scripts/list'), tag: 'scripts', summary: 'The latest version of every script the caller may read', query: pageQuery, response: json('Scripts', scriptListSchema) },
  { method: 'get', path: ws('/scripts/get/p/:path{.+}'), tag: 'scripts', summary: 'A script\'s latest version', response: json('The script version', scriptSchema) },
  { method: 'get', path: ws('/scripts/get/h/:hash'), tag: 'scripts', summary: 'A script version by its hash', response: json('The script version', scriptSchema) },
  { method: 'post', path: ws('/scripts/delete/p/:path{.+}'), tag: 'scripts', summary: 'Delete a script and its versions', response: text('Deleted') },

  { method: 'post', path: ws('/flows/create'), tag: 'flows', summary: 'Create a flow', body: flowBody, response: createdText('The flow\'s path') },
  { method: 'post', path: ws('/flows/update/:path{.+}'), tag: 'flows', summary: 'Store a new version of a flow', body: flowBody, response: json('The new version', flowSchema) },
  { method: 'post', path: ws('/flows/validate'), tag: 'flows', summary: 'Check a flow by the rules of a create without storing it: the errors, each with the step it is in', body: validateFlowBody, response: json('The errors, each with the step it is in (none: a save would be accepted)', flowValidationSchema) },
  { method: 'get', path: ws('/flows/get/:path{.+}'), tag: 'flows', summary: 'A flow\'s latest version', response: json('The flow', flowSchema) },
  { method: 'get', path: ws('/flows/history/p/:path{.+}'), tag: 'flows', summary: 'A flow\'s versions, newest first', response: json('Versions', flowHistorySchema) },
  { method: 'get', path: ws('/flows/list'), tag: 'flows', summary: 'The flows the caller may read', query: flowListQuery, response: json('Flows', flowListSchema) },
  { method: 'post', path: ws('/flows/archive/:path{.+}'), tag: 'flows', summary: 'Archive or unarchive a flow', body: archiveBody, bodyOptional: true, response: json('The flow\'s path and whether it is archived', archivedFlowSchema) },
  { method: 'delete', path: ws('/flows/delete/:path{.+}'), tag: 'flows', summary: 'Delete a flow and its versions', response: text('Deleted') },

  { method: 'post', path: ws('/apps/create'), tag: 'apps', summary: 'Create an app', body: appBody, response: createdText('The app\'s path') },
  { method: 'post', path: ws('/apps/update/:path{.+}'), tag: 'apps', summary: 'Store a new version of an app (fields left out stay)', body: appBody, response: json('The new version', appSchema) },
  { method: 'get', path: ws('/apps/get/p/:path{.+}'), tag: 'apps', summary: 'An app\'s latest version', response: json('The app', appSchema) },
  { method: 'get', path: ws('/apps/get/v/:id'), tag: 'apps', summary: 'An app version by its id', response: json('The app version', appSchema) },
  { method: 'get', path: ws('/apps/history/p/:path{.+}'), tag: 'apps', summary: 'An app\'s versions, newest first', response: json('Versions', appHistorySchema) },
  { method: 'get', path: ws('/apps/list'), tag: 'apps', summary: 'The apps the caller may read', query: pageQuery, response: json('Apps', appListSchema) },
  { method: 'delete', path: ws('/apps/delete/:path{.+}'), tag: 'apps', summary: 'Delete an app', response: text('Deleted') },

  { method: 'post', path: ws('/resources/type/create'), tag: 'resources', summary: 'Create a resource type (a JSON Schema)', body: createResourceTypeBody, response: created('The resource type', resourceTypeSchema) },
  { method: 'get', path: ws('/resources/type/list'), tag: 'resources', summary: 'The resource types', response: json('Resource types', z.array(resourceTypeSchema)) },
  { method: 'get', path: ws('/resources/type/get/:name'), tag: 'resources', summary: 'A resource type', response: json('The resource type', resourceTypeSchema) },
  { method: 'post', path: ws('/resources/type/update/:name'), tag: 'resources', summary: 'Change a resource type', body: updateResourceTypeBody, response: json('The resource type', resourceTypeSchema) },
  { method: 'delete', path: ws('/resources/type/delete/:name'), tag: 'resources', summary: 'Delete a resource type', response: text('Deleted') },
  { method: 'post', path: ws('/resources/create'), tag: 'resources', summary: 'Create a resource', body: createResourceBody, response: createdText('The resource\'s path') },
  { method: 'get', path: ws('/resources/list'), tag: 'resources', summary: 'The resources the caller may read', query: resourceListQuery, response: json('Resources, without their values', z.array(resourceListItemSchema)) },
  { method: 'get', path: ws('/resources/get/:path{.+}'), tag: 'resources', summary: 'A resource', response: json('The resource', resourceSchema) },
  { method: 'get', path: ws('/resources/get_value_interpolated/:path{.+}'), tag: 'resources', summary: 'A resource\'s value with its $var: and $res: references resolved', response: json('The value') },
  { method: 'post', path: ws('/resources/update/:path{.+}'), tag: 'resources', summary: 'Change a resource', body: updateResourceBody, response: json('The resource', updatedResourceSchema) },
  { method: 'post', path: ws('/resources/update_value/:path{.+}'), tag: 'resources', summary: 'Replace a resource\'s value (Windmill clients)', body: updateValueBody, response: text('Updated') },
  { method: 'get', path: ws('/resources/exists/:path{.+}'), tag: 'resources', summary: 'Whether a resource exists (Windmill clients)', response: json('true or false') },
  { method: 'delete', path: ws('/resources/delete/:path{.+}'), tag: 'resources', summary: 'Delete a resource', response: text('Deleted') },
  { method: 'post', path: ws('/variables/create'), tag: 'variables', summary: 'Create a variable (secret ones are encrypted)', body: createVariableBody, response: createdText('The variable\'s path') },
  { method: 'get', path: ws('/variables/list'), tag: 'variables', summary: 'The variables the caller may read (secret values left out)', query: pageQuery, response: json('Variables', z.array(variableSchema)) },
  { method: 'get', path: ws('/variables/get/:path{.+}'), tag: 'variables', summary: 'A variable (`?encrypted=true`: its value sealed with the sync key)', response: json('The variable', variableWithValueSchema) },
  { method: 'get', path: ws('/variables/get_value/:path{.+}'), tag: 'variables', summary: 'A variable\'s value (Windmill clients)', response: json('The value as a JSON string') },
  { method: 'get', path: ws('/scripts/exists/p/:path{.+}'), tag: 'scripts', summary: 'Whether a script is at the path (Windmill clients\' existsScriptByPath)', response: json('true or false', z.boolean()) },
  { method: 'get', path: ws('/flows/exists/:path{.+}'), tag: 'flows', summary: 'Whether a flow is at the path (Windmill clients\' existsFlowByPath)', response: json('true or false', z.boolean()) },
  { method: 'get', path: ws('/scripts/list_paths'), tag: 'scripts', summary: 'The paths of the scripts the caller may read, sorted (Windmill clients)', response: json('Paths', z.array(z.string())) },
  { method: 'get', path: ws('/flows/list_paths'), tag: 'flows', summary: 'The paths of the flows the caller may read, archived ones left out, sorted (Windmill clients)', response: json('Paths', z.array(z.string())) },
  { method: 'get', path: ws('/resources/type/listnames'), tag: 'resources', summary: 'The names of the resource types, sorted (Windmill clients)', response: json('Names', z.array(z.string())) },
  { method: 'get', path: ws('/scripts/deployment_status/h/:hash'), tag: 'scripts', summary: 'A version\'s lock; svc locks at create, so a stored version is deployed (Windmill clients)', response: json('The lock and no lock errors', z.object({ lock: z.string().nullable(), lock_error_logs: z.null() })) },
  { method: 'get', path: ws('/variables/exists/:path{.+}'), tag: 'variables', summary: 'Whether a variable exists (Windmill clients)', response: json('true or false') },
  { method: 'post', path: ws('/variables/update/:path{.+}'), tag: 'variables', summary: 'Change a variable', body: updateVariableBody, response: json('The variable', variableSchema) },
  { method: 'delete', path: ws('/variables/delete/:path{.+}'), tag: 'variables', summary: 'Delete a variable', response: text('Deleted') },

  { method: 'post', path: ws('/http_triggers/create'), tag: 'routes', summary: 'Create an HTTP route served under /api/r/<workspace>/', body: createRouteBody, response: created('The route', httpTriggerSchema) },
  { method: 'post', path: ws('/http_triggers/update/:path{.+}'), tag: 'routes', summary: 'Change an HTTP route', body: updateRouteBody, response: json('The route', httpTriggerSchema) },
  { method: 'get', path: ws('/http_triggers/get/:path{.+}'), tag: 'routes', summary: 'An HTTP route', response: json('The route', httpTriggerSchema) },
  { method: 'get', path: ws('/http_triggers/list'), tag: 'routes', summary: 'The routes the caller may read', query: pageQuery, response: json('Routes', z.array(httpTriggerSchema)) },
  { method: 'delete', path: ws('/http_triggers/delete/:path{.+}'), tag: 'routes', summary: 'Delete an HTTP route', response: text('Deleted') },
  { method: 'post', path: ws('/openapi/generate'), tag: 'routes', summary: 'The OpenAPI 3.1 document of the workspace\'s routes and webhooks the filters select', body: generateBody, response: json('The document (JSON or YAML, as `format` asks)') },

  { method: 'post', path: ws('/schedules/create'), tag: 'schedules', summary: 'Create a schedule (cron, time zone, a script or flow and its arguments)', body: createScheduleBody, response: created('The schedule', scheduleSchema) },
  { method: 'post', path: ws('/schedules/update/:path{.+}'), tag: 'schedules', summary: 'Change a schedule', body: updateScheduleBody, response: json('The schedule', scheduleSchema) },
  { method: 'post', path: ws('/schedules/setenabled/:path{.+}'), tag: 'schedules', summary: 'Turn a schedule on or off', body: enabledBody, response: json('The schedule', scheduleSchema) },
  { method: 'get', path: ws('/schedules/get/:path{.+}'), tag: 'schedules', summary: 'A schedule', response: json('The schedule', scheduleSchema) },
  { method: 'get', path: ws('/schedules/list'), tag: 'schedules', summary: 'The schedules the caller may read', query: pageQuery, response: json('Schedules', z.array(scheduleSchema)) },
  { method: 'delete', path: ws('/schedules/delete/:path{.+}'), tag: 'schedules', summary: 'Delete a schedule', response: text('Deleted') },
];
