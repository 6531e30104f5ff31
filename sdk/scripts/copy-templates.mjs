// Copies the templates of `switchyard-plugin init` into dist: the C one is the
// native example's source, kept in one place (examples/plugins/native-fixture);
// the Python one lives in sdk/templates.
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
await mkdir(join(sdk, 'dist', 'templates'), { recursive: true });
await copyFile(
  join(sdk, '..', 'examples', 'plugins', 'native-fixture', 'native-fixture.c'),
  join(sdk, 'dist', 'templates', 'plugin.c'),
);
await copyFile(join(sdk, 'templates', 'plugin.py'), join(sdk, 'dist', 'templates', 'plugin.py'));
