"""Runs inside the sandboxed Python child.

It loads one user script and serves jobs one at a time, so a warm process can run many jobs of one
version. Jobs arrive as JSON lines on fd 3 and replies leave on fd 4: stdout and stderr stay the
user's, because they are the job's log.
"""
import ast
import asyncio
import base64
import builtins
import collections.abc
import datetime
import importlib.util
import inspect
import json
import os
import sys
import threading
import traceback
import types
import typing

REQUESTS_FD = 3
REPLIES_FD = 4

# Client libraries that read the job's token once, at import or first use (docs/windmill.md).
TOKEN_HOLDING_CLIENTS = frozenset({"wmill"})


class Shim:
    def __init__(self, script_path, replies):
        self.script_path = script_path
        self.replies = replies
        self.module = None
        # The output the parent reads the log and the trailer from, as it was at start.
        self.output = output_identity()
        self.environment = JobEnvironment()
        self.signature_of = None
        self.parameters = None

    def reply(self, message):
        self.replies.write(json.dumps(message) + "\n")
        self.replies.flush()

    def serve(self, job):
        try:
            self.environment.apply(job["env"])
            os.chdir(job["cwd"])
            outcome = self.call_main(job)
        except BaseException as error:  # SystemExit from user code fails the job, not the process
            outcome = {"ok": False, "error": to_job_error(error)}
        if threading.active_count() > 1:
            # A thread the job left running would carry on into the next job: end with this process.
            outcome["discard"] = True
        if any(name in sys.modules for name in TOKEN_HOLDING_CLIENTS):
            # Windmill's `wmill` keeps the first job's WM_TOKEN in a module global, dead once that
            # job ends: the next job gets a fresh process, so its client carries its own token.
            outcome["discard"] = True
        # Everything the job printed must reach the parent before the result.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # the job closed it (sys.stdout.close()): nothing of it is left to send
        done = {"type": "done", "id": job["id"], **outcome}
        if output_identity() != self.output:
            # The job closed its fd 1 or put another file there (os.dup2 of /dev/null, to silence a
            # library): a trailer or marker written there would never reach the parent, which would
            # wait for the job's timeout. The result goes on fd 4; without the marker the parent
            # discards this process after the job.
            self.reply(done)
            return
        if outcome.get("streamed") or "trailer" not in job:
            # The chunks went on fd 4 (or the parent reads the result there, as the AWS sandbox
            # does): the result follows them there, after the marker closed the log.
            write_all(1, job["marker"].encode("utf-8"))
            self.reply(done)
            return
        # The trailer closes the log and carries the result, in one write.
        write_all(1, (job["trailer"] + json.dumps(done) + "\n").encode("utf-8"))

    def call_main(self, job):
        try:
            module = self.load()
        except BaseException as error:
            # A module that failed to import stays half-initialised here; a fresh process may do better.
            return {"ok": False, "error": to_job_error(error), "discard": True}
        main = getattr(module, "main", None)
        if not callable(main):
            return {"ok": False, "error": {"name": "TypeError", "message": "the script does not define a function named main"}}
        value = main(**windmill_arguments(self.parameters_of(main), job["kwargs"], job.get("rest")))
        if inspect.iscoroutine(value):
            value = asyncio.run(value)
        if inspect.isasyncgen(value):
            self.stream_async(job["id"], value)
            return {"ok": True, "result": "", "streamed": True}
        if is_stream(value):
            returned = None
            while True:
                try:
                    chunk = next(value)
                except StopIteration as stop:
                    # A generator's `return x` arrives here; a for loop would drop it.
                    returned = stop.value
                    break
                self.send_chunk(job["id"], chunk)
            result = "" if returned is None else json.dumps(returned, default=str)
            return {"ok": True, "result": result, "streamed": True}
        try:
            result = result_json(value)
        except (TypeError, ValueError) as error:
            return {"ok": False, "error": {"name": "SerializationError", "message": f"the result is not JSON-serialisable: {error}"}}
        return {"ok": True, "result": result, "streamed": False}

    def parameters_of(self, main):
        # inspect.signature costs ~10 us a job: kept while `main` is the same function.
        if self.signature_of is not main:
            try:
                self.parameters = inspect.signature(main).parameters
            except (TypeError, ValueError):
                self.parameters = None
            self.signature_of = main
        return self.parameters

    def stream_async(self, job_id, generator):
        loop = asyncio.new_event_loop()
        try:
            while True:
                try:
                    chunk = loop.run_until_complete(generator.__anext__())
                except StopAsyncIteration:
                    return
                self.send_chunk(job_id, chunk)
        finally:
            loop.close()

    def send_chunk(self, job_id, chunk):
        text = chunk if isinstance(chunk, str) else json.dumps(chunk, default=str)
        self.reply({"type": "stream", "id": job_id, "chunk": text})

    def load(self):
        # Imported on the first job, not at start, so the module's top level sees a job's env and cwd.
        if self.module is None:
            spec = importlib.util.spec_from_file_location("_svc_user_script", self.script_path)
            module = importlib.util.module_from_spec(spec)
            for name in undefined_annotation_names(self.script_path):
                setattr(module, name, dict)
            spec.loader.exec_module(module)
            self.module = module
        return self.module


