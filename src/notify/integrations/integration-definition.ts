import type { z } from 'zod';
import type { Integration } from '../notification.js';
import type { IntegrationDeps } from './shared/integration-deps.js';

/**
 * Everything the rest of the program needs to know of one integration kind: the receiver schema, the config
 * secret fields, and how to build it. The registry gathers them; nothing else names an integration.
 */
export interface IntegrationDefinition<Kind extends string = string, Schema extends z.ZodType = z.ZodType> {
  /** Key under a receiver (`slack:`) and metric label `integration`. */
  readonly kind: Kind;
  readonly schema: Schema;
  /**
   * Paths of secret fields inside this integration's config. Each also accepts `<field>_file` at load, and
   * every value is redacted from logs, errors and API output. A path ending in `*` names a map whose values
   * are all secret (webhook headers); such a map has no `_file` form.
   */
  readonly secretPaths: readonly (readonly string[])[];
  create(config: z.output<Schema>, deps: IntegrationDeps): Integration;
}

/** Identity, for inference: keeps each definition's kind and schema types exact. */
export function defineIntegration<Kind extends string, Schema extends z.ZodType>(
  definition: IntegrationDefinition<Kind, Schema>,
): IntegrationDefinition<Kind, Schema> {
  return definition;
}
