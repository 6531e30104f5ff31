// Builds the native spawn helper (native/spawner.c → dist/native/sy-spawner), after writing
// the protocol's generated files from their table (native/protocol.mjs) when it changed.
// Without a C compiler, or off Linux, the host falls back to process-group
// containment (src/core/supervision/containment.ts): one warning line, and the build goes on.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeGenerated } from './protocol.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// Every warning is an error: the helper is small, and a warning in it is a bug until shown otherwise.
const FLAGS = ['-O2', '-std=gnu11', '-Wall', '-Wextra', '-Werror'];
const output = join(root, 'dist', 'native', 'sy-spawner');

for (const file of writeGenerated()) console.log(`generated ${file} from native/protocol.json`);

if (process.platform !== 'linux') {
  console.warn(
    `warning: sy-spawner not built (needs Linux, this is ${process.platform}); plugin calls use process-group containment`,
  );
} else {
  try {
    mkdirSync(dirname(output), { recursive: true });
    execFileSync(
      process.env.CC ?? 'cc',
      [
        ...FLAGS,
        '-o',
        output,
        ...['spawner.c', 'keeper.c', 'frames.c', 'streams.c', 'confine.c', 'limits.c', 'isolate.c'].map(
          (file) => join(root, 'native', file),
        ),
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    console.log(`built ${output}`);
  } catch (error) {
    // A compile error (a warning, with -Werror) is the first line of what cc said.
    const reason =
      error.code === 'ENOENT' ? 'no C compiler (cc)' : String(error.stderr ?? error.message).split('\n')[0];
    console.warn(`warning: sy-spawner not built (${reason}); plugin calls use process-group containment`);
  }
}
