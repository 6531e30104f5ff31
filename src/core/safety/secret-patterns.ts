// The pattern set behind redact.ts (docs/PROTOCOL.md §10). Two kinds:
// - a value after a name that ends in a secret keyword (GITHUB_TOKEN=…,
//   "client_secret": "…", x-api-key: …, --password …), any case, quotes and
//   spaces around the separator;
// - well-known token shapes on their own (provider prefixes, JWTs, PEM private
//   key blocks, AWS access key ids, credentials in URLs, this host's API tokens).
// Deliberately absent: any "high entropy" rule. Hex digests (SHA-256
// fingerprints, commit ids), UUIDs and plugin ids are shown to reviewers and
// must survive, and an entropy rule cannot tell them from a secret.
import { TOKEN_IN_TEXT } from './token-format.js';

export const REDACTED = '[REDACTED]';

/** Keywords a secret's name may end in (`DB_PASSWORD`, `clientSecret`, `x-api-key`). */
const SUFFIX_KEYWORDS = [
  'passw(?:or)?d',
  'passphrase',
  'pwd',
  'secret',
  'token',
  'credentials?',
  'signature',
  '(?:api|access|private|secret|account|auth|signing|encryption|master|client)[_-]?key',
];
/** Short keywords that count only as a whole name segment (`DB_PASS`, `pw`), so `bypass`, `compass` survive. */
const SEGMENT_KEYWORDS = ['pass', 'pw', 'sig'];

const NAME = `(?<![\\w.-])(?:[\\w.-]*?(?:${SUFFIX_KEYWORDS.join('|')})|(?:[\\w.-]*?[_.-])?(?:${SEGMENT_KEYWORDS.join('|')}))`;
/** A quoted value (also JSON-escaped, \"…\"), or an unquoted one up to a space or delimiter. */
const VALUE = `\\[REDACTED\\]|\\\\?"(?:[^"\\\\\\r\\n]|\\\\(?!")[^\\r\\n])*\\\\?"|'[^'\\r\\n]*'|[^\\s,;&"'\\\\<>}]+`;

export type Replacement = string | ((match: string, ...groups: string[]) => string);

/** A pattern, its replacement, and a substring without which it cannot match (skips the scan). */
export type Pattern = [RegExp, Replacement, string?];

