"""Real git servers on loopback for the sync tests and benchmarks: `git daemon`, smart HTTP (`git
http-backend` behind lighttpd, Debian's package) and ssh (`sshd` with a key made for the run). Each
serves the bare repositories of one folder and stops with its context; a server whose program is not
installed is skipped with the reason (`.ci/run` installs lighttpd and openssh-server with apt-get)."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GIT_CORE = Path(subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip() or
                "/usr/lib/git-core")


def program(name: str) -> str | None:
    """The program's path: on PATH, else in the sbin folders a non-root PATH leaves out."""
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None)


def missing(kind: str) -> str | None:
    """Why the server `kind` cannot run here, or None."""
    needs = {"daemon": [str(GIT_CORE / "git-daemon")], "http": ["lighttpd", str(GIT_CORE / "git-http-backend")],
             "ssh": ["sshd", "ssh", "ssh-keygen"]}[kind]
    absent = [n for n in needs if not (os.access(n, os.X_OK) if n.startswith("/") else program(n))]
    if absent:
        return f"{', '.join(absent)} not installed (.ci/run installs lighttpd and openssh-server with apt-get)"
    if kind == "ssh" and os.geteuid() != 0 and not Path("/run/sshd").is_dir():
        return "sshd needs its privilege separation folder /run/sshd, which only root can make"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the server did not listen on {port}: {log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def _running(argv: list[str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc, log)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Server:
    """A running server: `url(name)` is the URL of the bare repository `name` under its folder;
    `config` the git settings a clone needs to reach it (ssh's key), as `git -c` pairs."""

    kind: str
    base: Path
    prefix: str
    config: tuple[tuple[str, str], ...] = ()

    def url(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def bare(self, name: str) -> Path:
        """A new empty bare repository `name` the server serves (pushes allowed)."""
        path = self.base / name
        subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(path)], check=True)
        # Smart HTTP refuses an anonymous push unless the repository allows it.
        subprocess.run(["git", "-C", str(path), "config", "http.receivepack", "true"], check=True)
        return path

    def clone(self, name: str, to: Path) -> Path:
        """`git clone` of repository `name` to `to`, configured to reach the server again."""
        args = [x for k, v in self.config for x in ("-c", f"{k}={v}")]
        subprocess.run(["git", *args, "clone", "-q", self.url(name), str(to)], check=True,
                       capture_output=True)
        for k, v in self.config:
            subprocess.run(["git", "-C", str(to), "config", k, v], check=True)
        return to

    def attach(self, store: Path, name: str) -> None:
        """Give the store at `store` the repository `name` as its `origin`."""
        subprocess.run(["git", "-C", str(store), "remote", "add", "origin", self.url(name)], check=True)
        for k, v in self.config:
            subprocess.run(["git", "-C", str(store), "config", k, v], check=True)


@contextlib.contextmanager
def git_daemon(base: Path, port: int = 0) -> Iterator[Server]:
    """`git daemon` on loopback (`port`: a given one, so a server stopped and started again keeps its
    URL)."""
    port = port or free_port()
    argv = [str(GIT_CORE / "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack",
            f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)]
    with _running(argv, port, base.parent / f"daemon-{port}.log"):
        yield Server("daemon", base, f"git://127.0.0.1:{port}/")


@contextlib.contextmanager
def smart_http(base: Path) -> Iterator[Server]:
    """lighttpd on loopback running git-http-backend as CGI (the setup git-http-backend(1) gives)."""
    port = free_port()
    conf = base.parent / f"lighttpd-{port}.conf"
    conf.write_text(f"""
server.modules = ("mod_alias", "mod_cgi", "mod_setenv")
server.document-root = "{base}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{base.parent}/lighttpd-{port}-error.log"
alias.url = ("/git" => "{GIT_CORE}/git-http-backend")
$HTTP["url"] =~ "^/git" {{
    cgi.assign = ("" => "")
    setenv.set-environment = ("GIT_PROJECT_ROOT" => "{base}", "GIT_HTTP_EXPORT_ALL" => "1")
}}
""")
    with _running([str(program("lighttpd")), "-D", "-f", str(conf)], port, base.parent / f"lighttpd-{port}.log"):
        yield Server("http", base, f"http://127.0.0.1:{port}/git/")


@contextlib.contextmanager
def ssh_server(base: Path) -> Iterator[Server]:
    """sshd on loopback with a host key and a client key made for the run; the clone reaches it
    through `core.sshCommand`."""
    keys = base.parent / "ssh-keys"
    keys.mkdir(exist_ok=True)
    for name in ("host", "client"):
        if not (keys / name).exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "client.pub").read_text())
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    port = free_port()
    conf = keys / f"sshd-{port}.conf"
    conf.write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {keys}/host
AuthorizedKeysFile {keys}/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
PidFile {keys}/sshd-{port}.pid
""")
    command = (f"ssh -i {keys}/client -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no "
               "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")
    with _running([str(program("sshd")), "-D", "-e", "-f", str(conf)], port, keys / f"sshd-{port}.log"):
        yield Server("ssh", base, f"ssh://{getpass.getuser()}@127.0.0.1:{port}{base}/", (("core.sshCommand", command),))


SERVERS = {"daemon": git_daemon, "http": smart_http, "ssh": ssh_server}


@contextlib.contextmanager
def serving(kind: str, base: Path) -> Iterator[Server]:
    """The server `kind` ("daemon", "http" or "ssh") over the bare repositories in `base`."""
    base.mkdir(parents=True, exist_ok=True)
    with SERVERS[kind](base) as server:
        yield server
