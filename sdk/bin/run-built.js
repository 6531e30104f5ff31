// The committed bin shims (not built, so npm links them at install time,
// before dist/ exists) run the compiled command from dist/ through this.
import { existsSync } from 'node:fs';

export async function runBuilt(name, relativePath) {
  const command = new URL(relativePath, import.meta.url);
  if (existsSync(command)) {
    await import(command.href);
  } else {
    process.stderr.write(`${name}: the SDK is not built yet (run \`npm run build\` in its package)\n`);
    process.exitCode = 1;
  }
}