export const PATTERNS: Pattern[] = [
  // PEM private key blocks, whole, also when the END line never came.
  [
    /-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|$)/g,
    REDACTED,
    'PRIVATE KEY',
  ],
  // The tail of a block whose BEGIN line was cut off: its base64 lines and the END line.
  [
    /(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/=]+\r?\n)*-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----/g,
    REDACTED,
    'PRIVATE KEY',
  ],
  // Authorization headers keep their scheme: `Authorization: Basic [REDACTED]`.
  [
    /\b((?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?)(?:(Basic|Bearer|Digest|Token|Negotiate|NTLM|AWS4-HMAC-SHA256)[ \t]+)?[^"'\\\r\n]+/gi,
    (_match, head: string, scheme?: string) => `${head}${scheme ? `${scheme} ` : ''}${REDACTED}`,
  ],
  // A bearer token anywhere; a short plain word after it ("Bearer token") is prose.
  [/\b(Bearer[ \t]+)(?![a-z]{1,15}(?![\w.~+/=-]))[\w.~+/=-]+/gi, `$1${REDACTED}`],
  // name=value, name: value, "name": "value", name => value.
  [new RegExp(`(${NAME})(\\\\?["']?[ \\t]*(?:=>|:=|[:=])[ \\t]*)(${VALUE})`, 'gi'), `$1$2${REDACTED}`],
  // Command-line flags: --password hunter2, -api-key abc.
  [
    new RegExp(`((?<![\\w.-])--?[\\w.-]*?(?:${SUFFIX_KEYWORDS.join('|')})[ \\t]+)(?!-)(${VALUE})`, 'gi'),
    `$1${REDACTED}`,
  ],
  // XML elements: <password>hunter2</password>.
  [new RegExp(`(<(?:${NAME})>)[^<\\r\\n]+`, 'gi'), `$1${REDACTED}`],
  // Credentials in URLs: scheme://user:pass@host.
  [/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)[^\s/:@]*:[^\s/@]*@/gi, `$1${REDACTED}@`, '://'],
  // This host's API tokens, even when the process never saw their value.
  [TOKEN_IN_TEXT, REDACTED],
  // Provider token shapes.
  ...(
    [
      /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub classic tokens
      /\bgithub_pat_[A-Za-z0-9_]{22,}/g, // GitHub fine-grained tokens
      /\bsk-(?=[\w-]*\d)[A-Za-z0-9][\w-]{19,}/g, // OpenAI, Anthropic (sk-ant-…), DeepSeek …
      /\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}/g, // Stripe secret and restricted keys
      /\bwhsec_[A-Za-z0-9+/]{20,}/g, // Stripe webhook secrets
      /\bxox[abposre]-[A-Za-z0-9-]{10,}/g, // Slack tokens
      /\bxapp-\d-[A-Za-z0-9-]{10,}/g, // Slack app-level tokens
      /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g, // Slack webhooks
      /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g, // JWTs (signature may be empty)
      /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
      /\bAIza[\w-]{35}/g, // Google API keys
      /\bya29\.[\w-]{20,}/g, // Google OAuth access tokens
      /\bGOCSPX-[\w-]{20,}/g, // Google OAuth client secrets
      /\bgl(?:pat|dt|rt|ptt|cbt|soat)-[\w-]{20,}/g, // GitLab tokens
      /\bnpm_[A-Za-z0-9]{36}\b/g, // npm tokens
      /\bpypi-AgE[\w-]{50,}/g, // PyPI tokens
      /\bhf_[A-Za-z0-9]{30,}/g, // Hugging Face tokens
      /\bSG\.[\w-]{20,}\.[\w-]{20,}/g, // SendGrid
      /\bSK[0-9a-f]{32}\b/g, // Twilio API keys
      /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g, // Shopify
      /\bdo[opr]_v1_[a-f0-9]{64}\b/g, // DigitalOcean
      /\bdapi[a-f0-9]{32}\b/g, // Databricks
      /\bhv[sbr]\.[\w-]{24,}/g, // HashiCorp Vault
      /\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}/g, // Doppler
      /\blin_api_[A-Za-z0-9]{40}\b/g, // Linear
      /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g, // Postman
      /\bATATT3[\w=-]{100,}/g, // Atlassian API tokens
      /\bglsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b/g, // Grafana service accounts
      /\bsbp_[a-f0-9]{40}\b/g, // Supabase
      /\bpul-[a-f0-9]{40}\b/g, // Pulumi
      /\bsntrys_[\w+/=]{50,}/g, // Sentry
      /\bdckr_pat_[\w-]{20,}/g, // Docker Hub
      /\b[A-Za-z0-9]{14}\.atlasv1\.[\w-]{60,}/g, // Terraform Cloud
      /\bNRAK-[A-Z0-9]{27}\b/g, // New Relic
      /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g, // age
      /\b\d{8,10}:AA[\w-]{33}\b/g, // Telegram bots
      /\bkey-[0-9a-f]{32}\b/g, // Mailgun
    ] as RegExp[]
  ).map((pattern): Pattern => [shapeStart(pattern), REDACTED]),
];

/**
 * A shape starts after anything but a letter or digit: `\b` would miss it after
 * an underscore (`extra_AKIA…`, `key_sk-…`), which joins words in names.
 */
function shapeStart(pattern: RegExp): RegExp {
  return new RegExp(pattern.source.replace(/^\\b/, '(?<![A-Za-z0-9])'), pattern.flags);
}

/** Environment names whose value is a secret by the same rule as `NAME=` above. */
export const SECRET_ENV_NAME = new RegExp(
  `^(?:[\\w.-]*?(?:${SUFFIX_KEYWORDS.join('|')})|(?:[\\w.-]*?[_.-])?(?:${SEGMENT_KEYWORDS.join('|')}))$`,
  'i',
);
