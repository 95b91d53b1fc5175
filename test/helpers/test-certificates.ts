import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate (CN `ops-bot`), made by openssl now. */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'tw-certs-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', '/CN=transfer-watch test CA');
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=localhost');
  ssl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.crt'), '-days', '2', '-extfile', f('server.ext'));
  writeFileSync(f('client.ext'), 'extendedKeyUsage=clientAuth\n');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('client.key'), '-out', f('client.csr'), '-subj', '/CN=ops-bot');
  ssl('x509', '-req', '-in', f('client.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('client.crt'), '-days', '2', '-extfile', f('client.ext'));
  return { dir, caCert: f('ca.crt'), serverCert: f('server.crt'), serverKey: f('server.key'), clientCert: f('client.crt'), clientKey: f('client.key') };
}
