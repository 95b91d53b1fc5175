import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { constants as cryptoConstants } from 'node:crypto';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../../base/config-error.js';
import { issuesToProblems } from '../../base/zod-problems.js';
import { YamlLocator } from '../../base/yaml-locator.js';
import { errorMessage } from '../../util/errors.js';

/**
 * The Prometheus exporter-toolkit web configuration (`web-config.yml`), the same file Prometheus and
 * Alertmanager take: TLS (with client certificates), basic auth users with bcrypt hashes, response headers.
 * Unknown keys are errors, reported at FILE:LINE:COL like the main config.
 */
const TLS_VERSIONS = ['TLS10', 'TLS11', 'TLS12', 'TLS13'] as const;
const CLIENT_AUTH = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] as const;

export const webConfigSchema = z.strictObject({
  tls_server_config: z
    .strictObject({
      cert_file: z.string().min(1),
      key_file: z.string().min(1),
      client_auth_type: z.enum(CLIENT_AUTH).default('NoClientCert'),
      client_ca_file: z.string().default(''),
      client_allowed_sans: z.array(z.string()).default([]),
      min_version: z.enum(TLS_VERSIONS).default('TLS12'),
      max_version: z.enum(TLS_VERSIONS).default('TLS13'),
      /** Go cipher suite names (TLS 1.2); mapped to OpenSSL names. TLS 1.3 suites are not configurable (as in Go). */
      cipher_suites: z.array(z.string()).default([]),
      curve_preferences: z.array(z.string()).default([]),
      prefer_server_cipher_suites: z.boolean().default(true),
    })
    .optional(),
  http_server_config: z
    .strictObject({
      /** Accepted for compatibility; this server speaks HTTP/1.1. */
      http2: z.boolean().default(true),
      headers: z.record(z.string(), z.string()).default({}),
    })
    .prefault({}),
  /** user → bcrypt hash. */
  basic_auth_users: z.record(z.string().min(1), z.string().regex(/^\$2[abxy]?\$\d\d\$/, 'must be a bcrypt hash ($2y$...)')).default({}),
});

export type WebConfig = z.output<typeof webConfigSchema>;

/** Go's names of the TLS 1.2 cipher suites exporter-toolkit accepts, and OpenSSL's for the same suites. */
const GO_TO_OPENSSL: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
};
const NODE_VERSIONS: Record<(typeof TLS_VERSIONS)[number], 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'> = {
  TLS10: 'TLSv1',
  TLS11: 'TLSv1.1',
  TLS12: 'TLSv1.2',
  TLS13: 'TLSv1.3',
};

/** A loaded web config: the parsed file, the TLS options read from its files, and whether it authenticates. */
export interface LoadedWebConfig {
  file: string;
  config: WebConfig;
  /** Options for `https.createServer` / `setSecureContext`; undefined without `tls_server_config`. */
  tls: (TlsOptions & SecureContextOptions) | undefined;
  /** Basic auth users, or verified client certificates: then writes are allowed from anywhere. */
  authenticates: boolean;
}

/** Read, validate and load a web config file; every problem at FILE:LINE:COL (a ConfigError), files named. */
export async function loadWebConfig(file: string): Promise<LoadedWebConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError([{ file, line: 1, col: 1, message: `server.web_config_file: cannot read ${file} (${codeOf(err)})` }]);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const locator = new YamlLocator(doc, lineCounter, file);
  if (doc.errors.length > 0) throw new ConfigError(doc.errors.map((e) => locator.problemAtOffset(e.pos[0], e.message.split('\n')[0] ?? e.message)));
  const data: unknown = doc.toJS() ?? {};
  const parsed = webConfigSchema.safeParse(data);
  if (!parsed.success) throw new ConfigError(issuesToProblems(parsed.error.issues, { schema: webConfigSchema, data, locator }).sort((a, b) => a.line - b.line || a.col - b.col));
  const config = parsed.data;
  const dir = dirname(resolve(file));
  const at = (p: string): string => (isAbsolute(p) ? p : resolve(dir, p));
  let tls: LoadedWebConfig['tls'];
  const t = config.tls_server_config;
  if (t) {
    const read = async (key: string, path: string): Promise<Buffer> => {
      try {
        return await readFile(at(path));
      } catch (err) {
        throw new ConfigError([locator.problemAt(['tls_server_config', key], `tls_server_config.${key}: cannot read ${at(path)} (${codeOf(err)})`)]);
      }
    };
    const unknown = t.cipher_suites.filter((c) => GO_TO_OPENSSL[c] === undefined);
    if (unknown.length > 0) {
      throw new ConfigError([locator.problemAt(['tls_server_config', 'cipher_suites'], `tls_server_config.cipher_suites: not supported: ${unknown.join(', ')} (known: ${Object.keys(GO_TO_OPENSSL).join(', ')})`)]);
    }
    const needsCa = t.client_auth_type === 'VerifyClientCertIfGiven' || t.client_auth_type === 'RequireAndVerifyClientCert';
    if (needsCa && t.client_ca_file === '') {
      throw new ConfigError([locator.problemAt(['tls_server_config', 'client_auth_type'], `tls_server_config.client_ca_file: required with client_auth_type ${t.client_auth_type}`)]);
    }
    tls = {
      cert: await read('cert_file', t.cert_file),
      key: await read('key_file', t.key_file),
      ...(t.client_ca_file ? { ca: await read('client_ca_file', t.client_ca_file) } : {}),
      requestCert: t.client_auth_type !== 'NoClientCert',
      // Node verifies a presented certificate against `ca` when rejectUnauthorized; the "Any" modes accept any.
      rejectUnauthorized: t.client_auth_type === 'RequireAndVerifyClientCert',
      minVersion: NODE_VERSIONS[t.min_version],
      maxVersion: NODE_VERSIONS[t.max_version],
      ...(t.cipher_suites.length > 0 ? { ciphers: t.cipher_suites.map((c) => GO_TO_OPENSSL[c]).join(':') } : {}),
      ...(t.curve_preferences.length > 0 ? { ecdhCurve: t.curve_preferences.map(curveName).join(':') } : {}),
      ...(t.prefer_server_cipher_suites ? { secureOptions: cryptoConstants.SSL_OP_CIPHER_SERVER_PREFERENCE } : {}),
    };
    try {
      // Fail at load (and keep the last good config on reload) rather than at the first handshake.
      const { createSecureContext } = await import('node:tls');
      createSecureContext(tls);
    } catch (err) {
      throw new ConfigError([locator.problemAt(['tls_server_config'], `tls_server_config: ${errorMessage(err)}`)]);
    }
  }
  const verifiesClients = t?.client_auth_type === 'RequireAndVerifyClientCert';
  return { file, config, tls, authenticates: Object.keys(config.basic_auth_users).length > 0 || verifiesClients };
}

function curveName(go: string): string {
  return ({ CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' } as Record<string, string>)[go] ?? go;
}

function codeOf(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : 'unreadable';
}
