"""Starts nginx on 127.0.0.1 serving a folder, for the download tests."""
import os
import pathlib
import socket
import subprocess
import time

NGINX = "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, root, workdir, extra=""):
        self.dir = pathlib.Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "logs").mkdir(exist_ok=True)
        self.port = free_port()
        conf = self.dir / "nginx.conf"
        user = "user root;" if os.geteuid() == 0 else ""
        conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {self.dir}/nginx.pid;
error_log {self.dir}/logs/error.log;
events {{ worker_connections 64; }}
http {{
    access_log {self.dir}/logs/access.log;
    client_body_temp_path {self.dir}/tmp;
    proxy_temp_path {self.dir}/tmp;
    fastcgi_temp_path {self.dir}/tmp;
    uwsgi_temp_path {self.dir}/tmp;
    scgi_temp_path {self.dir}/tmp;
    server {{
        listen 127.0.0.1:{self.port};
        root {root};
        {extra}
    }}
}}
""")
        self.proc = subprocess.Popen([NGINX, "-p", str(self.dir), "-c", str(conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not start")

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
