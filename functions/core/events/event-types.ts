/** The event types of spec 6.1 (workspace webhook) and 6.2 (instance events webhook). */

export const WORKSPACE_EVENT_TYPES = [
  'CreateScript',
  'UpdateScript',
  'DeleteScript',
  'DeleteScriptPath',
  'CreateFlow',
  'UpdateFlow',
  'ArchiveFlow',
  'DeleteFlow',
  'CreateApp',
  'UpdateApp',
  'DeleteApp',
  'CreateResource',
  'UpdateResource',
  'DeleteResource',
  'CreateResourceType',
  'UpdateResourceType',
  'DeleteResourceType',
  'CreateVariable',
  'UpdateVariable',
  'DeleteVariable',
  'CreateFolder',
  'UpdateFolder',
  'DeleteFolder',
  'CreateSchedule',
  'UpdateSchedule',
  'DeleteSchedule',
  'TokenExpiringSoon',
  'TokenExpired',
] as const;
export type WorkspaceEventType = (typeof WORKSPACE_EVENT_TYPES)[number];

/** Spec 6.2. `OAuthSignup` is not sent until the service has single sign-on (README). */
export const INSTANCE_EVENT_TYPES = ['UserAdded', 'UserInvited', 'UserJoinedWorkspace', 'OAuthSignup'] as const;
export type InstanceEventType = (typeof INSTANCE_EVENT_TYPES)[number];

/** The scope of the instance events webhook's deliveries (workspace ids never start with `*`). */
export const INSTANCE_SCOPE = '*instance';
