#!/usr/bin/env python3
"""{{id}}: a Switchyard plugin in Python, standard library only.

It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout (protocol
"switchyard.plugin/v1"): one request per line, one response line each.
stdout is the protocol; write diagnostics to stderr only.

Its identity is plugin.json, read from the working directory: the host (and
the conformance kit) start a plugin in its package directory, and a script
started from a descriptor sees its own path as /dev/fd/<n>, so files are
found relative to the working directory, never to __file__.

What the plugin does is inspect() below; the rest is the protocol.
"""
import datetime
import json
import os
import sys

PROTOCOL_VERSION = "switchyard.plugin/v1"
MAX_LINE = 1048576  # bytes in one line, newline excluded
MAX_MESSAGE = 1024  # characters of an error message

PARSE_ERROR = -32700
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
APPLICATION_ERROR = -32000
PROTOCOL_MISMATCH = -32001
NOT_INITIALIZED = -32002
PERMISSION_DENIED = -32003


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


with open("plugin.json", "rb") as manifest_file:
    MANIFEST = json.load(manifest_file)
# What initialize answers: the manifest without executable and arguments.
IDENTITY = {k: v for k, v in MANIFEST.items() if k not in ("executable", "arguments")}

state = {"initialized": False, "granted": []}


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def inspect(project):
    """project: {"id", "displayName", "root"?}; root only with project.files.read."""
    root = project.get("root")
    entries = sorted(os.listdir(root)) if root is not None else []
    return {
        "summary": "%d entries in %s" % (len(entries), project["displayName"]),
        "facts": [
            {"id": "entries.count", "label": "Entries", "value": str(len(entries)), "source": "the project root"}
        ],
        # Each action: {"id", "name", "description", "risk"}; risk "none" changes nothing.
        "actions": [],
        "warnings": [],
        "observedAt": now(),
    }


def send(message):
    line = json.dumps(message, separators=(",", ":"), ensure_ascii=True) + "\n"
    sys.stdout.buffer.write(line.encode("ascii"))
    sys.stdout.buffer.flush()


def send_error(request_id, code, message):
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message[:MAX_MESSAGE]}})


def strict_object(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError("duplicate key %r" % key)
        result[key] = value
    return result


def fields(params, required, optional=()):
    """The params object with exactly these keys (unknown ones are -32602)."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "invalid params: must be an object")
    for key in params:
        if key not in required and key not in optional:
            raise RpcError(INVALID_PARAMS, "invalid params: unknown key %s" % key)
    for key in required:
        if key not in params:
            raise RpcError(INVALID_PARAMS, "invalid params: missing key %s" % key)
    return params


def need_string(value, name):
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, "invalid params: %s must be a string" % name)
    return value


def initialize(params):
    fields(params, ("protocolVersion", "hostVersion", "grantedScopes"))
    need_string(params["hostVersion"], "hostVersion")
    if params["protocolVersion"] != PROTOCOL_VERSION:
        raise RpcError(PROTOCOL_MISMATCH, "protocol mismatch: plugin speaks %s" % PROTOCOL_VERSION)
    granted = params["grantedScopes"]
    if not isinstance(granted, list) or not all(isinstance(s, str) for s in granted):
        raise RpcError(INVALID_PARAMS, "invalid params: grantedScopes must be an array of strings")
    for scope in granted:
        if scope not in MANIFEST["requestedScopes"]:
            raise RpcError(PERMISSION_DENIED, "permission denied: scope %s was not requested by this plugin" % scope)
    if len(set(granted)) != len(granted):
        raise RpcError(INVALID_PARAMS, "invalid params: a scope is granted twice")
    state["initialized"] = True
    state["granted"] = granted
    return {"protocolVersion": PROTOCOL_VERSION, "plugin": IDENTITY, "grantedScopes": granted}


def need(capability, scope):
    if capability not in MANIFEST["capabilities"]:
        raise RpcError(PERMISSION_DENIED, "permission denied: capability %s is not declared" % capability)
    if scope not in state["granted"]:
        raise RpcError(PERMISSION_DENIED, "permission denied: %s needs scope %s" % (capability, scope))


def project_of(params):
    project = fields(fields(params, ("project",))["project"], ("id", "displayName"), ("root",))
    for key in project:
        need_string(project[key], "project." + key)
    if "root" in project and "project.files.read" not in state["granted"]:
        raise RpcError(PERMISSION_DENIED, "permission denied: root sent without project.files.read")
    return project


def call(method, params):
    if method == "initialize":
        if state["initialized"]:
            raise RpcError(NOT_INITIALIZED, "initialize was already called")
        return initialize(params)
    if not state["initialized"]:
        raise RpcError(NOT_INITIALIZED, "initialize must be called first")
    if method == "plugin.health":
        fields(params, ())
        return {"status": "healthy", "checkedAt": now()}
    if method == "project.inspect":
        need("project.inspect", "project.metadata.read")
        project = project_of(params)
        try:
            return inspect(project)
        except Exception as error:  # the handler's own failure: an application error
            raise RpcError(APPLICATION_ERROR, "%s: %s" % (type(error).__name__, error))
    if method == "project.operate":
        need("project.operate", "project.operate")
        raise RpcError(APPLICATION_ERROR, "unknown action")
    raise AssertionError(method)


METHODS = ("initialize", "plugin.health", "project.inspect", "project.operate")


def handle(line):
    try:
        request = json.loads(line.decode("utf-8"), object_pairs_hook=strict_object)
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, a duplicate key, too deep
        return send_error(None, PARSE_ERROR, "parse error: %s" % error)
    if (
        not isinstance(request, dict)
        or set(request) - {"jsonrpc", "id", "method", "params"}
        or request.get("jsonrpc") != "2.0"
        or isinstance(request.get("id"), bool)
        or not isinstance(request.get("id"), (int, float, str))
        or not isinstance(request.get("method"), str)
        or not isinstance(request.get("params", {}), dict)
    ):
        return send_error(None, PARSE_ERROR, "parse error: not a JSON-RPC 2.0 request envelope")
    request_id, method = request["id"], request["method"]
    if method not in METHODS:
        return send_error(request_id, METHOD_NOT_FOUND, "method not found: %s" % method[:200])
    try:
        result = call(method, request.get("params", {}))
    except RpcError as error:
        return send_error(request_id, error.code, str(error))
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main():
    stdin = sys.stdin.buffer
    while True:
        # Bounded: at most one line over the limit is held, then skipped to its newline.
        line = stdin.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            send_error(None, PARSE_ERROR, "parse error: line exceeds %d bytes" % MAX_LINE)
            while line and not line.endswith(b"\n"):
                line = stdin.readline(MAX_LINE + 1)
            continue
        handle(line[:-1] if line.endswith(b"\n") else line)


if __name__ == "__main__":
    main()
