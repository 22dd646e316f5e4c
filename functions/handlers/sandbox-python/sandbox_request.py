"""Checks the invocation payload: the sandbox trusts nothing it is sent (RunRequest in ports.ts)."""

import re

LANGUAGES = ("bun", "deno", "nativets", "python3", "bash")


def validate_request(event):
    """Returns (request, None) for a usable RunRequest, else (None, a message saying what is wrong)."""
    if not isinstance(event, dict):
        return None, "the sandbox request is invalid: (payload): expected an object"
    problems = [f"{name}: {problem}" for name, check in FIELDS.items() if (problem := check(event.get(name))) is not None]
    if problems:
        return None, "the sandbox request is invalid: " + "; ".join(problems)
    modules = event.get("modules")
    if modules is not None and module_files(modules) is not None:
        return None, "the sandbox request is invalid: modules: " + module_files(modules)
    bad_urls = [name for name in ("requestUrl", "resultUrl") if event.get(name) is not None and not is_url(event[name])]
    if bad_urls:
        return None, "the sandbox request is invalid: " + "; ".join(f"{name}: expected a URL" for name in bad_urls)
    if event["language"] != "python3":
        return None, f"the Python sandbox does not run {event['language']} jobs"
    return event, None


def is_url(value):
    return isinstance(value, str) and re.match(r"^https?://", value) is not None


MODULE_FILE = re.compile(r"^[fu](/[A-Za-z0-9_.-]+){2,}\.py$")


def module_files(value):
    """The workspace scripts a job imports: relative file names of its layout, never climbing out."""
    if not isinstance(value, dict):
        return "expected an object"
    bad = [name for name, source in value.items() if not isinstance(source, str) or not MODULE_FILE.match(name) or any(p in (".", "..") for p in name.split("/"))]
    return f"not a file of the layout: {', '.join(bad)}" if bad else None


def string(value):
    return None if isinstance(value, str) else "expected a string"


def language(value):
    return None if value in LANGUAGES else f"expected one of {', '.join(LANGUAGES)}"


def positive_number(value):
    # bool is an int in Python, but JSON true is not a number.
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return None if ok else "expected a positive number"


def object_of(check_value):
    def check(value):
        if not isinstance(value, dict):
            return "expected an object"
        bad = [key for key, item in value.items() if check_value(item) is not None]
        return f"bad value at {', '.join(bad)}" if bad else None

    return check


def anything(_value):
    return None


def input_schema(value):
    if not isinstance(value, dict):
        return "expected an object"
    if value.get("type") != "object":
        return 'type: expected "object"'
    if object_of(object_of(anything))(value.get("properties")) is not None:
        return "properties: expected an object of objects"
    required = value.get("required")
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return "required: expected a list of strings"
    return None


FIELDS = {
    "jobId": string,
    "workspaceId": string,
    "language": language,
    "scriptHash": string,
    "content": string,
    "args": object_of(anything),
    "schema": input_schema,
    "env": object_of(string),
    "timeoutMs": positive_number,
    "maxOutputBytes": positive_number,
}
