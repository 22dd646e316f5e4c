/**
 * Every code an API error carries, so callers and tests decide by a code the compiler checks,
 * never by the wording of a message.
 */
export type ErrorCode =
  | 'cancel_hidden'
  | 'cloudevents_batch_unsupported'
  | 'confirm_on_page'
  | 'conflict'
  | 'credential_header'
  | 'cross_origin_request'
  | 'forbidden'
  | 'internal'
  | 'invalid_cloudevent'
  | 'invalid_credentials'
  | 'invalid_encrypted_value'
  | 'invalid_flow'
  | 'invalid_input'
  | 'invalid_json'
  | 'invalid_utf8'
  | 'invalid_multipart'
  | 'invalid_path'
  | 'invalid_payload'
  | 'invalid_request'
  | 'invalid_resource'
  | 'invalid_resume_id'
  | 'invalid_scope'
  | 'invalid_script'
  | 'language_unavailable'
  | 'invalid_signature'
  | 'invalid_stored_document'
  | 'invalid_svc_response'
  | 'invalid_upload_parts'
  | 'invalid_workspace_id'
  | 'jobs_per_run_limit'
  | 'json_too_deep'
  | 'login_required'
  | 'misconfigured'
  | 'not_completed'
  | 'not_found'
  | 'not_a_person'
  | 'not_an_approver'
  | 'not_in_group'
  | 'object_storage_not_configured'
  | 'payload_too_large'
  | 'reference_not_allowed'
  | 'result_deleted'
  | 'run_depth_limit'
  | 'schema_inference_failed'
  | 'self_approval_disabled'
  | 'sync_wait_timeout'
  | 'too_many_chat_messages'
  | 'too_many_login_attempts'
  | 'too_many_queued_jobs'
  | 'too_many_schedules'
  | 'unauthorized'
  | 'unknown_member'
  | 'unknown_resource_type'
  | 'unknown_user'
  | 'unresolvable_reference'
  | 'unsupported_media_type'
  | 'upstream_unavailable'
  | 'upload_expired'
  | 'upload_not_found'
  | 'upload_too_large'
  | 'uri_too_long'
  | 'value_too_large';

/**
 * The one error type the core throws for anything a caller did wrong or asked for that is not
 * there. The HTTP layer turns it into `{"error": {"code", "message"}}` with `status`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 414 | 415 | 429 | 422 | 500 | 503 | 504,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (code: ErrorCode, message: string, details?: Record<string, unknown>) =>
  new ApiError(400, code, message, details);
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (message: string) => new ApiError(409, 'conflict', message);
