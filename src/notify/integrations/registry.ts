import type { ReceiverConfig } from '../receiver-schema.js';
import type { Integration } from '../notification.js';
import type { IntegrationDefinition } from './integration-definition.js';
import { INTEGRATIONS, type IntegrationKind } from './integration-list.js';
import type { IntegrationDeps } from './shared/integration-deps.js';

export type { IntegrationDeps } from './shared/integration-deps.js';
export type { TemplateSet } from '../templates/template-set.js';

/** Every integration kind (metric label `integration`), in the order a receiver's integrations are built. */
export const INTEGRATION_KINDS: readonly IntegrationKind[] = INTEGRATIONS.map((d) => d.kind);

/** The integration kinds a receiver configures, in the same order as createIntegrations builds them. */
export function configuredIntegrationKinds(receiver: ReceiverConfig): string[] {
  return INTEGRATION_KINDS.filter((kind) => receiver[kind] !== undefined);
}

export function createIntegrations(receiver: ReceiverConfig, deps: IntegrationDeps): Integration[] {
  const integrations: Integration[] = [];
  for (const definition of INTEGRATIONS) {
    const config = receiver[definition.kind];
    if (config === undefined) continue;
    // The receiver schema validated `config` with this very definition's schema.
    const create = definition.create as IntegrationDefinition<string, never>['create'];
    integrations.push(create(config as never, deps));
  }
  return integrations;
}

/** Config paths (from the root) of secret fields that take a `<field>_file` form. `*` is any list index. */
export const RECEIVER_SECRET_FIELDS: readonly (readonly string[])[] = INTEGRATIONS.flatMap((d) =>
  d.secretPaths.filter((p) => p[p.length - 1] !== '*').map((p) => ['receivers', '*', d.kind, ...p]),
);

/** Config paths of maps whose every value is secret (no `_file` form). */
export const RECEIVER_SECRET_MAPS: readonly (readonly string[])[] = INTEGRATIONS.flatMap((d) =>
  d.secretPaths.filter((p) => p[p.length - 1] === '*').map((p) => ['receivers', '*', d.kind, ...p.slice(0, -1)]),
);

/** Every secret value of one receiver, for redacting texts (errors, the status page). */
export function receiverSecrets(receiver: ReceiverConfig): string[] {
  const out: string[] = [];
  for (const definition of INTEGRATIONS) {
    const config: unknown = receiver[definition.kind];
    for (const path of definition.secretPaths) collect(config, path, out);
  }
  return out;
}

function collect(value: unknown, path: readonly string[], out: string[]): void {
  if (typeof value !== 'object' || value === null) {
    if (path.length === 0 && typeof value === 'string' && value !== '') out.push(value);
    return;
  }
  const [head, ...rest] = path;
  if (head === undefined) return;
  const children: unknown[] = head === '*' ? Object.values(value) : [Reflect.get(value, head)];
  for (const child of children) collect(child, rest, out);
}
