// The review web UI's static files, served by name from one flat directory:
// a name outside the pattern, or a missing file, is a 404. The build ships
// them in dist/api/ui (scripts/copy-assets.mjs) with the bundled event
// reader; the path below is the same from src/api (tests) and dist/api.
// The libraries the UI loads (uPlot, for the fleet's charts) are served
// under a name of their own from node_modules, as installed: no CDN, and
// the CSP's 'self' covers them.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { ERROR_CODES } from '../core/platform/index.js';
import { ProblemError } from './problems.js';

const UI_DIR = fileURLToPath(new URL('../../dist/api/ui/', import.meta.url));
const resolveModule = createRequire(import.meta.url).resolve;
/** Name the UI imports → the installed package's file. */
const LIBRARY_FILES: Readonly<Record<string, string>> = {
  'uplot.js': 'uplot/dist/uPlot.esm.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
};
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
    const library = LIBRARY_FILES[file];
    content = await readFile(library ? resolveModule(library) : new URL(file, `file://${UI_DIR}`));
  } catch {
    throw ProblemError.of(ERROR_CODES.NOT_FOUND, `no file ${file}`);
  }
  return reply.type(CONTENT_TYPES[file.split('.').pop()!] ?? 'application/octet-stream').send(content);
}
