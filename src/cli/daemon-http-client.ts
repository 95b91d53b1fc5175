import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ExtendOptions, Got } from 'got';
import { parse } from 'yaml';
import { z } from 'zod';
import type { Command } from 'commander';
import { TransferWatchError, errorMessage, errorMessageWithCode } from '../util/errors.js';

export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:9464';

/**
 * How a CLI command reaches a running daemon's HTTP API: its URL, and the same client settings as amtool's
 * `--http.config.file` (Prometheus common HTTP client config: basic auth, bearer token, TLS), or flags.
 */
export interface DaemonClientOptions {
  url: string;
  /** Per request, ms. */
  timeoutMs?: number;
  /** A Prometheus HTTP client config file (amtool's `--http.config.file`). */
  httpConfigFile?: string;
  user?: string;
  password?: string;
  /** CA bundle that signed the daemon's certificate (https). */
  caFile?: string;
}

const httpConfigSchema = z.strictObject({
  basic_auth: z.strictObject({ username: z.string(), password: z.string().optional(), password_file: z.string().optional() }).optional(),
  bearer_token: z.string().optional(),
  bearer_token_file: z.string().optional(),
  tls_config: z
    .strictObject({
      ca_file: z.string().optional(),
      cert_file: z.string().optional(),
      key_file: z.string().optional(),
      server_name: z.string().optional(),
      insecure_skip_verify: z.boolean().default(false),
    })
    .optional(),
  follow_redirects: z.boolean().optional(),
  enable_http2: z.boolean().optional(),
});

/** The daemon's answer to a request: a 4xx or 5xx is an answer too, not an error. */
export interface DaemonAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to the daemon. */
export type DaemonRequest = (url: string, options?: { method?: 'GET' | 'POST' | 'DELETE'; json?: unknown }) => Promise<DaemonAnswer>;

/** The resolved client: requests with auth and TLS, and the user it authenticates as (for `--author`). */
export interface DaemonClient {
  http: DaemonRequest;
  base: string;
  user: string | undefined;
}

