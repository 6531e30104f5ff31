import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// Boundaries, enforced on resolved paths (import-x/no-restricted-paths: every
// static import, re-export and dynamic import() is resolved to a file first,
// so "../" counting and aliases cannot get around it), and no import cycle
// anywhere in src/ (import-x/no-cycle). docs/ARCHITECTURE.md draws the rooms.
//
// src/core is a set of rooms, each a folder whose index.ts is its only door.
// A room imports only the rooms listed for it here (the ones below it), and
// only through their doors; the shells (cli, api, worker, scheduler) import
// only room doors and never each other (the CLI starts the other processes
// through their *-process.ts entry points); sdk/ never imports src/.
export const ROOMS = {
  safety: [],
  platform: ['safety'],
  redis: ['platform', 'safety'],
  access: ['redis', 'platform', 'safety'],
  projects: ['access', 'redis', 'platform', 'safety'],
  supervision: ['platform', 'safety'],
  plugins: ['supervision', 'projects', 'access', 'redis', 'platform', 'safety'],
  // Webhooks: the rooms where events become known publish through its door.
  'work/notify': ['access', 'redis', 'platform', 'safety'],
  'work/batches': ['work/notify', 'plugins', 'projects', 'access', 'redis', 'platform', 'safety'],
  'work/operations': ['work/notify', 'plugins', 'projects', 'access', 'redis', 'platform', 'safety'],
  'work/upkeep': [
    'work/notify',
    'work/batches',
    'work/operations',
    'plugins',
    'projects',
    'access',
    'redis',
    'platform',
    'safety',
  ],
  // Rollouts: waves of ordinary operations over a selection of the fleet.
  'work/rollouts': [
    'work/notify',
    'work/batches',
    'work/operations',
    'plugins',
    'projects',
    'access',
    'redis',
    'platform',
    'safety',
  ],
  // The HTTP API's contract: routes and schemas over the views of the rooms below.
  contract: [
    'work/rollouts',
    'work/notify',
    'work/upkeep',
    'work/batches',
    'work/operations',
    'plugins',
    'projects',
    'access',
    'redis',
    'platform',
    'safety',
  ],
  runtime: [
    'contract',
    'work/rollouts',
    'work/notify',
    'work/upkeep',
    'work/batches',
    'work/operations',
    'plugins',
    'supervision',
    'projects',
    'access',
    'redis',
    'platform',
    'safety',
  ],
};
const SHELLS = ['cli', 'api', 'worker', 'scheduler'];
const room = (name) => `src/core/${name}/**`;
const DOOR = '**/src/core/**/index.ts';

const zones = [
  ...Object.entries(ROOMS).flatMap(([name, below]) => {
    const others = Object.keys(ROOMS).filter((other) => other !== name);
    const forbidden = others.filter((other) => !below.includes(other));
    return [
      ...(forbidden.length > 0
        ? [
            {
              target: `src/core/${name}/*.ts`,
              from: forbidden.map(room),
              message: `the ${name} room imports only ${below.length > 0 ? below.join(', ') : 'no other room'} (eslint.config.js ROOMS).`,
            },
          ]
        : []),
      {
        target: `src/core/${name}/*.ts`,
        from: others.map(room),
        except: [DOOR],
        message: "another room is imported through its door only: '<room>/index.js'.",
      },
    ];
  }),
  {
    target: 'src/core/**',
    from: SHELLS.map((shell) => `src/${shell}/**`),
    message: 'src/core imports no shell (cli, api, worker, scheduler); move what both need into a core room.',
  },
  {
    target: SHELLS.map((shell) => `src/${shell}/**`),
    from: 'src/core/**',
    except: [DOOR],
    message: "a shell imports a core room through its door only: 'core/<room>/index.js'.",
  },
  ...SHELLS.map((shell) => ({
    // The exceptions: two CLI commands start the other processes through their entry points,
    // and local mode builds the api's routes in its own process (in-process-transport.ts).
    target:
      shell === 'cli' ? 'src/cli/**/!(up-command|processes|in-process-transport).ts' : `src/${shell}/**`,
    from: SHELLS.filter((other) => other !== shell).map((other) => `src/${other}/**`),
    message: 'the shells (cli, api, worker, scheduler) do not import each other: share through a core room.',
  })),
  {
    target: ['src/cli/commands/up-command.ts', 'src/cli/commands/processes.ts'],
    from: ['src/api/**', 'src/worker/**', 'src/scheduler/**'],
    except: [
      '**/src/api/api-process.ts',
      '**/src/worker/worker-process.ts',
      '**/src/scheduler/scheduler-process.ts',
    ],
    message: 'the CLI starts api, worker and scheduler through their *-process.ts entry points only.',
  },
  {
    target: 'src/cli/in-process-transport.ts',
    from: ['src/api/**', 'src/worker/**', 'src/scheduler/**'],
    except: ['**/src/api/in-process.ts'],
    message: "local mode reaches the api's routes through api/in-process.ts only.",
  },
  {
    target: 'sdk/**',
    from: 'src/**',
    message: 'sdk/ is published on its own: it never imports the application in src/.',
  },
];

const boundaries = {
  files: ['src/**/*.{ts,js,mjs}', 'sdk/**/*.{ts,js,mjs}'],
  plugins: { 'import-x': importX },
  settings: {
    // Which files import-x parses to follow their imports (no-cycle walks them).
    'import-x/extensions': ['.ts', '.js', '.mjs'],
    'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    'import-x/resolver-next': [
      createTypeScriptImportResolver({
        project: ['tsconfig.json', 'sdk/tsconfig.json'],
        noWarnOnMultipleProjects: true,
      }),
    ],
  },
  rules: {
    'import-x/no-restricted-paths': ['error', { zones }],
    'import-x/no-cycle': ['error', { ignoreExternal: true }],
    'import-x/no-duplicates': 'error',
  },
};

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
  {
    // Promises handled, type-aware (the types come from tsconfig.json through the project
    // service): a promise nobody awaits loses its rejection, and one passed where a callback's
    // result is ignored (an event handler, a Fastify hook) is never awaited. Only src/: the
    // type information costs lint time, and tests await what they start.
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  boundaries,
);
