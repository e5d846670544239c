"""OpenAI's Files and Batch APIs, served by :class:`tests.support.llm_server.FakeLLMServer` on 127.0.0.1.

What litellm's ``create_file`` / ``create_batch`` / ``retrieve_batch`` / ``file_content`` send for
``custom_llm_provider="openai"``: a multipart upload to ``/v1/files`` (purpose ``batch``), a JSON
``POST /v1/batches``, ``GET /v1/batches/{id}`` until the status is final, then
``GET /v1/files/{output_file_id}/content``. Each line of the input file is answered the way the
chat endpoint answers a request (the server's script: reply, usage, prefix caching; ``status``
makes every line fail with that HTTP status). With ``Script(batch_hold=True)`` batches stay
``in_progress`` until the test calls ``release()``, so a test can kill a client mid-batch.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time


class BatchAPI:
    def __init__(self, owner):
        self.owner = owner
        self._lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.uploads = 0          # files received
        self.retrievals = 0       # GET /v1/batches/{id} received

    # -- endpoints --------------------------------------------------------------------------
    def upload(self, content_type: str, data: bytes) -> tuple[int, bytes]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + data)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        if "file" not in fields:
            return 400, _error("no file in the upload")
        content = fields["file"].get_payload(decode=True) or b""
        with self._lock:
            self.uploads += 1
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = content
        return 200, json.dumps(self._file(file_id, fields["file"].get_filename() or "input.jsonl")).encode()

    def post(self, path: str, body: dict) -> tuple[int, bytes]:
        path = path.split("?")[0].rstrip("/")
        if path.endswith("/cancel"):
            batch = self.batches.get(path.split("/")[-2])
            if batch is None:
                return 404, _error("no such batch")
            batch["status"] = "cancelled"
            return 200, json.dumps(batch).encode()
        file_id = body.get("input_file_id", "")
        if file_id not in self.files:
            return 400, _error(f"no such file {file_id!r}")
        lines = [line for line in self.files[file_id].decode().splitlines() if line.strip()]
        with self._lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            self.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": body.get("endpoint", "/v1/chat/completions"),
                "input_file_id": file_id, "completion_window": body.get("completion_window", "24h"),
                "status": "in_progress", "created_at": int(time.time()), "output_file_id": None,
                "error_file_id": None, "errors": None, "metadata": body.get("metadata"),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            }
        return 200, json.dumps(self.batches[batch_id]).encode()

    def get(self, path: str) -> tuple[int, bytes]:
        parts = path.split("?")[0].rstrip("/").split("/")
        if parts[-1] == "batches":
            return 200, json.dumps({"object": "list", "data": list(self.batches.values()), "has_more": False}).encode()
        if parts[-2] == "batches":
            batch = self.batches.get(parts[-1])
            if batch is None:
                return 404, _error("no such batch")
            with self._lock:
                self.retrievals += 1
            if batch["status"] == "in_progress" and not (self.owner._script.batch_hold and not self.owner._released.is_set()):
                self._finish(batch)
            return 200, json.dumps(batch).encode()
        if parts[-1] == "content" and parts[-2] in self.files:
            return 200, self.files[parts[-2]], "application/octet-stream"
        if parts[-1] in self.files:
            return 200, json.dumps(self._file(parts[-1], "file.jsonl")).encode()
        return 404, _error(f"nothing at {path}")

    # -- the work ----------------------------------------------------------------------------
    def _finish(self, batch: dict) -> None:
        script = self.owner._script
        out, failed = [], 0
        for n, line in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            if not line.strip():
                continue
            item = json.loads(line)
            if script.status is not None:
                failed += 1
                response = {"status_code": script.status, "request_id": f"req_{n}", "body": script.error_body}
            else:
                body = self.owner.chat_completion(f"{batch['id']}-{n}", item["body"])
                response = {"status_code": 200, "request_id": f"req_{n}", "body": body}
            out.append(json.dumps({"id": f"line_{n}", "custom_id": item["custom_id"], "response": response, "error": None}))
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = ("\n".join(out) + "\n").encode()
        batch.update(status="completed", output_file_id=file_id, completed_at=int(time.time()),
                     request_counts={"total": len(out), "completed": len(out) - failed, "failed": failed})

    @staticmethod
    def _file(file_id: str, name: str) -> dict:
        return {"id": file_id, "object": "file", "bytes": 0, "created_at": int(time.time()),
                "filename": name, "purpose": "batch", "status": "processed"}


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
