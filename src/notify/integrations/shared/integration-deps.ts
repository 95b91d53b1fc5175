import type { Clock } from '../../../util/clock.js';
import type { Logger } from '../../../util/logger.js';
import type { TemplateSet } from '../../templates/template-set.js';

/** What every integration is given besides its own config. */
export interface IntegrationDeps {
  logger: Logger;
  /** User templates from `templates:` files; undefined when none are configured. */
  templates: TemplateSet | undefined;
  clock: Clock;
  /** Default per-request timeout for HTTP integrations without their own `timeout`, ms. */
  fetchTimeoutMs?: number;
  /** Where the console integration writes; process.stdout by default (tests pass a buffer). */
  stdout?: { write(chunk: string): unknown };
}
