"""An S3-compatible object store on loopback: moto's server (``moto[server]``, an optional dependency that
the test extra installs), one bucket. Demo notebook 7 (and its kernel test) starts one; ``python -m
rayqueue_local.runtime.objectstore`` serves one until interrupted and prints the variables to export (for
codeflare-sdk's checkpointing notebook, which reads ``AWS_S3_BUCKET`` and the credentials).

Ray Train checkpoints to it through pyarrow's S3 filesystem, which reads the standard AWS variables
(:meth:`ObjectStore.env`: ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_DEFAULT_REGION``, and ``AWS_S3_BUCKET``, the variable codeflare-sdk's checkpointing notebook reads), so
``RunConfig(storage_path="s3://<bucket>/...")`` works unchanged.

moto 5.2.1 answers ``CompleteMultipartUpload`` with the wrong root element (getmoto/moto#10055, a
regression), which pyarrow (it checks the root since apache/arrow#11594) takes for an error embedded in a
200 and retries until it fails: every pyarrow upload is a multipart one. The server here runs moto's own WSGI
application behind :func:`_complete_multipart_root`, which renames that root to S3's
``CompleteMultipartUploadResult`` (:func:`fix_complete_multipart_root`); nothing else is touched.

Example:
    >>> fix_complete_multipart_root(b"<CompleteMultipartUpload><Key>k</Key></CompleteMultipartUpload>")
    b'<CompleteMultipartUploadResult><Key>k</Key></CompleteMultipartUploadResult>'

Serving one (not run here)::

    store = ObjectStore(); os.environ.update(store.env()); ...; store.stop()
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["ObjectStore", "fix_complete_multipart_root", "main"]


def fix_complete_multipart_root(body: bytes) -> bytes:
    """Rename the XML root element of a CompleteMultipartUpload answer to ``CompleteMultipartUploadResult``.

    >>> fix_complete_multipart_root(b'<?xml version="1.0"?><CompleteMultipartUpload/>')
    b'<?xml version="1.0"?><CompleteMultipartUpload/>'
    >>> fix_complete_multipart_root(b'<?xml version="1.0"?><R xmlns="x"><K>k</K></R>')
    b'<?xml version="1.0"?><CompleteMultipartUploadResult xmlns="x"><K>k</K></CompleteMultipartUploadResult>'
    """
    start = body.find(b"<", body.find(b"?>") + 2 if body.startswith(b"<?xml") else 0)
    end = body.find(b">", start)
    if start < 0 or end < 0:
        return body
    head = body[start + 1 : end].split(None, 1)
    name = head[0]
    if name == b"CompleteMultipartUploadResult" or name.startswith((b"/", b"Error")):
        return body
    rest = b" " + head[1] if len(head) > 1 else b""
    closing = b"</" + name + b">"
    tail = body.rfind(closing)
    if tail < 0:
        return body
    return (
        body[:start]
        + b"<CompleteMultipartUploadResult"
        + rest
        + b">"
        + body[end + 1 : tail]
        + b"</CompleteMultipartUploadResult>"
        + body[tail + len(closing) :]
    )


def _complete_multipart_root(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """WSGI middleware: :func:`fix_complete_multipart_root` on the answers to ``POST ...?uploadId=``."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or "uploadId=" not in environ.get("QUERY_STRING", ""):
            return app(environ, start_response)
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[..., Any]:
            captured.update(status=status, headers=headers)
            return lambda data: None

        body = fix_complete_multipart_root(b"".join(app(environ, capture)))
        headers = [(k, v) for k, v in captured["headers"] if k.lower() != "content-length"]
        start_response(captured["status"], [*headers, ("Content-Length", str(len(body)))])
        return [body]

    return wrapped


class ObjectStore:
    """moto's S3 on ``127.0.0.1`` (a free port), with ``bucket`` made; :meth:`stop` ends it."""

    access_key = "rayqueue-test"
    secret_key = "rayqueue-test-secret"  # a throwaway credential moto accepts; never a real one
    region = "us-east-1"

    def __init__(self, bucket: str = "ray-checkpoints", port: int = 0) -> None:
        from moto.moto_server.werkzeug_app import (  # lazy: moto is optional (the test extra)
            DomainDispatcherApplication,
            create_backend_app,
        )
        from werkzeug.serving import WSGIRequestHandler, make_server  # lazy: moto's server, optional

        class _Quiet(WSGIRequestHandler):
            def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                """No line per request."""

        self.bucket = bucket
        app = _complete_multipart_root(DomainDispatcherApplication(create_backend_app))
        self._server = make_server("127.0.0.1", port, app, threaded=True, request_handler=_Quiet)
        self.endpoint = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="s3-store", daemon=True)
        self._thread.start()
        self.client().create_bucket(Bucket=bucket)

    def __repr__(self) -> str:
        return f"ObjectStore({self.endpoint!r}, bucket={self.bucket!r})"

    def client(self) -> Any:
        """A boto3 S3 client of this store."""
        import boto3  # lazy: with moto, optional

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
        )

    def env(self) -> dict[str, str]:
        """The AWS variables pyarrow (Ray Train's storage), boto3 and the peer's notebook read."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_S3_BUCKET": self.bucket,
        }

    def object_keys(self, prefix: str = "") -> list[str]:
        """The object keys under ``prefix``."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [obj["Key"] for page in pages for obj in page.get("Contents", [])]

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._thread.join(timeout=10)


def main(argv: list[str] | None = None) -> None:
    """Serve an object store until interrupted: ``python -m rayqueue_local.runtime.objectstore [PORT]``;
    prints the ``export`` lines of its variables."""
    args = sys.argv[1:] if argv is None else argv
    store = ObjectStore(port=int(args[0]) if args else 0)
    for key, value in store.env().items():
        print(f"export {key}={value}")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        store.stop()


if __name__ == "__main__":
    main()
