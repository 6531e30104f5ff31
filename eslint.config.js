import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Layers, enforced (issue 11 item 6): src/core is the inner layer and imports
// no shell; the shells (cli, api, worker, scheduler) share only through core;
// sdk/ is published on its own and never imports the application in src/.
// no-restricted-imports sees the import text, not the resolved file, so each
// rule is written once per directory depth, counting the "../" a file needs.
// It covers static imports and re-exports, not dynamic import().
const SHELLS = ['cli', 'api', 'worker', 'scheduler'];
const MAX_DEPTH = 4;

/** "../" n times, as a regex. */
const up = (n) => `(?:\\.\\./){${n}}`;

/** An import, from a file `depth` directories below src/, of src/<one of dirs>/ (then `rest`). */
const intoSrc = (dirs, depth, rest = '') =>
  `^(?:${up(depth)}|${up(depth + 1)}src/)(?:${dirs.join('|')})/${rest}`;

/** no-restricted-imports for every file 1..MAX_DEPTH directories below `base`. */
function layerRule(base, regexAt, message) {
  return Array.from({ length: MAX_DEPTH }, (_, index) => ({
    files: [`${base}/${'*/'.repeat(index)}*.{ts,js,mjs}`],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: ['switchyard'], patterns: [{ regex: regexAt(index + 1), message }] },
      ],
    },
  }));
}

const layers = [
  ...layerRule(
    'src/core',
    (depth) => intoSrc(SHELLS, depth),
    'src/core is the inner layer: it imports no shell (cli, api, worker, scheduler); move what both need into src/core.',
  ),
  ...SHELLS.flatMap((shell) =>
    layerRule(
      `src/${shell}`,
      (depth) =>
        intoSrc(
          SHELLS.filter((other) => other !== shell),
          depth,
        ),
      'the shells (cli, api, worker, scheduler) do not import each other: share through src/core.',
    ),
  ),
  {
    // The one exception: the CLI starts the other processes, through their
    // entry points (<shell>/run.ts) and nothing else of them.
    files: ['src/cli/commands/up.ts', 'src/cli/commands/processes.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['switchyard'],
          patterns: [
            {
              regex: intoSrc(['api', 'worker', 'scheduler'], 2, '(?!run\\.js$)'),
              message: 'the CLI starts api, worker and scheduler through their run.js entry points only.',
            },
          ],
        },
      ],
    },
  },
  // From sdk/<d1>/…/<dn>/file, n+1 "../" reach the repository's root.
  ...layerRule(
    'sdk',
    (depth) => `^${up(depth)}src/`,
    'sdk/ is published on its own: it never imports the application in src/.',
  ),
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'test-artifacts/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The review UI runs in the browser.
    files: ['src/api/ui/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        sessionStorage: 'readonly',
        location: 'readonly',
        history: 'readonly',
        fetch: 'readonly',
        navigator: 'readonly',
        HTMLElement: 'readonly',
        Event: 'readonly',
        FormData: 'readonly',
        URLSearchParams: 'readonly',
        requestAnimationFrame: 'readonly',
        crypto: 'readonly',
      },
    },
  },
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layers,
);
