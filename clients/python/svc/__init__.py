"""svc: what a running job needs from the svc API.

Every job can `import svc` without installing anything: the runner puts this package beside the
script. Standard library only, so it runs as shipped on any Python 3.11+, locally and in the
python3.12 sandbox Lambda.

The environment is read on every call, never cached: a warm process serves many jobs, each with
its own token, workspace and ids.
"""
import json
import os
import secrets
import urllib.error
import urllib.parse
import urllib.request

__all__ = [
    "ApiError",
    "download_file",
    "get_context",
    "get_resource",
    "get_variable",
    "request_interactive_chat_approval",
    "request_interactive_collab_approval",
    "send_message_to_conversation",
    "upload_file",
]

# get_context() key -> the environment variable the worker sets for the job.
_CONTEXT_ENV = {
    "workspace": "OV_WORKSPACE",
    "job_id": "OV_JOB_ID",
    "job_path": "OV_JOB_PATH",
    "username": "OV_USERNAME",
    "flow_job_id": "OV_FLOW_JOB_ID",
    "flow_path": "OV_FLOW_PATH",
    "root_flow_job_id": "OV_ROOT_FLOW_JOB_ID",
    "base_url": "BASE_INTERNAL_URL",
}


class ApiError(Exception):
    """A non-2xx answer of the API. `status` is the HTTP status; the message never holds the token."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def get_resource(path):
    """The value of the resource at `path`, with any `$var:` references inside it resolved."""
    route = "resources/get_value_interpolated/" + _encode_path(_strip_prefix(path, "$res:", "get_resource"))
    return _api_get(route, f"get_resource({path!r})")


def get_variable(path):
    """The value of the variable at `path` (secret variables come back decrypted)."""
    what = f"get_variable({path!r})"
    body = _api_get("variables/get/" + _encode_path(_strip_prefix(path, "$var:", "get_variable")), what)
    if not isinstance(body, dict) or "value" not in body:
        raise RuntimeError(f"svc: {what}: the API answered without a value")
    return body["value"]


def get_resume_urls(approver=None, flow_level=False):
    """Resume and cancel URLs for this job as an approval step, plus its approval page.

    Each call makes a fresh resume id, so each URL handed out counts as one approval. With
    flow_level the URLs are pre-approvals of the flow, counted by any later suspend step of it.
    """
    resume_id = secrets.randbelow(2**32)
    params = {**({"approver": approver} if approver else {}), **({"flow_level": "true"} if flow_level else {})}
    query = "?" + urllib.parse.urlencode(params) if params else ""
    route = f"jobs/resume_urls/{urllib.parse.quote(_required('OV_JOB_ID'), safe='')}/{resume_id}{query}"
    urls = _api_get(route, "get_resume_urls()")
    return {"resume": urls["resume"], "cancel": urls["cancel"], "approval_page": urls["approvalPage"]}


def request_interactive_chat_approval(chat_resource_path, channel_id, message, approver=None, default_args_json=None, dynamic_enums_json=None):
    """Asks for this approval step's decision in a Slack channel, with Approve / Reject buttons.

    The service posts through the workspace's Slack chat connection named chat_resource_path, which a
    workspace admin sets up (the job never sees its token). Approve opens the step's form in a modal, prefilled from default_args_json, with the
    choices of dynamic_enums_json. Each call is one approval: call it once per channel to require
    several. approver (a username or email) limits who may decide. Returns the message's ts and
    posted, and the step's resume URLs, which still work if posting failed.
    """
    body = {
        "chat_resource_path": _strip_prefix(chat_resource_path, "$res:", "request_interactive_chat_approval"),
        "channel_id": channel_id,
        "message": message,
        **({"approver": approver} if approver else {}),
        **({"default_args_json": default_args_json} if default_args_json else {}),
        **({"dynamic_enums_json": dynamic_enums_json} if dynamic_enums_json else {}),
    }
    return _api_post("chat/slack/request_approval/" + urllib.parse.quote(_required("OV_JOB_ID"), safe=""), body, "request_interactive_chat_approval()")


def request_interactive_collab_approval(team_name, channel_name, message, approver=None, default_args_json=None, dynamic_enums_json=None):
    """The same in Microsoft Teams: an Adaptive Card with the step's form and Approve / Reject.

    Posted to the channel channel_name of the team team_name (the `teams` connection the job may
    read whose team_name is team_name). Returns as request_interactive_chat_approval does.
    """
    body = {
        "team_name": team_name,
        "channel_name": channel_name,
        "message": message,
        **({"approver": approver} if approver else {}),
        **({"default_args_json": default_args_json} if default_args_json else {}),
        **({"dynamic_enums_json": dynamic_enums_json} if dynamic_enums_json else {}),
    }
    return _api_post("chat/teams/request_approval/" + urllib.parse.quote(_required("OV_JOB_ID"), safe=""), body, "request_interactive_collab_approval()")


def send_message_to_conversation(conversation_id, text="", card_block=None):
    """The basic variant: text and an Adaptive Card (card_block) in a Teams conversation, with a
    button opening this approval step's approval page (no callback: the page decides). Uses the one
    `teams` connection the job may read.
    """
    body = {"conversation_id": conversation_id, "text": text, **({"card_block": card_block} if card_block else {})}
    return _api_post("chat/teams/send_message/" + urllib.parse.quote(_required("OV_JOB_ID"), safe=""), body, "send_message_to_conversation()")


def download_file(file):
    """The bytes of a file a multipart webhook stored for this job.

    Pass the argument's entry ({"s3": ..., "filename": ...}) or its s3 key. Readable by whoever may
    read the jobs of the script or flow that received it.
    """
    key = file.get("s3") if isinstance(file, dict) else file
    if not isinstance(key, str) or not key:
        raise TypeError("svc: download_file needs an uploaded file ({'s3': ...}) or its s3 key")
    route = "job_helpers/download_s3_file?file_key=" + urllib.parse.quote(key, safe="")
    what = f"download_file({key!r})"
    try:
        return _api_request(route, what, "application/octet-stream", follow_redirects=False)
    except _Redirect as redirect:
        # On AWS the API answers with a presigned S3 URL: fetched without the token (S3 would
        # refuse two credentials, and urllib would forward the Authorization header).
        try:
            with urllib.request.urlopen(redirect.location) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", errors="replace")
            raise ApiError(f"svc: {what} failed with status {error.code} from storage: {_error_message(text, error.reason)}", error.code) from None


def _service_url(url: str) -> str:
    """A URL the API handed out on its own /api/ paths (a local upload's part URLs) is reached the
    way the job reaches the API, through BASE_INTERNAL_URL: behind the job network boundary the
    service's own address is not reachable. Other URLs (S3 presigned ones) are left as they are."""
    parsed = urllib.parse.urlsplit(url)
    if not parsed.path.startswith("/api/"):
        return url
    return _required("BASE_INTERNAL_URL").rstrip("/") + parsed.path + (f"?{parsed.query}" if parsed.query else "")


def upload_file(path, data, filename=None, content_type="application/octet-stream"):
    """Uploads a file of any size for the script or flow at `path`; returns the object to name in
    its webhook payload ({"files": [obj]}), which the job receives as it would a multipart file.

    `data` is bytes, or a binary file opened for reading (read part by part, never whole). The
    parts go straight to storage (S3 presigned URLs on AWS); a failed upload is aborted.
    """
    what = f"upload_file({path!r})"
    if hasattr(data, "getbuffer"):  # io.BytesIO: already in memory, and without a file descriptor
        data = data.getbuffer()[data.tell():]
    if isinstance(data, (bytes, bytearray, memoryview)):
        size = len(data)
        read_part = _bytes_reader(bytes(data))
    else:
        size = os.fstat(data.fileno()).st_size - data.tell()
        read_part = data.read
    body = {"path": path, "size": size, "content_type": content_type, **({"filename": filename} if filename else {})}
    created = _api_post("job_helpers/uploads/create", body, what)
    try:
        parts = []
        for part in created["parts"]:
            chunk = read_part(created["part_size"])
            # No token: the part URL is its own credential (and S3 would refuse a second one).
            request = urllib.request.Request(_service_url(part["url"]), data=chunk, method="PUT")
            try:
                with urllib.request.urlopen(request) as response:
                    parts.append({"part_number": part["part_number"], "etag": response.headers["ETag"]})
            except urllib.error.HTTPError as error:
                text = error.read().decode("utf-8", errors="replace")
                raise ApiError(f"svc: {what}: part {part['part_number']} failed with status {error.code}: {_error_message(text, error.reason)}", error.code) from None
        return _api_post("job_helpers/uploads/complete", {"upload": created["upload"], "parts": parts}, what)
    except BaseException:
        try:
            _api_post("job_helpers/uploads/abort", {"upload": created["upload"]}, what)
        except Exception:
            pass  # the upload's own failure is the one to report
        raise


def _bytes_reader(data):
    offset = 0

    def read(n):
        nonlocal offset
        chunk = data[offset:offset + n]
        offset += n
        return chunk

    return read


def get_context():
    """Who and where this job is; a variable the job was not given is None."""
    return {key: os.environ.get(name) for key, name in _CONTEXT_ENV.items()}


def _strip_prefix(path, prefix, fn):
    # Windmill's clients accept `$res:u/x/y` as well as `u/x/y`, so a bound argument can be passed on.
    if not isinstance(path, str) or not path:
        raise TypeError(f'svc: {fn} needs a path such as "u/alice/db"')
    return path[len(prefix):] if path.startswith(prefix) else path


def _encode_path(path):
    # Each segment on its own, so the slashes of `f/folder/name` stay separators.
    return "/".join(urllib.parse.quote(segment, safe="") for segment in path.split("/"))


def _required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"svc: {name} is not set; the client works inside a svc job, which is given it")
    return value


