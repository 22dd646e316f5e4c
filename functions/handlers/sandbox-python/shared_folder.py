"""A flow's shared folder in and out of a job directory, for the Python sandbox (the Node runtime's
twin is functions/runtime/shims/shared-folder.mjs). Run as the job's own user (`python3 -c`, so that
user need not read this file): what a job leaves behind can point nowhere the job could not reach.

stdin: {"mode": "write", "dir": ..., "files": {"<relative path>": "<base64>"}}
    or {"mode": "read", "dir": ..., "max": <bytes>}  -> stdout: {"files": {...}} or {"error": "..."}
Only regular files travel; symlinks and other special files are left out.
"""
import base64
import json
import os
import stat
import sys


def safe_relative(path):
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and not any(p in ("", ".", "..") for p in parts)


def write(folder, files):
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for path, encoded in files.items():
        if not safe_relative(path):
            raise ValueError(f"refusing shared folder path {path!r}")
        target = os.path.join(folder, *path.split("/"))
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        # O_EXCL: a fresh file, never one that already exists (or a link in its place).
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(base64.b64decode(encoded))


def read(folder, limit):
    files = {}
    total = 0
    if not os.path.isdir(folder):
        return {"files": files}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(root, name)
            info = os.lstat(full)
            if not stat.S_ISREG(info.st_mode):
                continue
            # What is read counts, not what lstat said: the job may still be changing the file. Not
            # following a link, not blocking on a FIFO put in its place since.
            fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as file:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                content = file.read(limit - total + 1)
            total += len(content)
            if total > limit:
                return {"error": f"the shared folder holds more than {limit} bytes"}
            files[os.path.relpath(full, folder).replace(os.sep, "/")] = base64.b64encode(content).decode("ascii")
    return {"files": files}


def main():
    request = json.load(sys.stdin)
    if request["mode"] == "write":
        write(request["dir"], request["files"])
        print("{}")
    else:
        print(json.dumps(read(request["dir"], request["max"])))


if __name__ == "__main__":
    main()
