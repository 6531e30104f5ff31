// Copies what tsc does not: the Lua scripts next to the compiled module that loads them.
import { cp } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await cp(join(root, 'src', 'core', 'redis', 'lua'), join(root, 'dist', 'core', 'redis', 'lua'), {
  recursive: true,
});
