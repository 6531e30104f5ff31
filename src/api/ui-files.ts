// The review web UI's static files, served by name from one flat directory:
// a name outside the pattern, or a missing file, is a 404. The build ships
// them in dist/api/ui (scripts/copy-assets.mjs) with the bundled event
// reader; the path below is the same from src/api (tests) and dist/api.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { ERROR_CODES } from '../core/platform/index.js';
import { ProblemError } from './problems.js';

const UI_DIR = fileURLToPath(new URL('../../dist/api/ui/', import.meta.url));
const UI_FILE = /^[a-z0-9][a-z0-9._-]*\.(html|js|css|svg|png)$/;
const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

export async function sendUiFile(reply: FastifyReply, file: string) {
  if (!UI_FILE.test(file)) throw ProblemError.of(ERROR_CODES.NOT_FOUND, `no file ${file}`);
  let content: Buffer;
  try {
    content = await readFile(new URL(file, `file://${UI_DIR}`));
  } catch {
    throw ProblemError.of(ERROR_CODES.NOT_FOUND, `no file ${file}`);
  }
  return reply.type(CONTENT_TYPES[file.split('.').pop()!] ?? 'application/octet-stream').send(content);
}
