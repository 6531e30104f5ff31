// Builds every example plugin into its dist/ package directory.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packPlugin } from '@switchyard/plugin-sdk/pack';

const here = dirname(fileURLToPath(import.meta.url));
const plugins = join(here, 'plugins');

const inspector = join(plugins, 'fixture-inspector');
const packed = await packPlugin({
  entry: join(inspector, 'src', 'main.ts'),
  manifest: join(inspector, 'plugin.json'),
  outDir: join(inspector, 'dist'),
});
console.log(`built ${packed.manifest.id} → ${packed.outDir} (${packed.fingerprint.slice(0, 12)}…)`);

execFileSync(join(plugins, 'native-fixture', 'build.sh'), [], { stdio: 'inherit' });
