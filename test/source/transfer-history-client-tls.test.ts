import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceError } from '../../src/source/source-error.js';
import { TransferHistoryClient } from '../../src/source/transfer-history-client.js';
import { silentLogger } from '../../src/util/logger.js';
import { collect, query, sourceConfig } from './client-fixtures.js';
import { startFakeService, wireRecords, type FakeTransferService } from './fake-transfer-service.js';

/**
 * TLS against a real HTTPS server with a self-signed certificate for 127.0.0.1, made by the openssl CLI
 * (present on every CI image we use; the test fails loudly, not silently, without it).
 */
let dir = '';
let service: FakeTransferService;
let caFile = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tw-tls-'));
  const key = join(dir, 'key.pem');
  caFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', caFile, '-days', '2',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  service = await startFakeService({
    prefix: '/api',
    records: wireRecords(3, '2024-05-01T10:00:00Z'),
    tls: { key: readFileSync(key, 'utf8'), cert: readFileSync(caFile, 'utf8') },
  });
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

function client(tls: { ca_file: string; insecure_skip_verify: boolean }): TransferHistoryClient {
  return new TransferHistoryClient({
    source: sourceConfig(service.baseUrl, { tls, retries: 1 }),
    logger: silentLogger(),
    retryDelay: () => 0,
  });
}

describe('TransferHistoryClient TLS', () => {
  it('trusts a server certificate signed by tls.ca_file', async () => {
    const got = await collect(client({ ca_file: caFile, insecure_skip_verify: false }), query({ limit: 2 }));
    expect(got.transfers).toHaveLength(3);
  });

  it('refuses an unknown certificate with reason tls, before any credentials are sent', async () => {
    const before = service.requests.length;
    const err = await collect(client({ ca_file: '', insecure_skip_verify: false }), query()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as SourceError).reason).toBe('tls');
    expect(service.requests.length).toBe(before);
  });

  it('skips verification when insecure_skip_verify is set', async () => {
    const got = await collect(client({ ca_file: '', insecure_skip_verify: true }), query());
    expect(got.transfers).toHaveLength(3);
  });

  it('reports an unreadable ca_file as tls', async () => {
    const missing = join(dir, 'missing.pem');
    const err = await collect(client({ ca_file: missing, insecure_skip_verify: false }), query()).catch((e: unknown) => e);
    expect((err as SourceError).reason).toBe('tls');
  });
});
