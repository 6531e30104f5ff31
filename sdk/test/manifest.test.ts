// validateManifest()/parseManifest(): one failing example per rule of
// PROTOCOL.md §2 and the lexical rules of §3, each message naming its field.
import { describe, expect, it } from 'vitest';
import { MANIFEST_SCHEMA_VERSION, MAX_MANIFEST_BYTES, PROTOCOL_VERSION } from '../src/constants.js';
import { executablePathErrors, parseManifest, validateManifest } from '../src/manifest.js';

const valid = {
  schemaVersion: MANIFEST_SCHEMA_VERSION,
  id: 'acme.inspector-2',
  name: 'Acme inspector',
  version: '1.2.3',
  protocolVersion: PROTOCOL_VERSION,
  executable: 'bin/acme-inspector',
  arguments: ['--mode', 'fast'],
  capabilities: ['project.inspect', 'project.operate'],
  requestedScopes: ['project.metadata.read', 'project.files.read', 'project.operate'],
};

type Fields = Partial<Record<keyof typeof valid | 'extra', unknown>>;

function manifestWith(changes: Fields, remove: (keyof typeof valid)[] = []): Record<string, unknown> {
  const manifest: Record<string, unknown> = { ...valid, ...changes };
  for (const field of remove) delete manifest[field];
  return manifest;
}

function errorsOf(value: unknown): string[] {
  const result = validateManifest(value);
  if (result.ok) throw new Error(`expected ${JSON.stringify(value)} to be rejected`);
  return result.errors;
}

