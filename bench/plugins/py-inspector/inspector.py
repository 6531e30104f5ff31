#!/usr/bin/env python3
# py-inspector: a switchyard.plugin/v1 plugin written the way a person would,
# standard library only, for bench/plugins-as-written.mjs. project.inspect
# reads <root>/package.json and reports its name, version and how many
# dependencies it declares; a missing or unreadable file is a fact and a
# warning, never a crash. Newline-delimited JSON-RPC 2.0 on stdin/stdout.
import json
import os
import sys
from datetime import datetime, timezone

PROTOCOL = "switchyard.plugin/v1"

# The host starts a plugin in its package directory: plugin.json is here.
with open("plugin.json", encoding="utf-8") as manifest_file:
    MANIFEST = json.load(manifest_file)
IDENTITY = {k: v for k, v in MANIFEST.items() if k not in ("executable", "arguments")}

granted = None  # the scopes of initialize; None until then


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fact(ident, label, value):
    return {"id": ident, "label": label, "value": str(value), "source": "package.json"}


def inspect(project):
    root = project.get("root")
    if root is None:
        raise RpcError(-32000, "py-inspector needs the project.files.read scope to read package.json")
    try:
        with open(os.path.join(root, "package.json"), encoding="utf-8") as handle:
            package = json.load(handle)
    except FileNotFoundError:
        return result("no package.json", [fact("package.json", "package.json", "missing")],
                      ["no package.json in the project root"])
    except (OSError, ValueError) as error:  # unreadable, not UTF-8, not JSON
        return result("unreadable package.json", [fact("package.json", "package.json", "invalid")],
                      ["package.json could not be read: %s" % error])
    if not isinstance(package, dict):
        return result("unreadable package.json", [fact("package.json", "package.json", "invalid")],
                      ["package.json is not a JSON object"])
    name = package.get("name", "")
    version = package.get("version", "")
    dependencies = package.get("dependencies") or {}
    dev_dependencies = package.get("devDependencies") or {}
    facts = [
        fact("package.name", "Package name", name),
        fact("package.version", "Package version", version),
        fact("package.dependencies", "Dependencies", len(dependencies) if isinstance(dependencies, dict) else 0),
        fact("package.devDependencies", "Dev dependencies",
             len(dev_dependencies) if isinstance(dev_dependencies, dict) else 0),
    ]
    warnings = [] if name else ["package.json has no name"]
    return result("%s %s" % (name or "(unnamed)", version), facts, warnings)


def result(summary, facts, warnings):
    return {"summary": summary, "facts": facts, "actions": [], "warnings": warnings, "observedAt": now()}


def call(method, params):
    global granted
    if method == "initialize":
        if granted is not None:
            raise RpcError(-32002, "initialize was already called")
        if params.get("protocolVersion") != PROTOCOL:
            raise RpcError(-32001, "this plugin speaks %s" % PROTOCOL)
        scopes = params.get("grantedScopes", [])
        for scope in scopes:
            if scope not in MANIFEST["requestedScopes"]:
                raise RpcError(-32003, "scope %s was not requested" % scope)
        granted = scopes
        return {"protocolVersion": PROTOCOL, "plugin": IDENTITY, "grantedScopes": scopes}
    if granted is None:
        raise RpcError(-32002, "initialize must be called first")
    if method == "plugin.health":
        return {"status": "healthy", "checkedAt": now()}
    if method == "project.inspect":
        project = params.get("project") or {}
        if "project.metadata.read" not in granted:
            raise RpcError(-32003, "project.inspect needs the project.metadata.read scope")
        if "root" in project and "project.files.read" not in granted:
            raise RpcError(-32003, "root sent without project.files.read")
        return inspect(project)
    raise RpcError(-32601, "method not found: %s" % method)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise ValueError("not a JSON-RPC request object")
    except ValueError as error:
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: %s" % error}})
        continue
    ident = request.get("id")
    try:
        send({"jsonrpc": "2.0", "id": ident, "result": call(request.get("method"), request.get("params") or {})})
    except RpcError as error:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": error.code, "message": str(error)[:1024]}})
