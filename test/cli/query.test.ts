import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csvField } from '../../src/base/csv.js';
import { runQuery, type QueryOptions } from '../../src/cli/query.js';
import { ManualClock } from '../../src/util/clock.js';
import { json, startFakeService, wireRecord, wireRecords, type FakeServiceOptions, type FakeTransferService } from '../source/fake-transfer-service.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
let dir = '';
const servers: FakeTransferService[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tw-query-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function service(options: FakeServiceOptions = {}): Promise<FakeTransferService> {
  const s = await startFakeService({ prefix: '/mft/api', password: 'query-pass-123', ...options });
  servers.push(s);
  return s;
}

function configFor(s: FakeTransferService, extra = ''): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    `sources:
  - name: prod
    base_url: ${s.baseUrl}
    username: operator
    password: query-pass-123
    retries: 1
    timeout: 2s
${extra}
poll:
  page_size: 2
log:
  level: silent
`,
  );
  return file;
}

async function run(options: Omit<QueryOptions, 'format'> & { format?: string }, tty = false) {
  let stdout = '';
  let stderr = '';
  const code = await runQuery(options, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t), isTTY: tty },
    clock: new ManualClock(NOW),
    env: {},
    retryDelay: () => 0,
  });
  return { code, stdout, stderr };
}

