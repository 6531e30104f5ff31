// The Sentinel form of --redis-url (README "Deployment beyond one machine"),
// parsed into ioredis' sentinel options; passwords never shown in messages.
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/core/safety/redact.js';
import { parseSentinelUrl, safeUrl } from '../../src/core/redis/connections.js';

describe('redis+sentinel:// URLs', () => {
  it('hosts, primary name, credentials and db', () => {
    const parsed = parseSentinelUrl(
      'redis+sentinel://app:s3cret@10.0.0.1:26379,sentinel-b,[::1]:26380/main?db=2',
    );
    expect(parsed?.options).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'main',
      username: 'app',
      password: 's3cret',
      db: 2,
    });
  });

  it('sentinel credentials from the query; rediss+sentinel uses TLS to primary and sentinels', () => {
    const parsed = parseSentinelUrl(
      'rediss+sentinel://:pw@h1:1,h2:2/m?sentinelUsername=s&sentinelPassword=t',
    );
    expect(parsed?.options).toMatchObject({
      password: 'pw',
      sentinelUsername: 's',
      sentinelPassword: 't',
      tls: {},
      sentinelTLS: {},
      enableTLSForSentinelMode: true,
    });
    expect(parsed?.options.username).toBeUndefined();
  });

  it('other URLs are not Sentinel URLs; malformed ones are refused with the syntax', () => {
    expect(parseSentinelUrl('redis://h:6379')).toBeUndefined();
    expect(() => parseSentinelUrl('redis+sentinel://h1:26379')).toThrow(/<primary name>/);
    expect(() => parseSentinelUrl('redis+sentinel://h1:26379/m?db=x')).toThrow(/db must be a number/);
  });

  it('the syntax the refusal shows survives redaction (api and logs redact what they print)', () => {
    let message = '';
    try {
      parseSentinelUrl('redis+sentinel://h1:26379');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/user:password@/);
    expect(redact(message)).toBe(message);
  });

  it('safeUrl hides the password', () => {
    expect(safeUrl('redis+sentinel://app:s3cret@h1:1,h2:2/m')).toBe('redis+sentinel://app:***@h1:1,h2:2/m');
    expect(safeUrl('redis+sentinel://h1:1/m')).toBe('redis+sentinel://h1:1/m');
  });
});
