import { z } from 'zod';
import { pageQuery } from '../list-query.js';
import type { ApiOperation } from '../../core/openapi/api-document.js';
import { createUserBody, loginBody, setPasswordBody } from '../../core/identity/users.js';
import { createTokenBody } from '../../core/identity/tokens.js';
import { createWorkspaceBody, objectStorageBody } from '../../core/workspace/workspaces.js';
import { addMemberBody, removeMemberBody, updateMemberBody } from '../../core/identity/members.js';
import { inviteBody, usernameBody, workspaceBody } from '../../core/identity/invites.js';
import { createGroupBody, memberBody } from '../../core/identity/groups.js';
import { createFolderBody, updateFolderBody } from '../../core/identity/folders.js';
import { editErrorHandlerBody } from '../../core/workspace/workspace-error-handler.js';
import { jobLimitsSetting, retentionInput } from '../../core/documents/entity-values.js';
import { prefixBody } from '../../core/triggers/route-prefix.js';
import { setKeyBody } from '../../core/workspace/sync-key.js';
import { editInstanceWebhookBody, editWorkspaceWebhookBody } from '../../core/events/webhook-settings.js';
import { deliveryListQuery } from '../../core/events/deliveries.js';
import { chatConnectionInput } from '../../core/chat/chat-settings.js';
import { folderSchema, groupSchema } from '../../core/views/item-views.js';
import { auditEntrySchema, inviteSchema, loginSchema, memberSchema, myInviteSchema, noticeSchema, tokenSchema, userSchema, workspaceUserSchema } from '../../core/views/identity-views.js';
import { runtimeSchema } from '../../core/views/approval-views.js';
import { chatConnectionSchema, deliverySchema, errorHandlerSchema, instanceWebhookSchema, retentionSchema, routePrefixSchema, syncKeySchema, workspaceSchema, workspaceSettingsSchema, workspaceWebhookSchema } from '../../core/views/settings-views.js';
import { created, createdText, json, text, ws } from './helpers.js';

