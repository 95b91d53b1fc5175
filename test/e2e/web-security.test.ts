import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { CLI, eventually, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { makeTestCertificates } from '../helpers/test-certificates.js';
import { Scenario } from './helpers/e2e-daemon.js';

/**
 * server.web_config_file through the built binary (issue 14): HTTPS with certificates made by openssl now,
 * basic auth users with bcrypt hashes, client certificates; curl and transfer-watch's own `silence` client.
 */

const run = promisify(execFile);
const HAVE_CURL = existsSync('/usr/bin/curl');
const PASSWORD = 'Corr3ct-Horse-Battery';

async function curl(...args: string[]): Promise<{ code: number; status: string; body: string }> {
  try {
    const { stdout } = await run('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', ...args], { timeout: 15_000 });
    const i = stdout.lastIndexOf('\n');
    return { code: 0, status: stdout.slice(i + 1), body: stdout.slice(0, i) };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    const out = e.stdout ?? '';
    return { code: typeof e.code === 'number' ? e.code : 1, status: out.slice(out.lastIndexOf('\n') + 1), body: '' };
  }
}

/** Start the scenario's daemon with `server.web_config_file` added to its config. */
async function startWithWebConfig(s: Scenario, webConfig: string): Promise<DaemonProcess> {
  s.write({ rules: [], receivers: [{ name: 'none', console: {} }], route: { receiver: 'none' } });
  const config = parse(readFileSync(s.configFile, 'utf8')) as Record<string, Record<string, unknown>>;
  config['server'] = { ...config['server'], web_config_file: webConfig };
  writeFileSync(s.configFile, stringify(config));
  // Tracked: the scenario's cleanup ends it before removing its folder (left running, it went on writing its state).
  return s.track(await startDaemonProcess(s.configFile, { timeoutMs: 30_000 }));
}

