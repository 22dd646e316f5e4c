"""The Python sandbox Lambda: runs one python3 job per invocation, for the worker.

Its role has no permissions, and the job runs in a child process that sees only the job's
environment, so user code holds no service credentials. Lambda's Python runtime cannot stream a
response: the job's log, its stream chunks and its outcome come back together as
{"events": [SandboxEvent, ...]} in the order they happened (see sandbox-protocol.ts).
"""
import json
import signal
import sys

from environment_sweep import sweep_environment
from one_shot_job import run_job
from payload_reference import fetch_request, store_answer
from sandbox_request import validate_request

# Kept back from the function's deadline, so a job that runs long still gets its outcome out.
DEADLINE_MARGIN_MS = 2000
# Lambda refuses a synchronous response above 6 MB (6,291,456 bytes); this leaves room to spare.
MAX_RESPONSE_BYTES = 6_000_000


def handler(event, context):
    request, problem = validate_request(event)
    if not problem and request.get("requestUrl"):
        # Past 6 MB the worker sends a stub pointing to the request in the bucket.
        request, problem = fetch_request(request)
    if problem:
        return respond([], sandbox_error(problem))
    timeout_ms = request["timeoutMs"]
    if context is not None:
        timeout_ms = max(1, min(timeout_ms, context.get_remaining_time_in_millis() - DEADLINE_MARGIN_MS))
    try:
        events, outcome = run_job(request, timeout_ms)
    except Exception as error:  # the sandbox itself failed: still an outcome, never a raw error
        events, outcome = [], sandbox_error(f"the sandbox failed: {type(error).__name__}: {error}")
    finally:
        if context is not None:  # on Lambda only: elsewhere this process shares its uid with others
            sweep_environment()
    return respond(events, outcome, request.get("resultUrl"))


def respond(events, outcome, result_url=None):
    response = {"events": [*events, {"type": "outcome", "outcome": outcome}]}
    # Measured as the runtime will encode it (ensure_ascii expands non-ASCII text).
    text = json.dumps(response)
    if len(text) <= MAX_RESPONSE_BYTES:
        return response
    # Past Lambda's 6 MB the whole answer goes to the bucket, where the worker reads it back.
    why = store_answer(result_url, text) if result_url else "no place to store it was given"
    if why is None:
        return {"events": [{"type": "stored"}]}
    error = {"name": "OutputLimitExceeded", "message": f"the job's output does not fit in the Python sandbox's 6 MB response, and could not be stored in the bucket: {why}"}
    return {"events": [{"type": "outcome", "outcome": {"ok": False, "error": error}}]}


def sandbox_error(message):
    return {"ok": False, "error": {"name": "SandboxError", "message": message}}


def main():
    """For the in-process invoker (tests, local bridges): an event on stdin, the answer on stdout."""
    # Ending the handler by exception runs its cleanup, which kills the job's process group.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        event = json.load(sys.stdin)
    except ValueError:
        event = None
    json.dump(handler(event, None), sys.stdout)


if __name__ == "__main__":
    main()