/** The service, sign-in, users and tokens, workspaces and their members, groups, folders, settings and events. */
export const identityOperations: ApiOperation[] = [
  { method: 'get', path: '/api/version', tag: 'service', summary: 'The service version ("svc v<version>")', auth: 'public', response: text('The version') },
  { method: 'get', path: '/api/runtime', tag: 'service', summary: 'How this shell confines jobs, and the platform Go binaries are built for', auth: 'public', response: json('How jobs are confined here, and the platform Go binaries are built for (null where the server builds them)', runtimeSchema) },
  { method: 'get', path: '/api/openapi.json', tag: 'service', summary: 'This document', auth: 'public', response: json('The OpenAPI 3.1 document of the API') },

  { method: 'post', path: '/api/auth/login', tag: 'users', summary: 'Sign in with a password: sets the session cookie', auth: 'public', body: loginBody, response: json('Who signed in and when the session ends; the session cookie is set', loginSchema) },
  { method: 'post', path: '/api/auth/logout', tag: 'users', summary: 'End the session', response: text('Signed out') },
  { method: 'get', path: '/api/audit/list', tag: 'users', summary: 'The audit log (instance admins)', response: json('Audit entries, newest first', z.array(auditEntrySchema)) },
  { method: 'get', path: '/api/users/whoami', tag: 'users', summary: 'Who the caller is', response: json('The caller', userSchema) },
  { method: 'post', path: '/api/users/create', tag: 'users', summary: 'Create a user (instance admins)', body: createUserBody, response: createdText('The new user\'s name') },
  { method: 'get', path: '/api/users/list', tag: 'users', summary: 'The instance\'s users (instance admins)', response: json('Users', z.array(userSchema)) },
  { method: 'post', path: '/api/users/setpassword', tag: 'users', summary: 'Change the caller\'s password', body: setPasswordBody, response: text('Changed') },
  { method: 'post', path: '/api/users/tokens/create', tag: 'tokens', summary: 'Create an API token (shown once)', body: createTokenBody, response: createdText('The token') },
  { method: 'get', path: '/api/users/tokens/list', tag: 'tokens', summary: 'The caller\'s tokens (prefixes, never the secrets)', response: json('Tokens', z.array(tokenSchema)) },
  { method: 'delete', path: '/api/users/tokens/delete/:prefix', tag: 'tokens', summary: 'Revoke a token by its prefix', response: text('Deleted') },
  { method: 'get', path: '/api/users/notifications', tag: 'users', summary: 'Notices sent to the caller (the outbox)', response: json('Notices', z.array(noticeSchema)) },
  { method: 'get', path: '/api/users/list_invites', tag: 'workspaces', summary: 'Invitations waiting for the caller', response: json('Invitations', z.array(myInviteSchema)) },
  { method: 'post', path: '/api/users/accept_invite', tag: 'workspaces', summary: 'Accept an invitation to a workspace', body: workspaceBody, response: json('The membership', memberSchema) },
  { method: 'post', path: '/api/users/decline_invite', tag: 'workspaces', summary: 'Decline an invitation', body: workspaceBody, response: text('Declined') },

  { method: 'post', path: '/api/workspaces/create', tag: 'workspaces', summary: 'Create a workspace', body: createWorkspaceBody, response: createdText('The workspace id') },
  { method: 'get', path: '/api/workspaces/list', tag: 'workspaces', summary: 'The workspaces the caller belongs to', response: json('Workspaces', z.array(workspaceSchema)) },
  { method: 'get', path: ws('/workspaces/get_settings'), tag: 'workspaces', summary: 'The workspace\'s settings', response: json('Settings', workspaceSettingsSchema) },
  { method: 'post', path: ws('/workspaces/edit_error_handler'), tag: 'workspaces', summary: 'Set or clear the workspace error handler', body: editErrorHandlerBody, response: json('The setting', errorHandlerSchema) },
  { method: 'get', path: ws('/workspaces/job_limits'), tag: 'workspaces', summary: 'The workspace\'s job limits', response: json('The limits', jobLimitsSetting) },
  { method: 'post', path: ws('/workspaces/job_limits'), tag: 'workspaces', summary: 'Set the workspace\'s job limits', body: jobLimitsSetting, response: json('The limits', jobLimitsSetting) },
  { method: 'get', path: ws('/workspaces/route_prefix'), tag: 'routes', summary: 'The custom prefix the workspace\'s routes are served under', response: json('The prefix and where the routes are served', routePrefixSchema) },
  { method: 'post', path: ws('/workspaces/route_prefix'), tag: 'routes', summary: 'Set or clear the route prefix (instance admins)', body: prefixBody, response: json('The prefix and where the routes are served', routePrefixSchema) },
  { method: 'post', path: ws('/workspaces/edit_object_storage'), tag: 'uploads', summary: 'Turn object storage (uploads) on or off', body: objectStorageBody, response: json('The workspace', workspaceSchema) },
  { method: 'get', path: ws('/workspaces/encryption_key'), tag: 'workspaces', summary: 'The workspace\'s sync encryption key (made on first use)', response: json('The key', syncKeySchema) },
  { method: 'post', path: ws('/workspaces/encryption_key'), tag: 'workspaces', summary: 'Set the sync encryption key', body: setKeyBody, response: json('The key', syncKeySchema) },
  { method: 'get', path: ws('/workspaces/retention'), tag: 'console', summary: 'How long finished runs are kept', response: json('The retention setting', retentionSchema) },
  { method: 'post', path: ws('/workspaces/retention'), tag: 'console', summary: 'Set how long finished runs are kept', body: retentionInput, response: json('The retention setting', retentionSchema) },
  { method: 'get', path: ws('/users/list'), tag: 'workspaces', summary: 'The workspace\'s members', query: pageQuery, response: json('Members and their roles', z.array(memberSchema)) },
  { method: 'post', path: ws('/workspaces/add_user'), tag: 'workspaces', summary: 'Add a member', body: addMemberBody, response: created('The membership', memberSchema) },
  { method: 'post', path: ws('/workspaces/remove_user'), tag: 'workspaces', summary: 'Remove a member', body: removeMemberBody, response: text('Removed') },
  { method: 'post', path: ws('/users/update/:username'), tag: 'workspaces', summary: 'Change a member\'s role', body: updateMemberBody, response: json('The membership', memberSchema) },
  { method: 'post', path: ws('/workspaces/invite_user'), tag: 'workspaces', summary: 'Invite a user to the workspace', body: inviteBody, response: created('The invitation', inviteSchema) },
  { method: 'get', path: ws('/workspaces/list_pending_invites'), tag: 'workspaces', summary: 'Invitations not answered yet', response: json('Invitations', z.array(inviteSchema)) },
  { method: 'post', path: ws('/workspaces/delete_invite'), tag: 'workspaces', summary: 'Withdraw an invitation', body: usernameBody, response: text('Withdrawn') },

  { method: 'post', path: ws('/workspaces/edit_webhook'), tag: 'events', summary: 'Set the workspace events webhook (CloudEvents, Standard Webhooks signature)', body: editWorkspaceWebhookBody, response: json('The webhook and whether it signs (never the secret)', workspaceWebhookSchema) },
  { method: 'get', path: ws('/workspaces/webhook_deliveries'), tag: 'events', summary: 'Recent deliveries of workspace events', query: deliveryListQuery, response: json('Deliveries, newest first', z.array(deliverySchema)) },
  { method: 'post', path: ws('/workspaces/webhook_deliveries/:id/redeliver'), tag: 'events', summary: 'Send a workspace event again', response: json('The delivery', deliverySchema) },
  { method: 'get', path: '/api/settings/instance_events_webhook', tag: 'events', summary: 'The instance events webhook (instance admins)', response: json('The webhook', instanceWebhookSchema) },
  { method: 'post', path: '/api/settings/instance_events_webhook', tag: 'events', summary: 'Set the instance events webhook (instance admins)', body: editInstanceWebhookBody, response: json('The webhook and whether it signs (never the secret)', instanceWebhookSchema) },
  { method: 'get', path: '/api/settings/instance_events_deliveries', tag: 'events', summary: 'Recent deliveries of instance events', query: deliveryListQuery, response: json('Deliveries, newest first', z.array(deliverySchema)) },
  { method: 'post', path: '/api/settings/instance_events_deliveries/:id/redeliver', tag: 'events', summary: 'Send an instance event again', response: json('The delivery', deliverySchema) },

  { method: 'post', path: ws('/groups/create'), tag: 'groups and folders', summary: 'Create a group', body: createGroupBody, response: created('The group', groupSchema) },
  { method: 'get', path: ws('/groups/listnames'), tag: 'groups and folders', summary: 'The names of the groups the caller may read, sorted (Windmill clients)', response: json('Names', z.array(z.string())) },
  { method: 'get', path: ws('/folders/listnames'), tag: 'groups and folders', summary: 'The names of the folders the caller may read, sorted (Windmill clients)', response: json('Names', z.array(z.string())) },
  { method: 'get', path: ws('/users/whoami'), tag: 'workspaces', summary: 'The caller as a member of the workspace: role, groups and folder rights (Windmill clients\' UserService.whoami)', response: json('The caller', workspaceUserSchema) },
  { method: 'get', path: ws('/users/username_to_email/:username'), tag: 'workspaces', summary: 'A member\'s email, as text (Windmill clients\' usernameToEmail)', response: text('The email') },
  { method: 'get', path: ws('/users/whois/:username'), tag: 'workspaces', summary: 'A member: role, groups and folder rights (Windmill clients\' UserService.whois)', response: json('The member', workspaceUserSchema) },
  { method: 'get', path: ws('/users/get/:username'), tag: 'workspaces', summary: 'A member, as users/whois shows them (Windmill clients\' UserService.getUser)', response: json('The member', workspaceUserSchema) },
  { method: 'get', path: ws('/users/list_usernames'), tag: 'workspaces', summary: 'The usernames of the workspace\'s members, sorted (Windmill clients)', response: json('Usernames', z.array(z.string())) },
  { method: 'get', path: ws('/groups/list'), tag: 'groups and folders', summary: 'The workspace\'s groups', query: pageQuery, response: json('Groups', z.array(groupSchema)) },
  { method: 'get', path: ws('/groups/get/:name'), tag: 'groups and folders', summary: 'A group and its members', response: json('The group', groupSchema) },
  { method: 'post', path: ws('/groups/adduser/:name'), tag: 'groups and folders', summary: 'Add a member to a group', body: memberBody, response: json('The group', groupSchema) },
  { method: 'post', path: ws('/groups/removeuser/:name'), tag: 'groups and folders', summary: 'Remove a member from a group', body: memberBody, response: json('The group', groupSchema) },
  { method: 'delete', path: ws('/groups/delete/:name'), tag: 'groups and folders', summary: 'Delete a group', response: text('Deleted') },
  { method: 'post', path: ws('/folders/create'), tag: 'groups and folders', summary: 'Create a folder', body: createFolderBody, response: created('The folder', folderSchema) },
  { method: 'get', path: ws('/folders/list'), tag: 'groups and folders', summary: 'The workspace\'s folders', query: pageQuery, response: json('Folders', z.array(folderSchema)) },
  { method: 'get', path: ws('/folders/get/:name'), tag: 'groups and folders', summary: 'A folder and who may read or write it', response: json('The folder', folderSchema) },
  { method: 'post', path: ws('/folders/update/:name'), tag: 'groups and folders', summary: 'Change a folder\'s owners and extra permissions', body: updateFolderBody, response: json('The folder', folderSchema) },
  { method: 'delete', path: ws('/folders/delete/:name'), tag: 'groups and folders', summary: 'Delete an empty folder', response: text('Deleted') },

  { method: 'get', path: ws('/workspaces/chat_connections'), tag: 'chat approvals', summary: 'The workspace\'s Slack and Teams connections (no secrets)', response: json('Connections', z.array(chatConnectionSchema)) },
  { method: 'post', path: ws('/workspaces/chat_connections/:name'), tag: 'chat approvals', summary: 'Create or replace a chat connection', body: chatConnectionInput, response: json('The connection', chatConnectionSchema) },
  { method: 'delete', path: ws('/workspaces/chat_connections/:name'), tag: 'chat approvals', summary: 'Delete a chat connection', response: text('Deleted') },
];

