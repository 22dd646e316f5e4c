"""Payloads past Lambda's 6 MB, the Python sandbox's side (sandbox-payload-offload.ts has the worker's).

A request too large to invoke with comes as a stub whose requestUrl is a presigned GET URL of the
whole request; an answer too large to return is PUT to the request's resultUrl (a presigned URL
of one object of this job) and answered {"events": [{"type": "stored"}]}. The sandbox has no
credentials: these URLs are all it can reach of the bucket.
"""
import json
import urllib.request

from sandbox_request import validate_request


def fetch_request(stub):
    """Returns (request, None) for the request the stub points to, else (None, what is wrong)."""
    try:
        with urllib.request.urlopen(stub["requestUrl"], timeout=60) as response:
            fetched = json.loads(response.read().decode("utf-8"))
    except Exception as error:  # any failure to fetch is the job's outcome, never a crash
        return None, f"the sandbox request could not be fetched from the bucket: {error}"
    request, problem = validate_request(fetched)
    if problem:
        return None, problem
    same = all(request[name] == stub[name] for name in ("jobId", "workspaceId", "language")) and request["env"].get("OV_USERNAME") == stub["env"].get("OV_USERNAME")
    if not same or request.get("requestUrl"):
        return None, "the sandbox request fetched from the bucket is not the one this invocation names"
    return request, None


def store_answer(url, body):
    """PUTs the answer's JSON text to the presigned URL; None when stored, else why not."""
    put = urllib.request.Request(url, data=body.encode("utf-8"), method="PUT", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(put, timeout=120) as response:
            response.read()
        return None
    except Exception as error:
        return str(error)