export function daemonClient(opts: DaemonClientOptions): DaemonClient {
  let user = opts.user;
  let password = opts.password;
  let bearer: string | undefined;
  const tls: { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean } = {};
  if (opts.httpConfigFile) {
    const file = opts.httpConfigFile;
    const at = (p: string): string => (isAbsolute(p) ? p : resolve(dirname(file), p));
    const read = (p: string, what: string): string => {
      try {
        return readFileSync(at(p), 'utf8');
      } catch (err) {
        throw new TransferWatchError('client_config', `${file}: cannot read ${what} ${at(p)}: ${errorMessage(err)}`);
      }
    };
    let raw: unknown;
    try {
      raw = parse(readFileSync(file, 'utf8')) ?? {};
    } catch (err) {
      throw new TransferWatchError('client_config', `--http.config.file ${file}: ${errorMessage(err)}`);
    }
    const parsed = httpConfigSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TransferWatchError('client_config', `${file}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
    }
    const c = parsed.data;
    if (c.basic_auth) {
      user ??= c.basic_auth.username;
      password ??= c.basic_auth.password ?? (c.basic_auth.password_file ? read(c.basic_auth.password_file, 'password_file').replace(/\r?\n$/, '') : undefined);
    }
    bearer = c.bearer_token ?? (c.bearer_token_file ? read(c.bearer_token_file, 'bearer_token_file').trim() : undefined);
    if (c.tls_config?.ca_file) tls.ca = read(c.tls_config.ca_file, 'ca_file');
    if (c.tls_config?.cert_file) tls.cert = read(c.tls_config.cert_file, 'cert_file');
    if (c.tls_config?.key_file) tls.key = read(c.tls_config.key_file, 'key_file');
    if (c.tls_config?.server_name) throw new TransferWatchError('client_config', `${file}: tls_config.server_name is not supported; use the certificate's name in --url`);
    if (c.tls_config?.insecure_skip_verify) tls.rejectUnauthorized = false;
  }
  if (opts.caFile) {
    try {
      tls.ca = readFileSync(opts.caFile, 'utf8');
    } catch (err) {
      throw new TransferWatchError('client_config', `--ca-file ${opts.caFile}: ${errorMessage(err)}`);
    }
  }
  const headers: Record<string, string> = {};
  if (user !== undefined) headers.authorization = `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}`;
  else if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
  const settings: ExtendOptions = {
    headers,
    timeout: { request: opts.timeoutMs ?? 10_000 },
    retry: { limit: 0 },
    throwHttpErrors: false,
    followRedirect: false,
    https: {
      ...(tls.ca !== undefined ? { certificateAuthority: tls.ca } : {}),
      ...(tls.cert !== undefined ? { certificate: tls.cert } : {}),
      ...(tls.key !== undefined ? { key: tls.key } : {}),
      ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    },
  };
  // got is loaded by the first request, not with the CLI: the daemon runs from the same entry point and never
  // sends one (loading got and its packages there held about 8 MB of RSS for nothing).
  let client: Promise<Got> | undefined;
  const http: DaemonRequest = async (url, options = {}) => {
    client ??= import('got').then(({ got }) => got.extend(settings));
    const send = await client;
    const res = await send(url, { ...options, responseType: 'text' });
    return { statusCode: res.statusCode, headers: res.headers, body: res.body };
  };
  return { http, base: opts.url.replace(/\/+$/, ''), user };
}

/**
 * A request the daemon never answered: the message names the URL and the cause (refused, TLS, timeout), by the code
 * got's errors carry.
 */
export function unreachable(url: string, err: unknown): TransferWatchError {
  return new TransferWatchError('daemon_unreachable', `cannot reach the daemon at ${url} (${errorMessageWithCode(err)})`);
}

export interface ConnectionFlags {
  url: string;
  /** Commander keeps the dots of `--http.config.file` in the key. */
  'http.config.file'?: string;
  user?: string;
  caFile?: string;
}

/** The connection options every subcommand takes (amtool's names where amtool has one). */
export function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'base URL of the daemon (http:// or https://)', DEFAULT_DAEMON_URL)
    .option('--http.config.file <file>', "HTTP client config (amtool's format: basic_auth, bearer_token, tls_config)")
    .option('--user <name>', 'basic auth user name (password from $TRANSFER_WATCH_PASSWORD)')
    .option('--ca-file <file>', "CA bundle that signed the daemon's certificate");
}

export function connection(o: ConnectionFlags): DaemonClientOptions {
  const configFile = o['http.config.file'];
  const password = process.env.TRANSFER_WATCH_PASSWORD;
  return {
    url: o.url,
    ...(typeof configFile === 'string' ? { httpConfigFile: configFile } : {}),
    ...(o.user !== undefined ? { user: o.user } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(o.caFile !== undefined ? { caFile: o.caFile } : {}),
  };
}

/** The daemon answered a request with an error status (exit 1), as opposed to not answering at all (exit 2). */
export class DaemonRequestError extends TransferWatchError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super('daemon_request', message);
    this.name = 'DaemonRequestError';
  }
}

/**
 * One JSON request to the daemon: its body parsed (undefined when empty), or a DaemonRequestError naming the method,
 * the path (without its query) and the daemon's `error`, or an unreachable error.
 */
export async function callDaemon(opts: DaemonClientOptions, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const client = daemonClient(opts);
  let res;
  try {
    res = await client.http(`${client.base}${path}`, { method, ...(body === undefined ? {} : { json: body }) });
  } catch (err) {
    throw unreachable(client.base, err);
  }
  let parsed: unknown;
  try {
    parsed = res.body ? (JSON.parse(res.body) as unknown) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const error = z.object({ error: z.string() }).safeParse(parsed);
    throw new DaemonRequestError(`${method} ${client.base}${path.split('?')[0] ?? ''}: HTTP ${res.statusCode}: ${error.success ? error.data.error : res.body.slice(0, 200)}`, res.statusCode);
  }
  return parsed;
}