describe('transfer-watch query', () => {
  it('sends repeated --event as repeated events, --tags and --limit as given', async () => {
    const s = await service({ records: wireRecords(2, '2024-05-01T11:10:00Z') });
    const r = await run({ config: configFor(s), format: 'ndjson', event: ['transmission', 'reception'], tags: 'PAYMENTS', limit: 250 });
    expect(r.code).toBe(0);
    for (const req of s.transfersRequests) {
      expect(req.query.getAll('events')).toEqual(['5', '7']);
      expect(req.query.get('tags')).toBe('PAYMENTS');
      expect(req.query.get('limit')).toBe('250');
    }
    expect((await run({ config: configFor(s), limit: 5000 })).code).toBe(2);
  });

  it('prints every page as ndjson with the service field names, normalised', async () => {
    const records = [
      ...wireRecords(3, '2024-05-01T11:10:00Z', { RESULTADO: '12', EVENTO: '7' }),
      wireRecord({ DATAHORA: '2024-05-01 11:30:00', NOMEARQUIVO: 'zoneless', RESULTADO: 3 }),
      wireRecord({ DATAHORA: '2024-05-01T11:40:00Z', RESULTADO: 0, NOMEARQUIVO: 'ok' }),
    ];
    const s = await service({ records });
    const r = await run({ config: configFor(s), format: 'ndjson', failed: true, event: 'reception' });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.NOMEARQUIVO)).toEqual(['/in/FILE_0.RET', '/in/FILE_1.RET', '/in/FILE_2.RET', 'zoneless']);
    expect(lines[0]).toMatchObject({ DATAHORA: '2024-05-01T11:10:00.000Z', RESULTADO: 12, EVENTO: 7, TAMARQUIVO: 2400 });
    expect(lines[3]?.DATAHORA).toBe('2024-05-01T11:30:00.000Z');
    expect(Object.keys(lines[0] ?? {})).toContain('DIAS');
    expect(s.transfersRequests).toHaveLength(2);
    for (const req of s.transfersRequests) {
      expect(req.query.get('results')).toBe('-1');
      expect(req.query.getAll('events')).toEqual(['7']);
    }
    expect(r.stderr).toBe('');
  });

  it('queries the last hour by default', async () => {
    const s = await service();
    const r = await run({ config: configFor(s), format: 'json' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    const q = s.transfersRequests[0]?.query;
    expect([q?.get('start'), q?.get('end')]).toEqual([String(NOW - 3_600_000), String(NOW)]);
  });

  it('takes --start/--end (no zone = UTC), --user, --instance and --file', async () => {
    const s = await service();
    const r = await run({
      config: configFor(s),
      format: 'json',
      start: '2024-04-30T00:00:00',
      end: '2024-04-30T06:00:00+03:00',
      user: 'BANK1',
      instance: 'PROD9',
      file: 'EXTRATO',
      succeeded: true,
    });
    expect(r.code).toBe(0);
    const q = s.transfersRequests[0]?.query;
    expect(q?.get('start')).toBe(String(Date.parse('2024-04-30T00:00:00Z')));
    expect(q?.get('end')).toBe(String(Date.parse('2024-04-30T03:00:00Z')));
    expect([q?.get('user'), q?.get('instance'), q?.get('filename'), q?.get('results')]).toEqual(['BANK1', 'PROD9', 'EXTRATO', '0']);
  });

  it('runs one query per configured instance, passing the source tags as given', async () => {
    const s = await service({
      records: [wireRecord({ INSTANCE: 'A', DATAHORA: '2024-05-01T11:00:00Z' }), wireRecord({ INSTANCE: 'B', DATAHORA: '2024-05-01T11:00:00Z' })],
    });
    const r = await run({ config: configFor(s, '    instances: [A, B]\n    tags: "x=1"'), format: 'json' });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ INSTANCE: string }>).map((x) => x.INSTANCE)).toEqual(['A', 'B']);
    expect(s.transfersRequests.map((q) => [q.query.get('instance'), q.query.get('tags')])).toEqual([
      ['A', 'x=1'],
      ['B', 'x=1'],
    ]);
  });

  it('writes CSV with a header and quotes commas, quotes and newlines', async () => {
    const s = await service({
      records: [wireRecord({ DATAHORA: '2024-05-01T11:00:00Z', MENSAGEM: 'disk "full", retry\nlater', NOMEARQUIVO: 'a,b.txt', PROCID: null })],
    });
    const r = await run({ config: configFor(s), format: 'csv' });
    expect(r.code).toBe(0);
    const [header, ...rest] = r.stdout.split('\r\n');
    expect(header?.split(',')).toHaveLength(19);
    expect(header?.startsWith('DATAHORA,INSTANCE,USUARIO,')).toBe(true);
    const row = rest.join('\r\n');
    expect(row).toContain('"disk ""full"", retry\nlater"');
    // NOMEARQUIVO quoted, then TAGS '' and PROCID null as empty fields, then REDE.
    expect(row).toContain(',"a,b.txt",,,SFTP,');
    expect(row.startsWith('2024-05-01T11:00:00.000Z,PROD1,BANK1,')).toBe(true);
  });

  it('prints only the header as CSV when nothing matched', async () => {
    const s = await service();
    const r = await run({ config: configFor(s), format: 'csv' });
    expect(r.stdout.split('\r\n').filter((l) => l !== '')).toHaveLength(1);
  });

  it('prints a table with times stated in UTC and control characters made visible', async () => {
    const s = await service({
      records: [wireRecord({ DATAHORA: '2024-05-01T11:05:06Z', NOMEARQUIVO: 'evil\u001b[31m.txt', MENSAGEM: 'line1\nline2' })],
    });
    const r = await run({ config: configFor(s) });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^TIME \(UTC\)\s+INSTANCE\s+USER\s+EVENT/);
    expect(lines[1]).toContain('2024-05-01 11:05:06');
    expect(lines[1]).toContain('evil\\x1b[31m.txt');
    expect(lines[1]).toContain('line1\\x0aline2');
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toContain('1 transfer from prod between 2024-05-01 11:00:00 UTC and 2024-05-01 12:00:00 UTC');
  });

  it('prints the table in the config’s display_timezone, as the pages do, or in --timezone', async () => {
    const s = await service({ records: [wireRecord({ DATAHORA: '2024-05-01T11:05:06Z' })] });
    const file = configFor(s);
    writeFileSync(file, `${readFileSync(file, 'utf8')}\ndisplay_timezone: America/Sao_Paulo\n`);
    const r = await run({ config: file, start: '2024-05-01T11:00:00Z', end: '2024-05-01T12:00:00Z' });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^TIME \(America\/Sao_Paulo\)\s+INSTANCE/);
    expect(lines[1]).toMatch(/^2024-05-01 08:05:06 -03:00 /);
    expect(r.stdout).toContain('between 2024-05-01 08:00:00 -03:00 (America/Sao_Paulo) and 2024-05-01 09:00:00 -03:00 (America/Sao_Paulo)');
    const utc = await run({ config: file, start: '2024-05-01T11:00:00Z', end: '2024-05-01T12:00:00Z', timezone: 'UTC' });
    expect(utc.stdout.split('\n')[1]).toMatch(/^2024-05-01 11:05:06 /);
    const bad = await run({ config: file, timezone: 'Mars/Olympus' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('timezone');
  });

  it('shows a progress line on stderr only when stderr is a TTY', async () => {
    const records = wireRecords(3, '2024-05-01T11:10:00Z');
    const s = await service({ records });
    const plain = await run({ config: configFor(s), format: 'ndjson' });
    expect(plain.stderr).toBe('');
    const tty = await run({ config: configFor(s), format: 'ndjson' }, true);
    expect(tty.stderr).toContain('fetched 3 transfers from prod');
    expect(tty.stdout).toBe(plain.stdout);
  });

  it('exits 1 with the reason when the query fails mid-way, leaving no partial JSON', async () => {
    const s = await service({
      records: wireRecords(4, '2024-05-01T11:10:00Z'),
      intercept: ({ request, res, transfersSeen }) => (request.kind === 'transfers' && transfersSeen === 1 ? json(res, 500, {}) : false),
    });
    const r = await run({ config: configFor(s), format: 'json' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('server_error');
    expect(r.stderr).not.toContain('query-pass-123');
  });

  it('exits 1 with unauthorized when the credentials are refused', async () => {
    const s = await service({ password: 'something-else' });
    const r = await run({ config: configFor(s), format: 'json' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unauthorized');
  });

  it.each([
    [{ failed: true, succeeded: true }, '--failed and --succeeded'],
    [{ since: '1h', start: '2024-05-01T00:00:00Z', end: '2024-05-01T01:00:00Z' }, 'either --since'],
    [{ start: '2024-05-01T00:00:00Z' }, 'go together'],
    [{ start: '2024-05-02', end: '2024-05-01' }, 'after --end'],
    [{ start: 'yesterday', end: '2024-05-01' }, 'not an ISO 8601'],
    [{ since: 'soon' }, '--since'],
    [{ event: 'upload' }, '--event'],
    [{ source: 'staging' }, 'no source named "staging"'],
    [{ format: 'xml' }, 'format'],
  ])('exits 2 on the usage error %j', async (opts, message) => {
    const s = await service();
    const r = await run({ config: configFor(s), ...opts });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(s.requests).toHaveLength(0);
  });

  it('exits 2 with FILE:LINE:COL problems for a bad config, and 2 for a missing one', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'sources:\n  - name: prod\n    base_url: nope\n');
    const bad = await run({ config: file });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml:\d+:\d+: /);
    const missing = await run({ config: join(dir, 'absent.yaml') });
    expect(missing.code).toBe(2);
  });
});

describe('csvField', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\r\nlines', '"two\r\nlines"'],
    [' padded', '" padded"'],
    [42, '42'],
    [-3, '-3'],
    [null, ''],
    // Spreadsheet formula injection from values of the service: shown as text, never run.
    ['=HYPERLINK("http://evil","x")', '"\'=HYPERLINK(""http://evil"",""x"")"'],
    ['+cmd|/C calc!A0', "'+cmd|/C calc!A0"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
  ])('%j → %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });
});