describe('validateManifest', () => {
  it('accepts a valid manifest and returns it', () => {
    const result = validateManifest(valid);
    expect(result).toEqual({ ok: true, manifest: valid });
  });

  it('accepts the boundaries: 64-character id, 120-character name, 64-character version, 32 arguments of 4,096 bytes, no arguments, no scopes', () => {
    const result = validateManifest(
      manifestWith({
        id: `a${'b'.repeat(63)}`,
        name: 'n'.repeat(120),
        version: 'v'.repeat(64),
        arguments: Array.from({ length: 32 }, () => 'é'.repeat(2_048)),
      }),
    );
    expect(result.ok).toBe(true);
    expect(validateManifest(manifestWith({}, ['arguments'])).ok).toBe(true);
    expect(
      validateManifest(
        manifestWith({ capabilities: ['project.operate'], requestedScopes: ['project.operate'] }),
      ).ok,
    ).toBe(true);
  });

  it('rejects a value that is not a JSON object', () => {
    for (const value of [null, [], 'plugin', 42]) {
      expect(errorsOf(value)).toEqual(['plugin.json must be a JSON object']);
    }
  });

  // [description, manifest, field the message must name, optional text it must contain]
  const cases: [string, Record<string, unknown>, string, string?][] = [
    ['an unknown field', manifestWith({ extra: true }), '', 'unknown field "extra"'],
    ['schemaVersion missing', manifestWith({}, ['schemaVersion']), 'schemaVersion'],
    [
      'schemaVersion another value',
      manifestWith({ schemaVersion: 'switchyard.plugin-manifest/v2' }),
      'schemaVersion',
      MANIFEST_SCHEMA_VERSION,
    ],
    ['id missing', manifestWith({}, ['id']), 'id'],
    ['id upper-case', manifestWith({ id: 'Acme' }), 'id', '^[a-z][a-z0-9.-]{0,63}$'],
    ['id starting with a digit', manifestWith({ id: '1acme' }), 'id'],
    ['id starting with a dot', manifestWith({ id: '.acme' }), 'id'],
    ['id with an underscore', manifestWith({ id: 'acme_inspector' }), 'id'],
    ['id empty', manifestWith({ id: '' }), 'id'],
    ['id of 65 characters', manifestWith({ id: `a${'b'.repeat(64)}` }), 'id'],
    ['id with a trailing newline', manifestWith({ id: 'acme\n' }), 'id'],
    ['name missing', manifestWith({}, ['name']), 'name'],
    ['name empty', manifestWith({ name: '' }), 'name', 'blank'],
    ['name blank', manifestWith({ name: ' \t ' }), 'name', 'blank'],
    ['name of 121 characters', manifestWith({ name: 'n'.repeat(121) }), 'name', '120'],
    ['version missing', manifestWith({}, ['version']), 'version'],
    ['version blank', manifestWith({ version: '   ' }), 'version', 'blank'],
    ['version of 65 characters', manifestWith({ version: 'v'.repeat(65) }), 'version', '64'],
    ['protocolVersion missing', manifestWith({}, ['protocolVersion']), 'protocolVersion'],
    ['executable missing', manifestWith({}, ['executable']), 'executable'],
    ['executable empty', manifestWith({ executable: '' }), 'executable'],
    ['executable not a string', manifestWith({ executable: ['bin/x'] }), 'executable'],
    ['executable absolute', manifestWith({ executable: '/usr/bin/node' }), 'executable', 'absolute'],
    ['executable with NUL', manifestWith({ executable: 'bin/acme\0' }), 'executable', 'NUL'],
    ['executable escaping with ..', manifestWith({ executable: '../acme' }), 'executable', '..'],
    [
      'executable escaping after cleaning',
      manifestWith({ executable: 'bin/../../acme' }),
      'executable',
      '..',
    ],
    ['executable naming the package directory itself', manifestWith({ executable: 'bin/..' }), 'executable'],
    ['executable naming a directory', manifestWith({ executable: 'bin/' }), 'executable'],
    ['arguments not an array', manifestWith({ arguments: '--mode fast' }), 'arguments'],
    ['arguments with a non-string entry', manifestWith({ arguments: ['--level', 3] }), 'arguments.1'],
    ['33 arguments', manifestWith({ arguments: Array.from({ length: 33 }, () => 'a') }), 'arguments', '32'],
    [
      'an argument of 4,097 bytes',
      manifestWith({ arguments: ['a'.repeat(4_097)] }),
      'arguments.0',
      '4,096 bytes',
    ],
    // 2,049 characters but 4,098 bytes: the limit is in bytes
    [
      'an argument of 2,049 two-byte characters',
      manifestWith({ arguments: ['ok', 'é'.repeat(2_049)] }),
      'arguments.1',
      'bytes',
    ],
    ['an argument with NUL', manifestWith({ arguments: ['--a', 'b\0c'] }), 'arguments.1', 'NUL'],
    ['capabilities missing', manifestWith({}, ['capabilities']), 'capabilities'],
    ['capabilities empty', manifestWith({ capabilities: [] }), 'capabilities', 'at least 1'],
    [
      'capabilities with an unknown value',
      manifestWith({ capabilities: ['project.inspect', 'project.delete'] }),
      'capabilities.1',
      'project.operate',
    ],
    [
      'capabilities repeated',
      manifestWith({ capabilities: ['project.inspect', 'project.inspect'] }),
      'capabilities',
      'repeat',
    ],
    [
      '17 capabilities',
      manifestWith({ capabilities: Array.from({ length: 17 }, () => 'project.inspect') }),
      'capabilities',
      '16',
    ],
    [
      'requestedScopes with an unknown value',
      manifestWith({ requestedScopes: ['project.metadata.read', 'project.files.write', 'project.operate'] }),
      'requestedScopes.1',
      'project.files.read',
    ],
    [
      'requestedScopes repeated',
      manifestWith({ requestedScopes: ['project.metadata.read', 'project.operate', 'project.operate'] }),
      'requestedScopes',
      'repeat',
    ],
    [
      '17 requestedScopes',
      manifestWith({ requestedScopes: Array.from({ length: 17 }, () => 'project.operate') }),
      'requestedScopes',
      '16',
    ],
    [
      'project.inspect without project.metadata.read',
      manifestWith({ capabilities: ['project.inspect'], requestedScopes: ['project.files.read'] }),
      'requestedScopes',
      'project.metadata.read',
    ],
    [
      'project.operate without the project.operate scope',
      manifestWith({ capabilities: ['project.operate'], requestedScopes: ['project.metadata.read'] }),
      'requestedScopes',
      'capability project.operate requires',
    ],
  ];

  it.each(cases)('rejects %s, naming the field', (_description, manifest, field, text) => {
    const errors = errorsOf(manifest);
    if (field !== '') {
      expect(
        errors.some((message) => message.startsWith(`${field}: `)),
        errors.join('\n'),
      ).toBe(true);
    }
    if (text !== undefined) {
      const named = errors.filter((message) => field === '' || message.startsWith(`${field}: `));
      expect(
        named.some((message) => message.includes(text)),
        errors.join('\n'),
      ).toBe(true);
    }
  });

  it('reports every problem, not only the first', () => {
    const errors = errorsOf(manifestWith({ id: 'Bad', name: '', executable: '/abs' }));
    for (const field of ['id', 'name', 'executable']) {
      expect(
        errors.some((message) => message.startsWith(`${field}: `)),
        errors.join('\n'),
      ).toBe(true);
    }
  });

  it('marks another protocolVersion as a protocol mismatch with an actionable message', () => {
    const result = validateManifest(manifestWith({ protocolVersion: 'switchyard.plugin/v2' }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.protocolMismatch).toBe(true);
    const message = result.errors.find((error) => error.startsWith('protocolVersion: '));
    expect(message).toBeDefined();
    expect(message).toContain('"switchyard.plugin/v2"');
    expect(message).toContain(PROTOCOL_VERSION);
    // actionable: it tells the reader what to do about it
    expect(message).toMatch(/ask the plugin's author for a build for switchyard\.plugin\/v1/);
  });

  it('marks a non-string protocolVersion as a protocol mismatch too, naming the field', () => {
    const result = validateManifest(manifestWith({ protocolVersion: 1 }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.protocolMismatch).toBe(true);
    expect(result.errors.some((error) => error.startsWith('protocolVersion: '))).toBe(true);
  });

  it('does not mark other errors as a protocol mismatch', () => {
    const result = validateManifest(manifestWith({ id: 'Bad' }));
    expect(result).toMatchObject({ ok: false, protocolMismatch: false });
  });

  it('reports a mistyped field as mistyped, not as missing', () => {
    const errors = errorsOf(manifestWith({ name: 42 }));
    const message = errors.find((error) => error.startsWith('name: '));
    expect(message).toBeDefined();
    // name is there (it is 42): "is required" sends the plugin author looking for the wrong problem.
    expect(message).not.toContain('is required');
  });
});

describe('executablePathErrors', () => {
  it('accepts relative paths that stay inside the package', () => {
    for (const path of [
      'acme',
      'bin/acme',
      './acme',
      'bin/../acme',
      'a/b/c/acme',
      '.hidden/acme',
      '..acme',
    ]) {
      expect(executablePathErrors(path), path).toEqual([]);
    }
  });

  it('rejects absolute paths, NUL and escapes', () => {
    const cases: [string, string][] = [
      ['/bin/sh', 'absolute'],
      ['//server/share/x', 'absolute'],
      ['bin/\0sh', 'NUL'],
      ['..', '..'],
      ['../x', '..'],
      ['a/../../x', '..'],
      ['./../x', '..'],
      ['.', '..'],
    ];
    for (const [path, text] of cases) {
      const errors = executablePathErrors(path);
      expect(errors, JSON.stringify(path)).toHaveLength(1);
      expect(errors[0]!.startsWith('executable: '), errors[0]).toBe(true);
      expect(errors[0]).toContain(text);
    }
  });
});

describe('parseManifest', () => {
  const bytesOf = (text: string) => new TextEncoder().encode(text);

  it('parses valid bytes, and accepts exactly 64 KiB', () => {
    const text = JSON.stringify(valid);
    expect(parseManifest(bytesOf(text))).toEqual({ ok: true, manifest: valid });
    const padded = text + ' '.repeat(MAX_MANIFEST_BYTES - text.length);
    expect(padded.length).toBe(MAX_MANIFEST_BYTES);
    expect(parseManifest(bytesOf(padded)).ok).toBe(true);
  });

  it('rejects more than 64 KiB, naming the file and the limit', () => {
    const text = JSON.stringify(valid);
    const result = parseManifest(
      bytesOf(text + ' '.repeat(MAX_MANIFEST_BYTES + 1 - text.length)),
      'pkg/plugin.json',
    );
    expect(result).toEqual({
      ok: false,
      errors: ['pkg/plugin.json: larger than 65536 bytes'],
      protocolMismatch: false,
    });
  });

  it('rejects trailing data after the document', () => {
    for (const trailing of [' {}', '\n{"id":"x"}', 'x', ' 1', ']']) {
      const result = parseManifest(bytesOf(JSON.stringify(valid) + trailing));
      expect(result.ok, JSON.stringify(trailing)).toBe(false);
      if (!result.ok) expect(result.errors[0]).toMatch(/^plugin\.json: not exactly one valid JSON document/);
    }
  });

  it('rejects invalid JSON and invalid UTF-8', () => {
    for (const bytes of [
      bytesOf('{"id": '),
      bytesOf(''),
      bytesOf("{'id':'x'}"),
      Uint8Array.from([0x7b, 0xff, 0x7d]),
    ]) {
      const result = parseManifest(bytes);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.errors).toHaveLength(1);
        expect(result.errors[0]).toMatch(/^plugin\.json: not exactly one valid JSON document/);
        expect(result.protocolMismatch).toBe(false);
      }
    }
  });

  it('prefixes validation errors with the file and keeps protocolMismatch', () => {
    const result = parseManifest(
      bytesOf(JSON.stringify(manifestWith({ protocolVersion: 'x/v9', id: 'Bad' }))),
      'p/plugin.json',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.protocolMismatch).toBe(true);
    expect(result.errors.every((error) => error.startsWith('p/plugin.json: '))).toBe(true);
    expect(result.errors.some((error) => error.startsWith('p/plugin.json: id: '))).toBe(true);
    expect(result.errors.some((error) => error.startsWith('p/plugin.json: protocolVersion: '))).toBe(true);
  });
});
