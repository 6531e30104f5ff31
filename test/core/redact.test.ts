// Redaction (docs/PROTOCOL.md §10) against a corpus of real-world secret shapes,
// each of which must disappear, and of look-alikes a reviewer must still see.
// Values are built from pieces so that no scanner mistakes this file for a leak.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { StderrTail } from '../../src/core/supervision/stderr-tail.js';
import {
  mayHoldSecret,
  redact,
  redactDeep,
  registerEnvSecrets,
  registerSecret,
} from '../../src/core/safety/redact.js';
import { redactInspection } from '../../src/core/plugins/result-redaction.js';
import { textView, withoutControlSequences } from '../../src/core/safety/control-sequences.js';

const r = (unit: string, times: number) => unit.repeat(times);
const HEX40 = r('0123456789abcdef', 3).slice(0, 40);
const HEX64 = r('9f86d081884c7d65', 4);
const B62 = (n: number) => r('aZ3kQ9xW2mP7', 10).slice(0, n);
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${B62(43)}`;
const HOST_TOKEN = `sy_${'k3j9x0a2b7c1'}_${B62(40)}-_Q`;

/** [label, line, secret value that must not survive] */
const SECRETS: [string, string, string][] = [
  ['GITHUB_TOKEN env', `GITHUB_TOKEN=${'ghp_'}${B62(36)}`, B62(36)],
  ['OPENAI_API_KEY env', `OPENAI_API_KEY=sk-proj-${B62(48)}`, B62(48)],
  [
    'AWS secret with spaces',
    `AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLEKEY'}`,
    'wJalrXUtnFEMI',
  ],
  ['DB_PASSWORD colon', 'DB_PASSWORD: correct-horse-battery', 'correct-horse-battery'],
  ['client_secret query', 'POST /oauth?client_secret=c1i3nt-s3cr3t&grant=x', 'c1i3nt-s3cr3t'],
  ['x-api-key header', 'x-api-key: 8f0e-api-key-value', '8f0e-api-key-value'],
  ['upper-case PASSWORD', 'PASSWORD=Tr0ub4dor&3', 'Tr0ub4dor'],
  ['camelCase clientSecret', 'clientSecret="abc-123-secret"', 'abc-123-secret'],
  ['JSON password', '{"user":"ann","password":"hunter2!"}', 'hunter2!'],
  ['JSON-escaped in a message', 'line: {\\"api_key\\":\\"k-7654321\\"}', 'k-7654321'],
  ['single-quoted YAML', "db_pass: 'pa55 word'", 'pa55 word'],
  ['export with quotes', 'export SLACK_BOT_TOKEN="xoxb-123-456-abcdef"', 'xoxb-123-456-abcdef'],
  ['Ruby hash rocket', ':secret => s3kr1tvalue', 's3kr1tvalue'],
  ['Go :=', 'token := tok_live_998877', 'tok_live_998877'],
  ['CLI flag --password', 'mysql --password hunter22 -u root', 'hunter22'],
  ['CLI flag --api-key=', 'tool --api-key=AbC123xyz', 'AbC123xyz'],
  ['XML element', '<password>xml-secret-1</password>', 'xml-secret-1'],
  ['Azure AccountKey', `DefaultEndpointsProtocol=https;AccountName=x;AccountKey=${B62(40)}==;`, B62(40)],
  ['presigned signature', `https://b.s3.amazonaws.com/o?X-Amz-Signature=${HEX64}`, HEX64],
  ['Bearer header', `Authorization: Bearer ${B62(30)}`, B62(30)],
  ['Basic header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpwYXNzd29yZA=='],
  ['bare Bearer', `curl -H "Bearer ${JWT}"`, JWT.slice(20)],
  ['GitHub classic', `cloning with ghp_${B62(36)}`, B62(36)],
  ['GitHub OAuth', `gho_${B62(36)}`, B62(36)],
  ['GitHub fine-grained', `github_pat_11ABCDEFG0${B62(12)}_${B62(59)}`, B62(59)],
  ['OpenAI legacy', `key sk-${B62(48)}`, B62(48)],
  ['Anthropic', `sk-ant-api03-${B62(90)}AA`, B62(90)],
  ['Stripe live', `sk_live_${B62(24)}`, B62(24)],
  ['Stripe webhook', `whsec_${B62(32)}`, B62(32)],
  ['Slack bot', 'xoxb-2048-4096-a1B2c3D4e5F6g7H8', 'a1B2c3D4e5F6g7H8'],
  ['Slack user', 'xoxp-1111-2222-3333-ffffeeee', 'ffffeeee'],
  ['Slack webhook', `https://hooks.slack.com/services/T0000/B0000/${B62(24)}`, B62(24)],
  ['JWT alone', `id_tok ${JWT} end`, JWT],
  ['AWS access key id', `using ${'AKIA'}IOSFODNN7EXAMPLE`, 'IOSFODNN7EXAMPLE'],
  ['AWS access key id after an underscore', `extra_${'AKIA'}IOSFODNN7EXAMPLE`, 'IOSFODNN7EXAMPLE'],
  ['OpenAI key after an underscore', `key_sk-proj-${B62(40)}`, B62(40)],
  ['AWS temporary key id', `${'ASIA'}Y34FZKBOKMUTVV7A`, 'Y34FZKBOKMUTVV7A'],
  ['URL credentials', 'fetching https://deploy:s3cret@git.example.com/r.git', 's3cret'],
  ['Redis URL with password only', 'redis://:redispw123@10.0.0.1:6379/0', 'redispw123'],
  ['Postgres URL', 'postgres://app:db-pass-0123@db.example.com/app', 'db-pass-0123'],
  ['Google API key', `AIza${B62(35)}`, B62(35)],
  ['Google OAuth token', `ya29.${B62(60)}`, B62(60)],
  ['GitLab PAT', `glpat-${B62(20)}`, B62(20)],
  ['npm token', `//registry.npmjs.org/:_authToken=npm_${B62(36)}`, B62(36)],
  ['PyPI token', `pypi-AgEIcHlwaS5vcmc${B62(60)}`, B62(60)],
  ['Hugging Face', `hf_${B62(34)}`, B62(34)],
  ['SendGrid', `SG.${B62(22)}.${B62(43)}`, B62(43)],
  ['Twilio API key', `SK${HEX40.slice(0, 32)}`, HEX40.slice(0, 32)],
  ['Shopify', `shpat_${HEX40.slice(0, 32)}`, HEX40.slice(0, 32)],
  ['DigitalOcean', `dop_v1_${HEX64}`, HEX64],
  ['Vault', `hvs.${B62(90)}`, B62(90)],
  ['Docker Hub', `dckr_pat_${B62(27)}`, B62(27)],
  ['age key', `AGE-SECRET-KEY-1${r('QW3R7Y', 10).slice(0, 58)}`, r('QW3R7Y', 10).slice(0, 58)],
  ['host API token', `leaked ${HOST_TOKEN} here`, HOST_TOKEN.slice(16)],
  ['host API token, truncated', `${HOST_TOKEN.slice(0, 30)}`, HOST_TOKEN.slice(16, 30)],
  [
    'PEM private key',
    `key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA${B62(48)}\n${B62(64)}\n-----END RSA PRIVATE KEY-----\ndone`,
    B62(64),
  ],
  ['PEM, END never came', `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk${B62(40)}`, B62(40)],
  ['PEM tail, BEGIN cut off', `${B62(64)}\n${B62(20)}==\n-----END PRIVATE KEY-----`, B62(64)],
];

