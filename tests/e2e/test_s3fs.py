"""s3fs (Debian's /usr/bin/s3fs, FUSE) mounting a strata bucket: files written and read
through the mount and checked through boto3, directories, rename (CopyObject + DeleteObject),
recursive removal, in-place edits, and the write-then-rename pattern of torch.save."""
import os
import random
import shutil
import subprocess
import time

import pytest

from conftest import listed_sizes, sha256_file, sha256_stream, write_random_file

import require

# Debian's s3fs (scripts/deps.sh --test); STRATA_E2E_S3FS names another one.
S3FS = os.environ.get("STRATA_E2E_S3FS", "/usr/bin/s3fs")


@pytest.fixture(autouse=True)
def _s3fs_can_mount():
    """Skips every test here when s3fs cannot mount (no s3fs, no fusermount, no
    /dev/fuse, not root), or fails it with CI=true."""
    require.require_tool("s3fs", path=S3FS, package="s3fs")
    require.require_tool("fusermount", package="fuse")
    if not os.path.exists("/dev/fuse"):
        require.missing("/dev/fuse does not exist",
                        "the kernel's fuse module, or a container started with --device "
                        "/dev/fuse --cap-add SYS_ADMIN")
    if os.geteuid() != 0:
        require.missing("the s3fs tests mount a file system and run as root only",
                        "run the tests as root")


