"""Runs one python3 job in a sandboxed child process and records what it reports.

The child runs python_shim.py, the local runner's own shim,
serving exactly one job, so a script gives the same result in either shell. The shim takes the
job as a JSON line on its fd 3 and replies on its fd 4 (stream chunks, then `done`); stdout and
stderr are the job's log, which the shim ends with a per-job marker.
"""
import codecs
import json
import os
import resource
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dependency_tree import dependency_site

HERE = os.path.dirname(os.path.abspath(__file__))
# One shim for both shells: the stack copies the local runner's shim beside this file when it
# bundles the function; in a checkout (tests, local bridges) it is read where the runner keeps it.
SHIM = next(
    path
    for path in (
        os.path.join(HERE, "python_shim.py"),
        os.path.join(HERE, "..", "..", "runtime", "shims", "python_shim.py"),
    )
    if os.path.exists(path)
)
# The `svc` client library scripts import with no install step; found the same two ways as the
# shim, and copied beside it for each job (the shim's dir is first on the job's sys.path).
CLIENT = next(
    path
    for path in (
        os.path.join(HERE, "svc"),
        os.path.join(HERE, "..", "..", "..", "clients", "python", "svc"),
    )
    if os.path.isdir(path)
)
with open(os.path.join(HERE, "shared_folder.py"), encoding="utf-8") as _source:
    SHARED_FOLDER_SOURCE = _source.read()
# As SHARED_FOLDER_MAX_BYTES in functions/ports.ts: the folder rides along in the invocation.
SHARED_FOLDER_MAX_BYTES = 3 * 1024 * 1024
REQUESTS_FD = 3
REPLIES_FD = 4
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# When the sandbox runs as root (never on Lambda; possible in a local bridge), jobs run as nobody.
SANDBOX_UID = 65534
# After the result, how long the job's last output may take to arrive.
MARKER_GRACE_S = 1.0
# After the process died, how long to collect what it printed last, for the error message.
DRAIN_GRACE_S = 0.25
# While waiting for an exit that no pipe will announce, how often to look.
EXIT_POLL_S = 0.05
READ_SIZE = 65536
TAIL_CHARS = 4000
MIB = 1024 * 1024
# The per-process limits the local jail sets with ulimit, by the request's name for each: the
# workspace's (in the request), else the instance's SVC_JOB_* setting, else the default of
# DEFAULT_LIMITS in functions/runtime/job-limits.ts.
PROCESS_LIMITS = (
    ("cpuSeconds", "SVC_JOB_CPU_SECONDS", 1, 900),
    ("fileBytes", "SVC_JOB_FILE_MB", MIB, 1024 * MIB),
    ("openFiles", "SVC_JOB_OPEN_FILES", 1, 1024),
)


def run_job(request, timeout_ms):
    """Returns (events, outcome): log/stream events in the order they happened, then the outcome."""
    site, problem = dependency_site(request)
    if problem:
        return [], {"ok": False, "error": {"name": "DependencyInstallFailed", "message": problem}}
    run_dir = tempfile.mkdtemp(prefix="svc-py-")
    try:
        # Like the local runner: the code is readable, the job's cwd and HOME belong to it alone.
        os.chmod(run_dir, 0o755)
        job_dir = os.path.join(run_dir, "job")
        os.mkdir(job_dir, 0o700)
        if sandbox_uid() is not None:
            os.chown(job_dir, sandbox_uid(), sandbox_uid())
        script_path = os.path.join(run_dir, "main.py")
        with open(script_path, "w", encoding="utf-8") as file:
            file.write(request["content"])
        shim_path = os.path.join(run_dir, "python_shim.py")
        shutil.copyfile(SHIM, shim_path)
        for path in (script_path, shim_path):
            os.chmod(path, 0o644)
        copy_client(os.path.join(run_dir, "svc"))
        write_modules(run_dir, request.get("modules") or {})
        shared = request.get("shared")
        if shared is not None:
            shared_folder(job_dir, {"mode": "write", "files": shared})
        job = OneShotJob(request, timeout_ms, job_dir, {"PYTHONPATH": site} if site else {})
        outcome = job.run(shim_path, script_path)
        job.settle_log()
        if shared is not None:
            outcome = with_shared_folder(outcome, job_dir)
        return job.events, outcome
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def write_modules(run_dir, modules):
    """The workspace scripts the job imports, beside main.py at their own paths (f/folder/name.py)."""
    for name, source in modules.items():
        path = os.path.join(run_dir, *name.split("/"))
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o755, exist_ok=True)
        # Every level readable, none writable by the job (makedirs' mode is masked by the umask).
        while folder != run_dir:
            os.chmod(folder, 0o755)
            folder = os.path.dirname(folder)
        with open(path, "w", encoding="utf-8") as file:
            file.write(source)
        os.chmod(path, 0o644)


