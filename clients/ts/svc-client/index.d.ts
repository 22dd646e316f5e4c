/**
 * svc-client: what a running job needs from the svc API. Import it in a script with no install
 * step: `import * as svc from 'svc-client'`. The job's environment (OV_TOKEN, OV_WORKSPACE,
 * BASE_INTERNAL_URL, ...) is read on every call.
 */

/** Who and where the running job is; a variable the job was not given is null. */
export interface JobContext {
  /** OV_WORKSPACE */
  workspace: string | null;
  /** OV_JOB_ID */
  jobId: string | null;
  /** OV_JOB_PATH: the path of the script the job runs */
  jobPath: string | null;
  /** OV_USERNAME: who triggered the job */
  username: string | null;
  /** OV_FLOW_JOB_ID: the flow job this job is a step of */
  flowJobId: string | null;
  /** OV_FLOW_PATH */
  flowPath: string | null;
  /** OV_ROOT_FLOW_JOB_ID: the outermost flow job */
  rootFlowJobId: string | null;
  /** BASE_INTERNAL_URL: where the job reaches the API */
  baseUrl: string | null;
}

/** A non-2xx answer of the API; the message carries the status and the API's own message. */
export declare class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number);
}

/**
 * The value of the resource at `path` (`u/alice/db`, or `$res:u/alice/db`), with any `$var:`
 * references inside it resolved. Throws ApiError when the job may not read it or it is missing.
 */
export declare function getResource<T = any>(path: string): Promise<T>;

/** The value of the variable at `path` (`u/alice/key`, or `$var:u/alice/key`). */
export declare function getVariable(path: string): Promise<string>;

/** A file a multipart webhook stored, as the job's argument holds it. */
export interface UploadedFile {
  s3: string;
  filename: string;
  content_type: string;
  size: number;
}

/** The bytes of a file a multipart webhook stored for this job (the entry or its `s3` key). */
export declare function downloadFile(file: UploadedFile | string): Promise<Uint8Array>;

/**
 * Uploads a file of any size for the script or flow at `path` (parts straight to storage) and
 * returns the object to name in its webhook payload. For a file on disk pass `await fs.openAsBlob(file)`.
 */
export declare function uploadFile(path: string, data: Uint8Array | string | Blob, options?: { filename?: string; contentType?: string }): Promise<UploadedFile>;

/** The running job's context, from its environment. */
export declare function getContext(): JobContext;

export interface ResumeUrls {
  resume: string;
  cancel: string;
  approvalPage: string;
}

/** Resume and cancel URLs for this job as an approval step, plus its approval page; each call counts once. */
export function getResumeUrls(approver?: string, flowLevel?: boolean): Promise<ResumeUrls>;

export interface ChatApprovalRequest {
  /** The name of one of the workspace's Slack chat connections, which a workspace admin sets up (`slack`). */
  chatResourcePath: string;
  /** The channel to post in (an id such as C0123ABCD). */
  channelId: string;
  message: string;
  /** Only this svc user (username or email) may decide; by default the step's rules alone. */
  approver?: string;
  /** Prefill values of the step's form, by field. */
  defaultArgsJson?: Record<string, unknown>;
  /** Runtime choices of the form's fields, by field. */
  dynamicEnumsJson?: Record<string, string[]>;
}

export interface ChatApprovalRequested extends ResumeUrls {
  message_id: string;
  channel: string;
  /** Slack's id of the posted message; null when posting failed. */
  ts: string | null;
  posted: boolean;
  /** Why posting failed; the resume URLs still decide the step then. */
  error: string | null;
}

/** Posts Approve / Reject buttons for this approval step in a Slack channel; call once per channel to require several. */
export function requestInteractiveChatApproval(request: ChatApprovalRequest): Promise<ChatApprovalRequested>;

export interface CollabApprovalRequest {
  /** The `team_name` of a `teams` connection the job may read. */
  teamName: string;
  /** A channel of that team, by name ("General" for the team's general channel). */
  channelName: string;
  message: string;
  approver?: string;
  defaultArgsJson?: Record<string, unknown>;
  dynamicEnumsJson?: Record<string, string[]>;
}

/** Posts an Adaptive Card with the step's form and Approve / Reject in a Teams channel; call once per channel to require several. */
export function requestInteractiveCollabApproval(request: CollabApprovalRequest): Promise<ChatApprovalRequested>;

export interface ConversationMessageSent extends ResumeUrls {
  posted: boolean;
  ts: string | null;
  error: string | null;
}

/** Posts a text and an Adaptive Card with a link to this step's approval page to a Teams conversation. */
export function sendMessageToConversation(request: { conversationId: string; text?: string; cardBlock?: Record<string, unknown> }): Promise<ConversationMessageSent>;