class S3fsMount:
    """One s3fs process in the foreground mounting `bucket` at `root`, logging to a file."""

    def __init__(self, srv, bucket, workdir):
        self.srv, self.bucket = srv, bucket
        self.root = workdir / "mnt"
        self.log_path = workdir / "s3fs.log"
        self.passwd = workdir / "s3fs.passwd"
        self.proc = None

    def mount(self, timeout=30):
        self.root.mkdir()
        self.passwd.write_text(f"{self.srv.access_key}:{self.srv.secret_key}\n")
        self.passwd.chmod(0o600)  # s3fs refuses a password file others can read
        cmd = [S3FS, self.bucket, str(self.root), "-f",
               "-o", f"url={self.srv.endpoint}", "-o", "use_path_request_style",
               "-o", f"passwd_file={self.passwd}", "-o", f"endpoint={self.srv.region}",
               "-o", "dbglevel=info",
               # Two cores shared with the server: two transfers at a time, in 16 MiB
               # parts (files of 16 MiB and more are uploaded with multipart).
               "-o", "parallel_count=2", "-o", "multipart_size=16",
               # Content-MD5 on every upload, so the server must check what it stores.
               "-o", "enable_content_md5",
               # Fail fast: a retried request would hide the one the test is about.
               "-o", "retries=1", "-o", "connect_timeout=10", "-o", "readwrite_timeout=120"]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not os.path.ismount(self.root):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.unmount()
                pytest.fail(f"s3fs did not mount {self.bucket} at {self.root}\n{self.log()}")
            time.sleep(0.1)
        return self

    def unmount(self):
        """Unmounts whatever state s3fs is in, lazily if it is busy or dead."""
        if os.path.ismount(self.root) or self._stale():
            if subprocess.run(["fusermount", "-u", str(self.root)],
                              capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(self.root)], capture_output=True)
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def _stale(self):
        try:
            os.stat(self.root)
            return False
        except OSError:  # ENOTCONN: s3fs died with the mount in place
            return True

    def log(self, lines=200):
        """The end of s3fs's log and the server's non-2xx requests: why an operation failed."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        failed = [ln for ln in self.srv.logs().splitlines()
                  if f'bucket="{self.bucket}"' in ln and "status=" in ln
                  and not any(f"status={c}" in ln for c in (200, 204, 206, 404))]
        return ("--- s3fs log (tail)\n" + "\n".join(text.splitlines()[-lines:]) +
                "\n--- server requests that failed (404s omitted)\n" + "\n".join(failed[-50:]))


@pytest.fixture
def mount(server, bucket, tmp_path):
    m = S3fsMount(server, bucket, tmp_path).mount()
    try:
        yield m
    finally:
        m.unmount()
        # Shown by pytest only when the test failed.
        print(m.log())


def s3_bytes(s3, bucket, key):
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


def run(*cmd):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{' '.join(cmd)}: {res.stderr}"


def test_s3fs_ls_mkdir_nested(mount, s3, bucket):
    root = mount.root
    (root / "top").mkdir()
    (root / "top" / "a" / "b" / "c").mkdir(parents=True)
    files = {"top/f0.txt": b"zero", "top/a/f1.txt": b"one" * 100,
             "top/a/b/c/deep.bin": os.urandom(5000), "root file.txt": b"at the root"}
    for rel, data in files.items():
        (root / rel).write_bytes(data)
    # An object written around the mount, with no directory objects above it.
    s3.put_object(Bucket=bucket, Key="outside/x/y.bin", Body=b"made by boto3")

    assert sorted(os.listdir(root)) == ["outside", "root file.txt", "top"]
    assert sorted(os.listdir(root / "top")) == ["a", "f0.txt"]
    assert sorted(os.listdir(root / "top" / "a" / "b")) == ["c"]
    assert os.listdir(root / "top" / "a" / "b" / "c") == ["deep.bin"]
    assert (root / "top" / "a").is_dir() and (root / "outside" / "x").is_dir()
    assert (root / "outside" / "x" / "y.bin").read_bytes() == b"made by boto3"
    for rel, data in files.items():
        assert (root / rel).read_bytes() == data, rel
        assert (root / rel).stat().st_size == len(data), rel
        assert s3_bytes(s3, bucket, rel) == data, rel
    # s3fs represents a directory as an empty object named "dir/".
    listed = listed_sizes(s3, bucket)
    for d in ("top/", "top/a/", "top/a/b/", "top/a/b/c/"):
        assert listed.get(d) == 0, (d, listed)


def test_s3fs_mv_file(mount, s3, bucket):
    data = os.urandom(300_000)
    (mount.root / "src").mkdir()
    (mount.root / "dst").mkdir()
    (mount.root / "src" / "data.bin").write_bytes(data)
    run("mv", str(mount.root / "src" / "data.bin"), str(mount.root / "dst" / "moved.bin"))
    assert os.listdir(mount.root / "src") == []
    assert os.listdir(mount.root / "dst") == ["moved.bin"]
    assert (mount.root / "dst" / "moved.bin").read_bytes() == data
    assert s3_bytes(s3, bucket, "dst/moved.bin") == data
    assert "src/data.bin" not in listed_sizes(s3, bucket)


def test_s3fs_rm_recursive(mount, s3, bucket):
    root = mount.root
    for i in range(12):
        path = root / "doomed" / f"d{i % 3}" / f"e{i % 2}" / f"f{i}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(i * 100))
    (root / "kept.txt").write_bytes(b"survivor")
    assert len([k for k in listed_sizes(s3, bucket, "doomed/") if not k.endswith("/")]) == 12
    run("rm", "-r", str(root / "doomed"))
    assert os.listdir(root) == ["kept.txt"]
    assert listed_sizes(s3, bucket) == {"kept.txt": 8}


def test_s3fs_many_small_files(mount, s3, bucket):
    rng = random.Random(3)
    want = {f"f{i:03d}.bin": rng.randbytes(rng.randint(0, 2048)) for i in range(300)}
    (mount.root / "many").mkdir()
    for name, data in want.items():
        (mount.root / "many" / name).write_bytes(data)
    assert sorted(os.listdir(mount.root / "many")) == sorted(want)
    for name, data in want.items():
        assert (mount.root / "many" / name).read_bytes() == data, name
    listed = listed_sizes(s3, bucket, "many/")
    assert {k: v for k, v in listed.items() if k != "many/"} == {
        f"many/{n}": len(d) for n, d in want.items()}
    for name in rng.sample(sorted(want), 30):
        assert s3_bytes(s3, bucket, f"many/{name}") == want[name], name


def test_s3fs_overwrite_in_place(mount, s3, bucket):
    original = os.urandom(1024 * 1024 + 17)
    patch = os.urandom(4096)
    path = mount.root / "edit.bin"
    path.write_bytes(original)
    with open(path, "r+b") as f:
        f.seek(500_000)
        f.write(patch)
    want = original[:500_000] + patch + original[500_000 + len(patch):]
    assert path.read_bytes() == want
    assert s3_bytes(s3, bucket, "edit.bin") == want


def test_s3fs_save_by_rename(mount, s3, bucket):
    # torch.save(obj, tmp); os.replace(tmp, final): readers see the old or the new
    # checkpoint whole, and the temporary name does not stay behind.
    ckpt = mount.root / "ckpt"
    ckpt.mkdir()
    final = ckpt / "model.pt"
    versions = [os.urandom(2 * 1024 * 1024 + i) for i in range(3)]
    for data in versions:
        tmp = ckpt / "model.pt.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        assert os.listdir(ckpt) == ["model.pt"]
        assert final.read_bytes() == data
        assert s3_bytes(s3, bucket, "ckpt/model.pt") == data
    assert set(listed_sizes(s3, bucket, "ckpt/")) <= {"ckpt/", "ckpt/model.pt"}


@pytest.mark.big
def test_s3fs_one_gib_in_and_out(mount, s3, bucket, tmp_path):
    src = tmp_path / "one-gib.bin"
    sha, _ = write_random_file(src, 1 << 30)
    shutil.copyfile(src, mount.root / "one-gib.bin")
    src.unlink()
    assert (mount.root / "one-gib.bin").stat().st_size == 1 << 30
    head = s3.head_object(Bucket=bucket, Key="one-gib.bin")
    assert head["ContentLength"] == 1 << 30
    got = s3.get_object(Bucket=bucket, Key="one-gib.bin")
    assert sha256_stream(got["Body"]) == (sha, 1 << 30)
    out = tmp_path / "back.bin"
    shutil.copyfile(mount.root / "one-gib.bin", out)
    assert sha256_file(out) == sha
    out.unlink()