def copy_client(target):
    """A copy the job may read but not change, without bytecode caches."""
    shutil.copytree(CLIENT, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for root, _dirs, files in os.walk(target):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)


class OneShotJob:
    """One shim process serving one job, watched for its timeout and output limit."""

    def __init__(self, request, timeout_ms, job_dir, extra_env):
        self.request = request
        self.extra_env = extra_env
        self.timeout_ms = timeout_ms
        self.job_dir = job_dir
        self.job_id = secrets.token_hex(16)
        self.marker = f"\u0000svc-end-{secrets.token_hex(16)}\u0000"
        self.events = []
        self.pending_log = []
        self.chunks = []
        self.output_bytes = 0
        self.tail = ""
        self.stop_error = None
        self.done = None
        self.exit_status = None
        self.marker_seen = False
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.held = ""  # output that may be the start of the marker, until the next read decides
        self.replies = b""
        self.limits = process_limits(request)
        self.cpu_seen = 0.0

    def run(self, shim_path, script_path):
        try:
            proc, requests_fd, replies_fd = self.spawn(shim_path, script_path)
        except OSError as error:
            return {"ok": False, "error": {"name": "ExecutionErr", "message": f"could not start the interpreter: {error}"}}
        try:
            self.send_job(requests_fd)
            self.supervise(proc, replies_fd)
            return self.outcome()
        finally:
            # Background processes the job left behind belong to it and end with it.
            kill_group(proc)
            proc.wait()
            proc.stdout.close()
            os.close(replies_fd)

    def spawn(self, shim_path, script_path):
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        uid = sandbox_uid()
        try:
            proc = subprocess.Popen(
                # -u: prints reach the log as they happen; -B: no .pyc next to the code.
                [interpreter(), "-u", "-B", shim_path, script_path],
                cwd=self.job_dir,
                env=sandbox_env(self.extra_env, self.job_dir),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                # The shim joins stderr to stdout itself; this also catches the interpreter failing first.
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so the whole tree can be killed
                pass_fds=(REQUESTS_FD, REPLIES_FD),
                preexec_fn=lambda: enter_limits(requests_read, replies_write, self.limits),
                **({"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}),
            )
        except BaseException:
            for fd in (requests_read, requests_write, replies_read, replies_write):
                os.close(fd)
            raise
        os.close(requests_read)
        os.close(replies_write)
        return proc, requests_write, replies_read

    def send_job(self, requests_fd):
        job = {
            "type": "job",
            "id": self.job_id,
            "env": sandbox_env(self.request["env"], self.job_dir),
            "cwd": self.job_dir,
            "marker": self.marker,
            "kwargs": keyword_arguments(self.request),
            # The others, which the shim passes only to a `main(**kwargs)` (functions/runtime/python-runner.ts).
            "rest": other_arguments(self.request),
        }
        try:
            # Closing the channel after the one job lets the shim exit once it is done.
            with os.fdopen(requests_fd, "w", encoding="utf-8") as channel:
                channel.write(json.dumps(job) + "\n")
        except BrokenPipeError:
            pass  # the child is already gone; supervise() finds out how it ended

    def supervise(self, proc, replies_fd):
        deadline = time.monotonic() + self.timeout_ms / 1000
        stdout_fd = proc.stdout.fileno()
        done_at = None
        with selectors.DefaultSelector() as selector:
            for fd in (stdout_fd, replies_fd):
                selector.register(fd, selectors.EVENT_READ)
            while self.stop_error is None:
                now = time.monotonic()
                open_fds = selector.get_map().keys()
                if self.done is not None:
                    done_at = done_at or now
                    if self.marker_seen or stdout_fd not in open_fds or now >= done_at + MARKER_GRACE_S:
                        return
                    wait = done_at + MARKER_GRACE_S - now
                elif now >= deadline:
                    self.stop({"name": "TimeoutError", "message": f"job exceeded its timeout of {js_number(self.timeout_ms / 1000)}s"})
                    return
                elif replies_fd not in open_fds:
                    # The shim died or closed its channel: no result will come, only an exit.
                    self.exit_status = exit_status(proc)
                    if self.exit_status is not None:
                        self.cpu_seen = process_cpu_seconds(proc.pid)
                        self.drain(selector, stdout_fd)
                        return
                    wait = min(EXIT_POLL_S, deadline - now)
                else:
                    wait = deadline - now
                for key, _ in selector.select(max(wait, 0)):
                    self.read(selector, key.fd, stdout_fd)

    def drain(self, selector, stdout_fd):
        until = time.monotonic() + DRAIN_GRACE_S
        while stdout_fd in selector.get_map() and time.monotonic() < until:
            for key, _ in selector.select(max(until - time.monotonic(), 0)):
                self.read(selector, key.fd, stdout_fd)

    def read(self, selector, fd, stdout_fd):
        data = os.read(fd, READ_SIZE)
        if not data:
            selector.unregister(fd)
            if fd == stdout_fd:
                self.end_output()
        elif fd == stdout_fd:
            self.receive_output(data)
        else:
            self.receive_replies(data)

    def receive_output(self, data):
        if self.marker_seen:
            return  # after the job ended: a stray background process, not the job's log
        text = self.held + self.decoder.decode(data)
        at = text.find(self.marker)
        if at >= 0:
            self.marker_seen = True
            self.held = ""
            self.log(text[:at])
            return
        keep = partial_marker_length(text, self.marker)
        self.held = text[len(text) - keep:]
        self.log(text[: len(text) - keep])

    def end_output(self):
        if not self.marker_seen:
            self.log(self.held + self.decoder.decode(b"", final=True))
        self.held = ""

    def receive_replies(self, data):
        *lines, self.replies = (self.replies + data).split(b"\n")
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # user code scribbling on fd 4 must not break the sandbox
            if not isinstance(message, dict) or message.get("id") != self.job_id or self.done is not None:
                continue
            if message.get("type") == "stream":
                self.stream(str(message.get("chunk")))
            elif message.get("type") == "done":
                self.done = message
        # A line that never ends must not grow here (user code holds fd 4 too): past a chunk or
        # result of the whole output limit, every character escaped, the job has written too much.
        limit = self.request["maxOutputBytes"]
        if len(self.replies) > 6 * limit + 65536:
            self.replies = b""
            self.stop({"name": "OutputLimitExceeded", "message": f"job output exceeded the limit of {js_number(limit)} bytes (a reply line that did not end)"})

    def log(self, text):
        if not text:
            return
        # Pieces gather until the next chunk: Lambda's response is bounded, and one log event per
        # read would cost an envelope each (joined once, as many small reads would be quadratic).
        self.pending_log.append(text)
        self.tail = (self.tail + text)[-TAIL_CHARS:]
        self.count_output(text)

    def stream(self, chunk):
        self.settle_log()
        self.chunks.append(chunk)
        self.events.append({"type": "stream", "chunk": chunk})
        self.count_output(chunk)

    def settle_log(self):
        if self.pending_log:
            self.events.append({"type": "log", "text": "".join(self.pending_log)})
            self.pending_log = []

    def count_output(self, text):
        self.output_bytes += len(text.encode("utf-8", errors="replace"))
        limit = self.request["maxOutputBytes"]
        if self.output_bytes > limit:
            self.stop({"name": "OutputLimitExceeded", "message": f"job output exceeded the limit of {js_number(limit)} bytes"})

    def stop(self, error):
        if self.stop_error is None:
            self.stop_error = error

    def outcome(self):
        if self.stop_error:
            return {"ok": False, "error": self.stop_error}
        done = self.done
        if done is None:
            cpu_limit = self.limits["cpuSeconds"]
            if cpu_limit_hit(self.exit_status, self.cpu_seen, cpu_limit):
                return {"ok": False, "error": {"name": "CpuLimitExceeded", "message": f"CPU time limit {js_number(cpu_limit)}s exceeded"}}
            return {"ok": False, "error": crash_error(self.exit_status, self.tail)}
        if not done.get("ok"):
            error = done.get("error") or {}
            return {"ok": False, "error": {key: error[key] for key in ("name", "message", "stack") if key in error}}
        if done.get("streamed"):
            stream = "".join(self.chunks)
            if not done.get("result"):
                return {"ok": True, "result": stream, "streamed": True}
            # A generator that returned a value keeps it, the stream beside it (as warm-worker.ts does).
            value = json.loads(done["result"])
            result = {**value, "wm_stream": stream} if isinstance(value, dict) else {"result": value, "wm_stream": stream}
            return {"ok": True, "result": result, "streamed": True}
        # The result counts as output too, as in the local runner.
        self.count_output(done["result"])
        if self.stop_error:
            return {"ok": False, "error": self.stop_error}
        return {"ok": True, "result": json.loads(done["result"]), "streamed": False}


def with_shared_folder(outcome, job_dir):
    """The outcome with the shared folder as the job left it; one too large to keep fails the job."""
    read = shared_folder(job_dir, {"mode": "read", "max": SHARED_FOLDER_MAX_BYTES})
    if "files" in read:
        return {**outcome, "shared": read["files"]}
    return {"ok": False, "error": {"name": "SharedFolderError", "message": read["error"]}}


def shared_folder(job_dir, request):
    """Runs shared_folder.py as the job's user on the job's `./shared` folder."""
    uid = sandbox_uid()
    done = subprocess.run(
        [interpreter(), "-B", "-c", SHARED_FOLDER_SOURCE],
        input=json.dumps({**request, "dir": os.path.join(job_dir, "shared")}),
        capture_output=True,
        text=True,
        cwd=job_dir,
        env=sandbox_env({}, job_dir),
        timeout=60,
        **({"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}),
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RuntimeError(f"the shared folder could not be {request['mode']}: {lines[-1] if lines else done.returncode}")
    return json.loads(done.stdout)


def process_limits(request):
    """The job's CPU time, file size and open files limits, by the names the request uses: the
    workspace's where it set one below the instance's, else the instance's."""
    given = request.get("limits") or {}
    limits = {}
    for name, variable, unit, default in PROCESS_LIMITS:
        try:
            instance = int(os.environ.get(variable, "")) * unit or default
        except ValueError:
            instance = default
        # A workspace may lower the instance's limit, never raise it (as the local jail takes the lower).
        limits[name] = min(given[name], instance) if given.get(name) else instance
    return limits


def enter_limits(requests_read, replies_write, limits):
    """Runs in the child between fork and exec: its channel, then its limits as the local jail
    sets them (CPU: SIGXCPU at the limit, SIGKILL a CPU second later for a process that ignores it)."""
    place_channel(requests_read, replies_write)
    cpu = limits["cpuSeconds"]
    lower(resource.RLIMIT_CPU, cpu, cpu + 1)
    lower(resource.RLIMIT_FSIZE, limits["fileBytes"], limits["fileBytes"])
    lower(resource.RLIMIT_NOFILE, limits["openFiles"], limits["openFiles"])


def lower(kind, soft, hard):
    """Sets a limit, never above the one the sandbox itself has (which only root could raise)."""
    _, current = resource.getrlimit(kind)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(kind, (soft, hard))


def cpu_limit_hit(status, cpu_seen, cpu_limit):
    """Whether the process died of its CPU time limit: SIGXCPU, or the SIGKILL that follows it."""
    if status is None or status.si_code not in (os.CLD_KILLED, os.CLD_DUMPED):
        return False
    return status.si_status == signal.SIGXCPU or (status.si_status == signal.SIGKILL and cpu_seen >= cpu_limit)


def process_cpu_seconds(pid):
    """User and system CPU time of a process not yet reaped, from /proc; 0 when it cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def place_channel(requests_read, replies_write):
    """Runs in the child between fork and exec: puts the channel on the fds the shim reads."""
    if replies_write == REQUESTS_FD:
        replies_write = os.dup(replies_write)
    if requests_read != REQUESTS_FD:
        os.dup2(requests_read, REQUESTS_FD)
    if replies_write != REPLIES_FD:
        os.dup2(replies_write, REPLIES_FD)


def exit_status(proc):
    # WNOWAIT: the exit is seen but the child is not reaped, so its pid (the process group id)
    # cannot be handed to another process before kill_group() has run.
    return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def crash_error(status, tail):
    if status is not None and status.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        how = f"was killed by {signal.Signals(status.si_status).name}"
    else:
        how = f"exited with code {status.si_status if status is not None else 'unknown'}"
    output = "\n".join(tail.rstrip().split("\n")[-20:])
    return {"name": "ExecutionErr", "message": f"the process {how} before the job finished" + (f":\n{output}" if output else "")}


def keyword_arguments(request):
    """Only the names the schema declares, so undeclared args never reach main's named parameters."""
    args = request["args"]
    return {name: args[name] for name in request["schema"]["properties"] if name in args}


def other_arguments(request):
    """The args the schema does not declare: a `main(**kwargs)` gets them, as in Windmill."""
    declared = request["schema"]["properties"]
    return {name: value for name, value in request["args"].items() if name not in declared}


def sandbox_env(job_env, home):
    """The complete environment of user code: the job's variables on top of a fixed minimum."""
    path = SANDBOX_PATH
    # On Lambda the interpreter lives in /var/lang/bin; a script starting python3 should find it.
    interpreter_dir = os.path.dirname(interpreter())
    if interpreter_dir not in path.split(":"):
        path = f"{interpreter_dir}:{path}"
    return {"PATH": path, "HOME": home, "LANG": "C.UTF-8", **job_env}


def interpreter():
    """The sandbox's own interpreter, unless jobs run as nobody: then one nobody can surely
    execute (the sandbox's may sit in a private directory such as a pyenv under /root)."""
    if sandbox_uid() is not None:
        return shutil.which("python3", path=SANDBOX_PATH) or sys.executable
    return sys.executable


def sandbox_uid():
    return SANDBOX_UID if os.getuid() == 0 else None


def partial_marker_length(text, marker):
    """Length of the longest end of `text` that is a beginning of `marker`."""
    for length in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[len(text) - length:]):
            return length
    return 0


def js_number(value):
    """Numbers in messages as JavaScript prints them (10, not 10.0), as the local runner does."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
