import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  raw: string;
  headers: string;
  from: string;
  to: string[];
  secure: boolean;
  user: string;
}

/**
 * A real SMTP server (smtp-server) that offers STARTTLS with a throwaway certificate for 127.0.0.1 made by the
 * openssl CLI, and requires AUTH (refused before STARTTLS, as real servers do: proves the client upgraded).
 * Recipients `tempfail@…` get 451 and `reject@…` get 550, so tests can script a transient and a final refusal.
 */
export async function startSmtpCapture(dir: string, credentials: { username: string; password: string }): Promise<{
  port: number;
  caFile: string;
  mails: ReceivedMail[];
  close(): Promise<void>;
}> {
  const key = join(dir, 'smtp-key.pem');
  const cert = join(dir, 'smtp-cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    key: readFileSync(key),
    cert: readFileSync(cert),
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.username && auth.password === credentials.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('tempfail@')) callback(Object.assign(new Error('try later'), { responseCode: 451 }));
      else if (address.address.startsWith('reject@')) callback(Object.assign(new Error('no such user'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const end = raw.indexOf('\r\n\r\n');
        mails.push({
          raw,
          headers: end >= 0 ? raw.slice(0, end) : raw,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : '',
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, caFile: cert, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** An unfolded header's value (RFC 5322 folding is CRLF + whitespace), or undefined. */
export function headerValue(headers: string, name: string): string | undefined {
  const unfolded = headers.replace(/\r\n[ \t]+/g, ' ');
  const line = unfolded.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** The decoded bodies of a multipart mail's parts, by content type (quoted-printable and base64 understood). */
export function mimeParts(raw: string): Map<string, string> {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  const parts = new Map<string, string>();
  if (!boundary) return parts;
  for (const chunk of raw.split(`--${boundary}`).slice(1)) {
    const end = chunk.indexOf('\r\n\r\n');
    if (end < 0) continue;
    const head = chunk.slice(0, end);
    const type = /content-type:\s*([^;\r\n]+)/i.exec(head)?.[1]?.trim().toLowerCase();
    if (!type) continue;
    let body = chunk.slice(end + 4).replace(/\r\n$/, '');
    const encoding = /content-transfer-encoding:\s*(\S+)/i.exec(head)?.[1]?.toLowerCase();
    if (encoding === 'quoted-printable') {
      body = Buffer.from(
        body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
        'latin1',
      ).toString('utf8');
    } else if (encoding === 'base64') {
      body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    }
    parts.set(type, body);
  }
  return parts;
}