class _Redirect(Exception):
    def __init__(self, location):
        super().__init__(location)
        self.location = location


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # Declining makes urllib raise the 3xx as an HTTPError, which _api_request turns into _Redirect.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _api_request(route, what, accept, json_body=None, follow_redirects=True):
    base = _required("BASE_INTERNAL_URL").rstrip("/")
    url = f"{base}/api/w/{urllib.parse.quote(_required('OV_WORKSPACE'), safe='')}/{route}"
    headers = {"Authorization": f"Bearer {_required('OV_TOKEN')}", "Accept": accept}
    data = None
    if json_body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(json_body).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers=headers)
    opener = urllib.request.build_opener() if follow_redirects else urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request) as response:
            return response.read()
    except urllib.error.HTTPError as error:
        if not follow_redirects and 300 <= error.code < 400 and error.headers.get("Location"):
            raise _Redirect(error.headers["Location"]) from None
        text = error.read().decode("utf-8", errors="replace")
        # `from None`: the chained HTTPError would repeat the request in the traceback for nothing.
        raise ApiError(f"svc: {what} failed with status {error.code}: {_error_message(text, error.reason)}", error.code) from None
    except urllib.error.URLError as error:
        raise ConnectionError(f"svc: {what}: could not reach {base}: {error.reason}") from None


def _api_get(route, what):
    text = _api_request(route, what, "application/json").decode("utf-8")
    try:
        return json.loads(text)
    except ValueError:
        raise RuntimeError(f"svc: {what}: the API answered something that is not JSON") from None


def _api_post(route, body, what):
    text = _api_request(route, what, "application/json", body).decode("utf-8")
    try:
        return json.loads(text)
    except ValueError:
        raise RuntimeError(f"svc: {what}: the API answered something that is not JSON") from None


def _error_message(text, reason):
    # The API answers errors as {"error": {"code", "message"}}; anything else is shown briefly.
    try:
        message = json.loads(text)["error"]["message"]
        if isinstance(message, str):
            return message
    except (ValueError, TypeError, KeyError):
        pass
    return text.strip()[:200] or str(reason or "no message")
