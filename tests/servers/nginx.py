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
    def __init__(self, root, workdir, extra="", tls=None):
        self.dir = pathlib.Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "logs").mkdir(exist_ok=True)
        self.port = free_port()
        self.scheme = "https" if tls else "http"
        listen = (f"listen 127.0.0.1:{self.port} ssl http2;\n        ssl_certificate {tls[0]};\n"
                  f"        ssl_certificate_key {tls[1]};") if tls else f"listen 127.0.0.1:{self.port};"
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
    log_format proto '$request_uri $server_protocol $status $body_bytes_sent';
    access_log {self.dir}/logs/access.log proto;
    client_body_temp_path {self.dir}/tmp;
    proxy_temp_path {self.dir}/tmp;
    fastcgi_temp_path {self.dir}/tmp;
    uwsgi_temp_path {self.dir}/tmp;
    scgi_temp_path {self.dir}/tmp;
    server {{
        {listen}
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
        return f"{self.scheme}://127.0.0.1:{self.port}/{name}"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def self_signed(folder):
    """A certificate for 127.0.0.1 and its key, made with openssl."""
    folder = pathlib.Path(folder)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return cert, key
