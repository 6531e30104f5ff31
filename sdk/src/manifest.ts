// validateManifest(): every rule of docs/PROTOCOL.md §2 (and the lexical part of
// §3), each failure a message that names the field.
import { posix } from 'node:path';
import { MAX_MANIFEST_BYTES, PROTOCOL_VERSION } from './constants.js';
import { describeIssues, manifestSchema, type Manifest, REPORT_INPUT } from './schemas.js';

export type ManifestValidation =
  | { ok: true; manifest: Manifest }
  | {
      ok: false;
      errors: string[];
      /** Set when protocolVersion is not ours: such a plugin can never be enabled. */
      protocolMismatch: boolean;
    };

export function validateManifest(value: unknown): ManifestValidation {
  const errors: string[] = [];
  let protocolMismatch = false;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, errors: ['plugin.json must be a JSON object'], protocolMismatch };
  }
  const parsed = manifestSchema.safeParse(value, REPORT_INPUT);
  if (!parsed.success) errors.push(...describeIssues(parsed.error));

  const record = value as Record<string, unknown>;
  if (typeof record.protocolVersion === 'string' && record.protocolVersion !== PROTOCOL_VERSION) {
    protocolMismatch = true;
    errors.push(
      `protocolVersion: the plugin speaks ${JSON.stringify(record.protocolVersion)} but this host speaks exactly ${PROTOCOL_VERSION}; ask the plugin's author for a build for ${PROTOCOL_VERSION} (there is no fallback)`,
    );
  } else if (record.protocolVersion === undefined) {
    // already reported as required by the schema
  } else if (typeof record.protocolVersion !== 'string') {
    protocolMismatch = true;
  }

  if (typeof record.executable === 'string') errors.push(...executablePathErrors(record.executable));

  const capabilities = Array.isArray(record.capabilities) ? record.capabilities : [];
  const scopes = Array.isArray(record.requestedScopes) ? record.requestedScopes : [];
  if (capabilities.includes('project.inspect') && !scopes.includes('project.metadata.read')) {
    errors.push('requestedScopes: capability project.inspect requires the scope project.metadata.read');
  }
  if (capabilities.includes('project.operate') && !scopes.includes('project.operate')) {
    errors.push('requestedScopes: capability project.operate requires the scope project.operate');
  }

  if (errors.length > 0 || !parsed.success) return { ok: false, errors, protocolMismatch };
  return { ok: true, manifest: parsed.data };
}

/** PROTOCOL §3, the part that needs no disk: relative, no NUL, stays inside the package. */
export function executablePathErrors(executable: string): string[] {
  if (executable.includes('\0')) return ['executable: must not contain NUL'];
  if (executable === '') return [];
  if (posix.isAbsolute(executable)) {
    return ['executable: must be a path relative to the package directory, not an absolute path'];
  }
  const cleaned = posix.normalize(executable);
  if (cleaned === '..' || cleaned.startsWith('../') || cleaned === '.' || cleaned.endsWith('/')) {
    return ['executable: must name a file inside the package directory (no ".." escape)'];
  }
  return [];
}

/**
 * Parses plugin.json bytes: bounded, UTF-8, exactly one JSON document, then
 * validateManifest(). `source` names the file in messages.
 */
export function parseManifest(bytes: Uint8Array, source = 'plugin.json'): ManifestValidation {
  if (bytes.byteLength > MAX_MANIFEST_BYTES) {
    return {
      ok: false,
      errors: [`${source}: larger than ${MAX_MANIFEST_BYTES} bytes`],
      protocolMismatch: false,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    return {
      ok: false,
      errors: [`${source}: not exactly one valid JSON document (${jsonErrorWithoutContent(error)})`],
      protocolMismatch: false,
    };
  }
  const result = validateManifest(value);
  if (result.ok) return result;
  return { ...result, errors: result.errors.map((message) => `${source}: ${message}`) };
}

/**
 * Where JSON.parse gave up, without its excerpt of the input: V8 quotes the
 * file's first bytes ("Unexpected token 'S', "SECRET=…" is not valid JSON"),
 * and a plugin.json that is not a manifest may be anything (PROTOCOL §3).
 */
function jsonErrorWithoutContent(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (error instanceof TypeError) return 'not valid UTF-8';
  if (/end of JSON input/i.test(message)) return 'it ends before the document does';
  const at = /at position (\d+)(?: \(line (\d+) column (\d+)\))?/.exec(message);
  if (!at) return 'not JSON';
  return at[2] ? `invalid at line ${at[2]} column ${at[3]}` : `invalid at character ${at[1]}`;
}

/** The identity a running plugin must echo in `initialize`: the manifest without launch fields. */
export function identityOf(manifest: Manifest) {
  const { executable: _executable, arguments: _arguments, ...identity } = manifest;
  return identity;
}
