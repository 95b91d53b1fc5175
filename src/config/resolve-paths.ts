import { isAbsolute, join } from 'node:path';
import type { Config } from './schema.js';

/**
 * Makes every file path in the config absolute, relative to the config file's folder (as Prometheus
 * does), so the daemon behaves the same whatever directory it is started from. Empty paths mean "not
 * set" and stay empty. Glob patterns in `rule_files` are joined textually, keeping their wildcards.
 */
export function resolveConfigPaths(config: Config, dir: string): Config {
  const abs = (p: string): string => (p === '' || isAbsolute(p) ? p : join(dir, p));
  return {
    ...config,
    sources: config.sources.map((s) => ({ ...s, tls: { ...s.tls, ca_file: abs(s.tls.ca_file) } })),
    state: { ...config.state, dir: abs(config.state.dir) },
    server: { ...config.server, ...(config.server.web_config_file !== undefined ? { web_config_file: abs(config.server.web_config_file) } : {}) },
    ...(config.ha ? { ha: { ...config.ha, redis: { ...config.ha.redis, tls: { ...config.ha.redis.tls, ca_file: abs(config.ha.redis.tls.ca_file) } } } } : {}),
    rule_files: config.rule_files.map(abs),
    templates: config.templates.map(abs),
    receivers: config.receivers.map((r) =>
      r.email ? { ...r, email: { ...r.email, smtp: { ...r.email.smtp, tls: { ...r.email.smtp.tls, ca_file: abs(r.email.smtp.tls.ca_file) } } } } : r,
    ),
  };
}