/** Lines that must come out exactly as they went in. */
const LOOK_ALIKES: string[] = [
  'tokenizer=3',
  'password_policy=strict',
  'max_tokens=4096',
  'token_count: 17',
  'secret_name=db-credentials-ref',
  '"token_type": "bearer"',
  'bypass=true compass=north',
  'the sk key on the keyboard; sk-learn is a typo of scikit-learn',
  `fingerprint ${HEX64}`,
  `sha256:${HEX64}`,
  `commit ${HEX40}`,
  'request 123e4567-e89b-12d3-a456-426614174000 took 5 ms',
  'plugin com.example.secret-scanner v1.2.3',
  'plugin token-counter is healthy',
  'missing Bearer token in the request',
  '--token-file /run/secrets/api',
  'git@github.com:example/repo.git',
  'https://example.com/path/@scope/pkg',
  'ssh://git@example.com/repo',
  'eyJhbGciOiJIUzI1NiJ9 is a base64 header',
  'AKIA is the prefix of AWS access keys',
  'sy_ is the prefix of switchyard tokens',
  'see the password reset page',
  'passwordless=true',
  'github_pat is described in the docs',
  'xoxb tokens come from Slack',
  '/home/ann/projects/private-keys-docs/README.md',
];

describe('redaction corpus', () => {
  it(`redacts ${SECRETS.length} real-world secret shapes`, () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(40);
    const missed: string[] = [];
    for (const [label, line, secret] of SECRETS) {
      const out = redact(line);
      if (out.includes(secret) || !out.includes('[REDACTED]')) missed.push(`${label}: ${out}`);
    }
    expect(missed).toEqual([]);
  });

  it(`leaves ${LOOK_ALIKES.length} look-alikes as they are`, () => {
    expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(20);
    const changed = LOOK_ALIKES.filter((line) => redact(line) !== line).map((line) => redact(line));
    expect(changed).toEqual([]);
  });

  it('keeps the name, the separator and the authorization scheme', () => {
    expect(redact('GITHUB_TOKEN=abc123456')).toBe('GITHUB_TOKEN=[REDACTED]');
    expect(redact('AWS_SECRET_ACCESS_KEY = abc/def')).toBe('AWS_SECRET_ACCESS_KEY = [REDACTED]');
    expect(redact('Authorization: Basic dXNlcjpwYXNz')).toBe('Authorization: Basic [REDACTED]');
    expect(redact('Authorization: Bearer abc.def')).toBe('Authorization: Bearer [REDACTED]');
  });

  it('is idempotent', () => {
    for (const [, line] of SECRETS) expect(redact(redact(line))).toBe(redact(line));
  });

  it('stays linear on long lines', () => {
    const line = `${'y'.repeat(200_000)} ${'password-'.repeat(20_000)}`;
    const started = performance.now();
    redact(line);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

const ESC = '\u001b';
const ST = `${ESC}\\`;
const ZERO_WIDTH = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad'];
/** Other default-ignorable code points a renderer draws as nothing: variation selectors, tag characters, Hangul fillers. */
const IGNORABLE = [
  '\ufe0f',
  '\ufe00',
  '\u{e0041}',
  '\u{e0100}',
  '\u3164',
  '\u115f',
  '\uffa0',
  '\u180b',
  '\u{1d173}',
];
const red = (text: string) => `${ESC}[31m${text}${ESC}[0m`;
/** A piece of a secret, cut in two by a control sequence. */
const cutBy = (secret: string, sequence: string) => {
  const half = Math.max(1, Math.floor(secret.length / 2));
  return `${secret.slice(0, half)}${sequence}${secret.slice(half)}`;
};
/** Every word coloured on its own, as log formatters do with names and values. */
const everyWordColoured = (line: string) =>
  line.replace(/[A-Za-z0-9_]+/g, (word, at: number) => `${ESC}[1;3${at % 8}m${word}${ESC}[39;22m`);

/** The ways a terminal sequence can stand next to, around or inside a secret. */
const ANSI_FORMS: [string, (line: string, secret: string) => string][] = [
  ['wrapped in a colour', (line, secret) => line.replace(secret, red(secret))],
  ['split by a reset', (line, secret) => line.replace(secret, cutBy(secret, `${ESC}[0m`))],
  ['every word coloured', (line) => everyWordColoured(line)],
  ['split by an 8-bit CSI', (line, secret) => line.replace(secret, cutBy(secret, '\u009b2K'))],
  [
    'inside a hyperlink',
    (line, secret) => line.replace(secret, `${ESC}]8;;https://x.test${ESC}\\${secret}${ESC}]8;;${ESC}\\`),
  ],
  [
    'split by a title and a bell',
    (line, secret) => line.replace(secret, cutBy(secret, `${ESC}]0;t\u0007\b`)),
  ],
  // String sequences (DCS, SOS, PM, APC, OSC): a terminal hides their payload,
  // but it is stored, and a reader of the stored text sees it.
  ['inside a DCS', (line, secret) => line.replace(secret, `${ESC}P${secret}${ST}`)],
  ['the whole line in a DCS', (line) => `${ESC}P${line}${ST}`],
  ['the whole line in an SOS', (line) => `${ESC}X${line}${ST}`],
  ['the whole line in a PM', (line) => `${ESC}^${line}${ST}`],
  ['the whole line in an APC', (line) => `${ESC}_${line}${ST}`],
  ['the whole line in an OSC ended by a bell', (line) => `${ESC}]0;${line}\u0007`],
  ['the whole line in 8-bit DCS and OSC', (line) => `\u0090${line}\u009c\u009d${line}\u009c`],
  ['every word in its own DCS', (line) => line.replace(/\S+/g, (word) => `${ESC}P${word}${ST}`)],
  [
    'every word after an SOS introducer, unterminated',
    (line) => line.replace(/\S+/g, (word) => `${ESC}X${word}`),
  ],
  [
    'every word after a PM introducer, unterminated',
    (line) => line.replace(/\S+/g, (word) => `${ESC}^${word}`),
  ],
  ['the whole line in an unterminated APC', (line) => `${ESC}_${line}`],
  ['the whole line in an unterminated OSC', (line) => `${ESC}]${line}`],
  [
    'the first half of the line in an unterminated OSC',
    (line, secret) => {
      const cut = line.indexOf(secret) + Math.max(1, Math.floor(secret.length / 2));
      return `${ESC}]${line.slice(0, cut)}${ESC}[0m${line.slice(cut)}`;
    },
  ],
  [
    'the first half of the secret in an unterminated OSC',
    (line, secret) => line.replace(secret, `${ESC}]${cutBy(secret, `${ESC}[0m`)}`),
  ],
  [
    'the first half in a DCS, the second after it',
    (line, secret) => line.replace(secret, `${ESC}P${cutBy(secret, ST)}`),
  ],
  ['split by an empty APC', (line, secret) => line.replace(secret, cutBy(secret, `${ESC}_${ST}`))],
  ['split by a PM with a payload', (line, secret) => line.replace(secret, cutBy(secret, `${ESC}^pm${ST}`))],
  ['split by an 8-bit SOS', (line, secret) => line.replace(secret, cutBy(secret, '\u0098x\u009c'))],
  // Zero-width and other invisible format characters.
  ...[...ZERO_WIDTH, ...IGNORABLE].map((char): [string, (line: string, secret: string) => string] => [
    `split by U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
    (line, secret) => line.replace(secret, cutBy(secret, char)),
  ]),
  [
    'with a zero-width space between every character',
    (line, secret) => line.replace(secret, [...secret].join('\u200b')),
  ],
  [
    'split by a zero-width joiner inside a colour',
    (line, secret) => line.replace(secret, red(cutBy(secret, '\u200d'))),
  ],
  [
    'with a tag character between every character',
    (line, secret) => line.replace(secret, [...secret].join('\u{e0041}')),
  ],
];

describe('redaction with control sequences', () => {
  for (const [form, dress] of ANSI_FORMS) {
    it(`redacts every shape ${form}`, () => {
      const missed: string[] = [];
      for (const [label, line, secret] of SECRETS) {
        const out = redact(dress(line, secret));
        // What a terminal shows, and what a reader of the stored text can put together.
        const shown = withoutControlSequences(out);
        const readable = textView(out, { payload: true, introducer: 'join', terminator: 'join' }).text;
        if (shown.includes(secret) || readable.includes(secret) || !out.includes('[REDACTED]'))
          missed.push(`${label}: ${JSON.stringify(out)}`);
      }
      expect(missed).toEqual([]);
    });
  }

  it('redacts the shapes the attack used', () => {
    const token = HOST_TOKEN;
    const ghp = `ghp_${B62(36)}`;
    const sk = `sk-proj-${B62(48)}`;
    const cases: [string, string][] = [
      [`${ESC}[31m${token}${ESC}[0m`, token.slice(16)],
      [`${ESC}[33m${ghp}${ESC}[0m`, B62(36)],
      [`${ESC}[34mDB_PASSWORD${ESC}[0m=correct-horse-battery`, 'correct-horse-battery'],
      [`jwt ${ESC}[32m${JWT}${ESC}[0m`, JWT],
      [`key ${ESC}[1m${sk}${ESC}[22m`, B62(48)],
      [`${ESC}[35mclient_secret${ESC}[39m: ${ESC}[32m"c1i3nt-s3cr3t"${ESC}[39m`, 'c1i3nt-s3cr3t'],
    ];
    for (const [line, secret] of cases) {
      const out = redact(line);
      expect(out, JSON.stringify(line)).toContain('[REDACTED]');
      expect(withoutControlSequences(out)).not.toContain(secret);
    }
  });

  it('redacts the string-sequence shapes the audit found', () => {
    const [id, secret] = [HOST_TOKEN.slice(3, 15), HOST_TOKEN.slice(16)];
    const ghp = `ghp_${B62(36)}`;
    expect(redact(`${ESC}Psy_${id}_${secret}${ST}`)).toBe('[REDACTED]');
    expect(redact(`log ${ESC}X${ghp} end`)).toBe('log [REDACTED]');
    expect(redact(`${ESC}]${HOST_TOKEN.slice(0, 30)}${ESC}[0m${HOST_TOKEN.slice(30)} ok`)).toBe(
      '[REDACTED] ok',
    );
    expect(redact(`a ${ESC}_DB_PASSWORD=hunter9-apc${ST} b`)).toBe('a [REDACTED] b');
    expect(redact(`x \u200b${ghp.slice(0, 9)}\u200d${ghp.slice(9)}`)).toBe('x [REDACTED]');
  });

  it("redacts pino-pretty's coloured output", () => {
    const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as {
      prettyFactory: (options: { colorize: boolean }) => (line: string) => string;
    };
    const pretty = prettyFactory({ colorize: true })(
      `${JSON.stringify({ level: 30, time: 1, msg: 'connecting', password: 'hunter2-pino', apiToken: 'tok-pino-42' })}\n`,
    );
    expect(pretty).toContain(ESC);
    const out = redact(pretty);
    expect(out).not.toContain('hunter2-pino');
    expect(out).not.toContain('tok-pino-42');
    expect(out).toContain('password: [REDACTED]');
  });

  it('leaves coloured look-alikes exactly as they were, colours included', () => {
    const dressed = [
      ...LOOK_ALIKES.map(everyWordColoured),
      ...LOOK_ALIKES.map(red),
      `${ESC}[31mtokenizer${ESC}[0m=3`,
      `${ESC}]0;password reset${ESC}\\ done`,
      `${ESC}[38;5;208mwarning${ESC}[0m: token_count: ${ESC}[33m17${ESC}[0m`,
      `progress 10%\rprogress 20%\r${ESC}[2Kdone`,
      `${ESC}]8;;https://example.com/password-reset${ESC}\\see the password reset page${ESC}]8;;${ESC}\\`,
      `${ESC}P+q544e${ESC}\\ tokenizer=3`,
      `${ESC}_secret_name=db-credentials-ref${ESC}\\`,
      `${ESC}Xmax_tokens=4096`,
      'pass\u00adword reset, token\u200b_count: 17',
      '\ufeffplugin token-counter is healthy \u{1f469}\u200d\u{1f4bb}',
      'token\ufe0f_count: 17 \u2764\ufe0f \u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f} \u3164',
    ];
    const changed = dressed
      .filter((line) => redact(line) !== line)
      .map((line) => JSON.stringify(redact(line)));
    expect(changed).toEqual([]);
  });

  it('is idempotent and linear on escape-heavy lines', () => {
    for (const [, dress] of ANSI_FORMS) {
      for (const [, line, secret] of SECRETS)
        expect(redact(redact(dress(line, secret)))).toBe(redact(dress(line, secret)));
    }
    const line = `${`${ESC}[31m`.repeat(50_000)}${ESC}]${'x'.repeat(100_000)} password=${`${ESC}[0m`.repeat(20_000)}`;
    const started = performance.now();
    redact(line);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('literal secrets of the host', () => {
  it('redacts a registered value wherever it appears', () => {
    registerSecret('plain-looking-value-42');
    expect(redact('connected with plain-looking-value-42 ok')).toBe('connected with [REDACTED] ok');
  });

  it('registers secret environment values, and those named in SWITCHYARD_REDACT_ENV', () => {
    registerEnvSecrets({
      MY_SERVICE_TOKEN: 'svc-token-value-1',
      DEPLOY_KEY_MATERIAL: 'not-registered-value',
      SWITCHYARD_REDACT_ENV: 'DEPLOY_KEY_MATERIAL, OTHER',
      PWD: '/work/somewhere',
      HOME: '/root-home-dir',
    });
    expect(redact('a svc-token-value-1 b')).toBe('a [REDACTED] b');
    expect(redact('a not-registered-value b')).toBe('a [REDACTED] b');
    expect(redact('cwd /work/somewhere home /root-home-dir')).toBe('cwd /work/somewhere home /root-home-dir');
  });
});

describe('where redaction applies', () => {
  it('stderr: a PEM block across lines and a host token are redacted', () => {
    const tail = new StderrTail();
    tail.push(Buffer.from(`starting\n-----BEGIN PRIVATE KEY-----\n${B62(64)}\n`));
    tail.push(Buffer.from(`-----END PRIVATE KEY-----\ntoken is ${HOST_TOKEN}\n`));
    const text = tail.lines().join('\n');
    expect(text).not.toContain(B62(64));
    expect(text).not.toContain(HOST_TOKEN.slice(16));
    expect(tail.lines()[0]).toBe('starting');
  });

  it('stderr: a host token in colour codes is redacted', () => {
    const tail = new StderrTail();
    tail.push(Buffer.from(`\u001b[31m${HOST_TOKEN}\u001b[0m\n\u001b[34mDB_PASSWORD\u001b[0m=hunter2-db\n`));
    const text = tail.lines().join('\n');
    expect(text).not.toContain(HOST_TOKEN.slice(16));
    expect(text).not.toContain('hunter2-db');
  });

  it('structured values: strings and values under a secret name', () => {
    expect(
      redactDeep({ name: 'ci', token: 'abc', nested: [{ message: 'DB_PASSWORD=x1y2z3' }], count: 3 }),
    ).toEqual({ name: 'ci', token: '[REDACTED]', nested: [{ message: 'DB_PASSWORD=[REDACTED]' }], count: 3 });
  });

  it('inspection results: one scan of the whole result finds a secret in any of its texts', () => {
    const clean = () => ({
      summary: 'project p000001 inspected: 3 facts',
      facts: [
        { id: 'lang', label: 'Language', value: 'TypeScript', source: 'package.json' },
        { id: 'lines', label: 'Lines', value: '12,408', source: 'src/', warning: 'large' },
      ],
      actions: [{ id: 'lint', name: 'Lint', description: 'runs eslint --fix', risk: 'low' }],
      warnings: ['no lockfile'],
      observedAt: '2026-12-05T19:00:00Z',
    });
    const places: [string, (result: ReturnType<typeof clean>, line: string) => void][] = [
      ['summary', (result, line) => (result.summary = line)],
      ['a fact label', (result, line) => (result.facts[1]!.label = line)],
      ['a fact value', (result, line) => (result.facts[0]!.value = line)],
      ['a fact warning', (result, line) => (result.facts[1]!.warning = `large; ${line}`)],
      ['an action', (result, line) => (result.actions[0]!.description = line)],
      ['the last warning', (result, line) => result.warnings.push(line)],
    ];
    // Without a secret the scan says so, and the result comes back unmarked.
    expect(mayHoldSecret(Object.values(clean().facts[0]!))).toBe(false);
    expect(redactInspection(clean())).toEqual(clean());
    const missed: string[] = [];
    for (const [form, dress] of [['plain', (line: string) => line] as const, ...ANSI_FORMS]) {
      for (const [label, line, secret] of SECRETS) {
        for (const [place, put] of places) {
          const result = clean();
          put(result, dress(line, secret));
          const out = redactInspection(result);
          const shown = withoutControlSequences(JSON.stringify(out));
          if (shown.includes(secret) || out.redacted !== true) missed.push(`${label} ${form} in ${place}`);
        }
      }
    }
    expect(missed).toEqual([]);
  });
});
