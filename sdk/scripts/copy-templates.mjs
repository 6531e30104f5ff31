// Copies the C template of `switchyard-plugin init --lang c` into dist: the
// native example's source, kept in one place (examples/plugins/native-fixture).
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
await mkdir(join(sdk, 'dist', 'templates'), { recursive: true });
await copyFile(
  join(sdk, '..', 'examples', 'plugins', 'native-fixture', 'native-fixture.c'),
  join(sdk, 'dist', 'templates', 'plugin.c'),
);