describe.skipIf(!existsSync(CLI) || !HAVE_CURL).concurrent('the daemon behind its own TLS and basic auth (issue 14)', () => {
  it('HTTPS with basic auth: 401 without or with wrong credentials (counted, logged without the password), open probes, createdBy is the user; a bad web config on reload keeps the last good', async () => {
    const certs = makeTestCertificates();
    const s = await Scenario.create('websec');
    try {
      const webConfig = join(s.dir, 'web.yml');
      writeFileSync(
        webConfig,
        stringify({
          tls_server_config: { cert_file: certs.serverCert, key_file: certs.serverKey },
          basic_auth_users: { alice: bcrypt.hashSync(PASSWORD, 4) },
          http_server_config: { headers: { 'Strict-Transport-Security': 'max-age=31536000' } },
        }),
      );
      const d = await startWithWebConfig(s, webConfig);
      expect(d.url.startsWith('https://')).toBe(true);
      const base = d.url;
      const tls = ['--cacert', certs.caCert];
      await eventually(async () => (await curl(...tls, `${base}/readyz`)).status === '200', 20_000);

      expect((await curl(...tls, `${base}/healthz`)).status).toBe('200');
      expect((await curl(...tls, `${base}/api/v1/alerts`)).status).toBe('401');
      expect((await curl(...tls, '-u', 'alice:wrong-password-1', `${base}/api/v1/alerts`)).status).toBe('401');
      expect((await curl(...tls, '-u', 'mallory:whatever', `${base}/metrics`)).status).toBe('401');
      const ok = await curl(...tls, '-u', `alice:${PASSWORD}`, '-D', '-', `${base}/api/v1/alerts`);
      expect(ok.status).toBe('200');
      expect(ok.body).toMatch(/strict-transport-security: max-age=31536000/i);
      expect(ok.body).toMatch(/x-frame-options: DENY/i);
      // Plain HTTP to the TLS port, and an unknown CA, get nowhere.
      expect((await curl(`${base.replace('https:', 'http:')}/api/v1/alerts`)).status).not.toBe('200');
      expect((await curl(`${base}/healthz`)).code).not.toBe(0);

      const metrics = await curl(...tls, '-u', `alice:${PASSWORD}`, `${base}/metrics`);
      // Two failed logins and one request without credentials (counted, as the metric's help says; not logged).
      expect(metrics.body).toMatch(/^transfer_watch_http_auth_failures_total 3$/m);
      // The daemon's log arrives through a pipe: wait for the lines rather than race them.
      const failures = await eventually(() => {
        const lines = d.logs.filter((l) => l.msg === 'HTTP authentication failed');
        return lines.length >= 2 ? lines : undefined;
      }, 10_000);
      expect(failures.map((l) => l.user)).toEqual(['alice', 'mallory']);
      expect(JSON.stringify(d.logs)).not.toContain('wrong-password-1');

      // transfer-watch's own client over TLS with basic auth: the silence is in alice's name, whatever --author says.
      const add = await runCli(['silence', 'add', 'alertname="X"', '--comment', 'tls test', '--author', 'someone-else', '--url', base, '--user', 'alice', '--ca-file', certs.caCert], {
        env: { TRANSFER_WATCH_PASSWORD: PASSWORD },
      });
      expect(add.stderr).toBe('');
      expect(add.code).toBe(0);
      const httpConfig = join(s.dir, 'http.yml');
      writeFileSync(httpConfig, stringify({ basic_auth: { username: 'alice', password: PASSWORD }, tls_config: { ca_file: certs.caCert } }));
      const list = await runCli(['silence', 'list', '--json', '--url', base, '--http.config.file', httpConfig]);
      expect(list.code).toBe(0);
      expect((JSON.parse(list.stdout) as Array<{ createdBy: string }>).map((x) => x.createdBy)).toEqual(['alice']);
      const denied = await runCli(['silence', 'list', '--url', base, '--ca-file', certs.caCert]);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toContain('HTTP 401');

      // A broken web config on reload: refused with its file and key, the last good one keeps working.
      writeFileSync(webConfig, stringify({ basic_auth_users: { alice: 'not-a-bcrypt-hash' } }));
      const reload = await curl(...tls, '-u', `alice:${PASSWORD}`, '-X', 'POST', `${base}/-/reload`);
      expect(reload.status).toBe('500');
      expect(reload.body).toContain('web.yml');
      expect(reload.body).toContain('basic_auth_users.alice');
      expect((await curl(...tls, '-u', `alice:${PASSWORD}`, `${base}/api/v1/alerts`)).status).toBe('200');
      expect(s.allLogs()).not.toContain(PASSWORD);
    } finally {
      await s.cleanup();
      rmSync(certs.dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('client certificates (RequireAndVerifyClientCert): no certificate, no connection; the certificate is the user', async () => {
    const certs = makeTestCertificates();
    const s = await Scenario.create('mtls');
    try {
      const webConfig = join(s.dir, 'web.yml');
      writeFileSync(
        webConfig,
        stringify({ tls_server_config: { cert_file: certs.serverCert, key_file: certs.serverKey, client_auth_type: 'RequireAndVerifyClientCert', client_ca_file: certs.caCert } }),
      );
      const d = await startWithWebConfig(s, webConfig);
      const mtls = ['--cacert', certs.caCert, '--cert', certs.clientCert, '--key', certs.clientKey];
      await eventually(async () => (await curl(...mtls, `${d.url}/readyz`)).status === '200', 20_000);
      expect((await curl('--cacert', certs.caCert, `${d.url}/api/v1/alerts`)).code).not.toBe(0);
      expect((await curl(...mtls, `${d.url}/api/v1/alerts`)).status).toBe('200');
      const created = await curl(...mtls, '-X', 'POST', '-H', 'content-type: application/json', '--data', JSON.stringify({ matchers: [{ name: 'a', value: 'b', isRegex: false, isEqual: true }], endsAt: new Date(Date.now() + 3_600_000).toISOString(), createdBy: 'x', comment: 'c' }), `${d.url}/api/v2/silences`);
      expect(created.status).toBe('200');
      const listed = await curl(...mtls, `${d.url}/api/v2/silences`);
      expect((JSON.parse(listed.body) as Array<{ createdBy: string }>)[0]?.createdBy).toBe('ops-bot');
    } finally {
      await s.cleanup();
      rmSync(certs.dir, { recursive: true, force: true });
    }
  }, 90_000);
});