def windmill_arguments(parameters, kwargs, rest=None):
    """The arguments as Windmill's Python wrapper passes them (docs/windmill.md).

    A parameter annotated `datetime`, `date` or `bytes` gets its JSON text parsed (ISO 8601, or
    base64), None for a parameter that has a default leaves the default, and a `main(**kwargs)`
    also gets the arguments its other parameters do not name (`rest`). `parameters` are those of
    main's signature, None when it has none Python can read (the arguments then go as they are).
    """
    if parameters is None:
        return kwargs
    out = dict(kwargs)
    if rest and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        for name, value in rest.items():
            if name not in parameters:
                out[name] = value
    for name, value in kwargs.items():
        parameter = parameters.get(name)
        if parameter is None:
            continue
        if value is None:
            if parameter.default is not inspect.Parameter.empty:
                del out[name]
            continue
        convert = PARSERS.get(parsed_type(parameter.annotation))
        if convert is not None and isinstance(value, str):
            out[name] = convert(value)
    return out


def result_json(value):
    """The result as JSON, as Windmill's wrapper writes it (docs/windmill.md): bytes as base64, a
    pandas or polars DataFrame as its rows, NaN and the infinities as null, anything else JSON has
    no type for as its str()."""
    try:
        return json.dumps(value, default=json_default, allow_nan=False)
    except ValueError as error:
        if "Out of range float values" not in str(error):
            raise
    # JSON's own parser finds the NaN and Infinity tokens, never a word inside a string.
    loose = json.dumps(value, default=json_default, allow_nan=True)
    return json.dumps(json.loads(loose, parse_constant=lambda _: None), allow_nan=False)


def json_default(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    kind = type(value)
    if kind.__name__ == "DataFrame":
        if kind.__module__ == "pandas.core.frame":
            return value.values.tolist()
        if kind.__module__.startswith("polars"):
            return value.rows()
    return str(value)


def parse_date(text):
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        # The other day-first and month-first forms Windmill's wrapper accepts.
        for form in ("%d-%m-%Y", "%m/%d/%Y", "%d/%m/%Y", "%Y/%m/%d"):
            try:
                return datetime.datetime.strptime(text, form).date()
            except ValueError:
                continue
        raise


PARSERS = {
    "datetime": datetime.datetime.fromisoformat,
    "date": parse_date,
    "bytes": base64.b64decode,
}


def parsed_type(annotation):
    """`datetime`, `date` or `bytes` when the annotation is one of them (or Optional of one)."""
    if annotation is datetime.datetime:
        return "datetime"
    if annotation is datetime.date:
        return "date"
    if annotation is bytes:
        return "bytes"
    if isinstance(annotation, str):
        # Postponed annotations (`from __future__ import annotations`) are their source text.
        text = annotation.replace(" ", "")
        for prefix in ("Optional[", "typing.Optional["):
            if text.startswith(prefix) and text.endswith("]"):
                text = text[len(prefix):-1]
        return {"datetime": "datetime", "datetime.datetime": "datetime", "date": "date", "datetime.date": "date", "bytes": "bytes"}.get(text)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        others = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(others) == 1:
            return parsed_type(others[0])
    return None


def undefined_annotation_names(script_path):
    """Resource types (`def main(db: postgresql)`) name no Python class: the value is a dict.

    Annotations are evaluated when `def` runs, so such a name would raise NameError on import.
    Every bare name used as a parameter annotation of a top-level function that the module does not
    define, import or get from builtins is bound to `dict` before the module runs.
    """
    try:
        with open(script_path, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (SyntaxError, ValueError):
        return []
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    wanted = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg in args.posonlyargs + args.args + args.kwonlyargs:
                if isinstance(arg.annotation, ast.Name) and arg.annotation.id not in defined:
                    wanted.add(arg.annotation.id)
    return sorted(wanted)


def is_stream(value):
    # Lists, dicts and strings are iterable too, but they are results, not streams.
    if isinstance(value, (str, bytes, bytearray, dict, list, tuple)):
        return False
    return isinstance(value, collections.abc.Iterator)


def output_identity():
    try:
        stat = os.fstat(1)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class JobEnvironment:
    """Gives each job exactly its environment, in os.environ and in the C environment its processes inherit.

    Reading os.environ encodes and decodes every variable (~3 us each): comparing a job's whole
    environment with it took half of the shim's time per job. When the last job left the
    environment as it got it (its raw mapping compares equal, in C), only the variables that differ
    between the two jobs are set or unset; otherwise the whole comparison runs.
    """

    def __init__(self):
        self.given = None
        self.as_given = None

    def apply(self, env):
        raw = getattr(os.environ, "_data", None)
        if self.given is not None and raw is not None and raw == self.as_given:
            given = self.given
            for key in [key for key in given if key not in env]:
                del os.environ[key]
            for key, value in env.items():
                if given.get(key) != value:
                    os.environ[key] = value
        else:
            set_environment(env)
        self.given = dict(env)
        self.as_given = dict(raw) if raw is not None else None


def set_environment(env):
    # Only what differs from the process's environment now (whatever the last job left in it) is
    # unset or set: os.environ.clear() unsets every variable one by one, ~60 us a job.
    for key in [key for key in os.environ if key not in env]:
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def to_job_error(error):
    return {
        "name": type(error).__name__,
        "message": str(error),
        "stack": "".join(traceback.format_exception(error)),
    }


def run(script_path):
    # stderr joins stdout so the log keeps the order in which the job wrote its lines.
    os.dup2(1, 2)
    for fd in (REQUESTS_FD, REPLIES_FD):
        os.set_inheritable(fd, False)
    requests = os.fdopen(REQUESTS_FD, "r", encoding="utf-8")
    replies = os.fdopen(REPLIES_FD, "w", encoding="utf-8")
    shim = Shim(script_path, replies)
    while True:
        line = requests.readline()
        if not line:
            return  # the parent is gone: nobody will send jobs or kill us
        shim.serve(json.loads(line))


if __name__ == "__main__":
    run(sys.argv[1])
