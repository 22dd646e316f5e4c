"""A python3 job's installed distributions on AWS (docs/dependencies-aws.md).

The worker sends the presigned URL of the lock's tree, built off the run path by the dependency
builder function and kept in the bucket. It is fetched and unpacked once per warm environment into
the sandbox's tree cache, sealed read-only, and its `site` folder goes on the job's PYTHONPATH.
"""
import os
import re
import shutil
import tarfile
import tempfile
import urllib.request

# An archive this big is refused before it is unpacked.
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
KEY = re.compile(r"^[0-9a-f]{32}$")


def dependency_site(request):
    """Returns (site folder or None, None), or (None, why the job cannot run)."""
    lock = request.get("lock")
    sent = request.get("dependencies")
    if not lock:
        return None, None
    if not isinstance(sent, dict) or not isinstance(sent.get("url"), str) or not KEY.match(str(sent.get("key"))):
        return None, "this job came without the URL of its dependency tree"
    root = os.environ.get("SANDBOX_DEPS_DIR") or os.path.join(tempfile.gettempdir(), "svc-sandbox-deps")
    target = os.path.join(root, "pypi", sent["key"])
    if not os.path.isdir(target):
        try:
            fetch(sent["url"], root, target)
        except Exception as error:  # any failure is the job's error, never the sandbox's
            return None, f"the dependency tree of this version could not be fetched: {error}"
    return os.path.join(target, "site"), None


def fetch(url, root, target):
    os.makedirs(os.path.join(root, "pypi"), exist_ok=True)
    work = os.path.join(root, "tmp")
    os.makedirs(work, exist_ok=True)
    # A job running as another uid must reach its tree, and nothing else here.
    for path in (root, os.path.join(root, "pypi"), work):
        os.chmod(path, 0o711)
    with urllib.request.urlopen(url, timeout=60) as response:
        if int(response.headers.get("content-length") or 0) > MAX_ARCHIVE_BYTES:
            raise ValueError(f"the archive is larger than {MAX_ARCHIVE_BYTES} bytes")
        archive = tempfile.TemporaryFile(dir=work)
        copied = 0
        while chunk := response.read(1 << 20):
            copied += len(chunk)
            if copied > MAX_ARCHIVE_BYTES:
                raise ValueError(f"the archive is larger than {MAX_ARCHIVE_BYTES} bytes")
            archive.write(chunk)
    unpacked = tempfile.mkdtemp(dir=work, prefix="fetch-")
    try:
        archive.seek(0)
        with tarfile.open(fileobj=archive, mode="r:gz") as tar:
            # The 'data' filter refuses absolute names, '..', links leaving the tree and devices.
            tar.extractall(unpacked, filter="data")
        seal(unpacked)
        try:
            os.rename(unpacked, target)
        except OSError:
            # Another job of this environment unpacked the same tree first: it is as good as ours.
            if not os.path.isdir(target):
                raise
    finally:
        archive.close()
        if os.path.exists(unpacked):
            unseal_and_remove(unpacked)


def seal(path):
    """Read-only for everyone (the job included when it runs as another uid): dirs 0555, files 0444 or 0555."""
    for base, dirs, files in os.walk(path, topdown=False):
        for name in files:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                os.chmod(full, 0o555 if os.stat(full).st_mode & 0o111 else 0o444)
        for name in dirs:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                os.chmod(full, 0o555)
    os.chmod(path, 0o555)


def unseal_and_remove(path):
    for base, dirs, _files in os.walk(path):
        os.chmod(base, 0o755)
        for name in dirs:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                os.chmod(full, 0o755)
    shutil.rmtree(path, ignore_errors=True)
